package payonce

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
)

// Key is an operation's Idempotency-Key together with the time it was
// first used: the one value that names an operation, in this process or
// any other, and lets the key-age guard refuse an attempt past the
// provider's window (ErrKeyExpired). Its fields are unexported: a Key is
// built by NewKey (from the operation's business parts and its creation
// time), read back from a result (Meta.Key) or an error (KeyOf), or
// decoded from its text form (ParseKey, UnmarshalText). The zero Key names
// no operation: WithKey refuses it.
type Key struct {
	id      string
	created time.Time
}

// Bounds of the keys NewKey builds: within both providers' rules (A55: 16
// to 128 characters; Coinepay: at most 128 URL-safe characters).
const (
	keyMinLen = 16
	keyMaxLen = 128
	// keyHashLen is the length of the hash suffix: 32 hex digits, the
	// first 128 bits of SHA-256 of the joined parts.
	keyHashLen = 32
)

// NewKey builds the key of one business operation from the parts that
// name it and the time the operation was first asked for (an order's or a
// job's creation time), so that every run of the operation (a retry in a
// new process, a job run again by its queue) sends the same key and ages
// it from the same moment:
//
//	key, err := payonce.NewKey(job.CreatedAt, "openapi:apply", job.ID)
//	if err != nil {
//		return err // an empty part or a zero time: no key could be made
//	}
//	card, err := client.Cards.Apply(ctx, req, payonce.WithKey(key))
//
// A queue that redelivers the job after the provider's 24 h window then
// gets ErrKeyExpired, nothing sent, never a second operation under a new
// key.
//
// The key's value (Key.String) is valid for both providers' rules (A55's
// and Coinepay's: 16 to 128 characters of A-Z a-z 0-9 - . _ ~ :),
// and:
//
//   - It is the parts joined with ':' when that already fits: at least 16
//     and at most 128 characters, only A-Z a-z 0-9 - . _ and ':' (no '~').
//     NewKey(t, "openapi:apply", taskID) is then "openapi:apply:"+taskID.
//   - Otherwise it is a readable form of the joined parts (each character
//     outside that set replaced by '_', cut to fit) followed by '~' and 32
//     hex digits of SHA-256 of the joined parts: "order:1" becomes
//     "order:1~" + 32 hex digits; "pedido:ação" becomes "pedido:a__o~" + 32
//     hex digits.
//
// The same parts always give the same value, and so do parts whose join
// with ':' is the same (("a:b", "c") and ("a", "b:c")); parts whose joins
// differ give different values (a value of the first form has no '~', one
// of the second ends in a hash of the exact joined bytes).
//
// Parts name the operation, not its payload: two recharges of the same
// amount on the same card are two operations and need parts that differ
// (a recharge ID), not the amount. A part that is empty or only white
// space is refused with a *ValidationError wrapping ErrKeyRequired: a missing
// order ID must not give every order one key. A zero created is refused
// with a *ValidationError (ErrInvalidRequest): a key without its age would
// look new on every redelivery. A created ahead of the clock is kept, and
// the call refused before sending (ErrKeyCreatedInFuture).
func NewKey(created time.Time, parts ...string) (Key, error) {
	if created.IsZero() {
		return Key{}, invalid(ErrInvalidRequest, "key creation time", "zero: a key needs the time its operation was first asked for")
	}
	id, err := keyID(parts)
	if err != nil {
		return Key{}, err
	}
	return Key{id: id, created: keyTime(created)}, nil
}

// randomKey is the key of a call that names none: a random UUID v4
// created now. A failure of the system's random source is an error.
func randomKey(now time.Time) (Key, error) {
	u, err := uuid.NewRandom()
	if err != nil {
		return Key{}, fmt.Errorf("payonce: generate idempotency key: %w", err)
	}
	return Key{id: u.String(), created: keyTime(now)}, nil
}

// keyTime is t as a key holds it: in UTC, to the microsecond, the
// precision every journal backend stores, so that a key read back from a
// journal is the key that was written.
func keyTime(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// Created is when the key's operation was first asked for (zero for the
// zero Key).
func (k Key) Created() time.Time { return k.created }

// IsZero reports the zero Key, which names no operation.
func (k Key) IsZero() bool { return k.id == "" }

// String is the key's value, the Idempotency-Key header sent ("" for the
// zero Key), for a log line or a dashboard search. It drops the creation time: store a Key by its text form
// (MarshalText), which ParseKey reads back.
func (k Key) String() string { return k.id }

// GoString is the %#v form: the key's value and its creation time
// (RFC 3339), "payonce.Key{}" for the zero Key.
func (k Key) GoString() string {
	if k.IsZero() {
		return "payonce.Key{}"
	}
	return fmt.Sprintf("payonce.Key{ID:%q, Created:%q}", k.id, k.created.Format(time.RFC3339Nano))
}

// KeyOf returns the key of the operation that returned err, with its
// creation time, or the zero Key when err carries none. Pass it back with
// WithKey, now or (stored by its text form) in any process, to resume
// the same operation:
//
//	ch, err := client.Charges.Create(ctx, req)
//	if payonce.IsResumable(err) {
//		ch, err = client.Charges.Create(ctx, req, payonce.WithKey(payonce.KeyOf(err)))
//	}
func KeyOf(err error) Key {
	var e *APIError
	if errors.As(err, &e) {
		return e.Key
	}
	return Key{}
}

// keyID joins parts into a key value that fits both providers (see NewKey).
func keyID(parts []string) (string, error) {
	if len(parts) == 0 {
		return "", &ValidationError{Reason: "a key needs at least one part", Err: ErrKeyRequired}
	}
	for i, p := range parts {
		if strings.TrimSpace(p) == "" {
			return "", &ValidationError{Reason: fmt.Sprintf("part %d of the key is empty", i+1), Err: ErrKeyRequired}
		}
	}
	joined := strings.Join(parts, ":")
	if len(joined) >= keyMinLen && len(joined) <= keyMaxLen && plainKey(joined) {
		return joined, nil
	}
	sum := sha256.Sum256([]byte(joined))
	var b strings.Builder
	b.Grow(keyMaxLen)
	room := keyMaxLen - 1 - keyHashLen
	for _, r := range joined {
		if b.Len() == room {
			break
		}
		if r < utf8.RuneSelf && plainKeyByte(byte(r)) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	b.WriteByte('~')
	b.WriteString(hex.EncodeToString(sum[:keyHashLen/2]))
	return b.String(), nil
}

// plainKey reports whether s uses only the characters a key of the plain
// form may hold: the key charset without '~', which marks a hash suffix.
func plainKey(s string) bool {
	for i := 0; i < len(s); i++ {
		if !plainKeyByte(s[i]) {
			return false
		}
	}
	return true
}

// portableKeyChars are the bytes both providers accept in a key (the
// Coinepay charset, coinepay.KeyCharset).
const portableKeyChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:"

func plainKeyByte(c byte) bool {
	return c != '~' && strings.IndexByte(portableKeyChars, c) >= 0
}
