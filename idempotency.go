package payonce

import (
	"fmt"
	"strings"
	"time"

	"github.com/payonce/payonce/internal/corekit"
)

// validateKey checks key against the rules r. It returns nil or a
// *ValidationError wrapping ErrKeyRequired, ErrKeyTooShort, ErrKeyTooLong
// or ErrKeyInvalidChars, and ErrInvalidRequest: a key the client refuses
// is a refusal of input like any other. An empty key is an error only when
// Required is set.
func validateKey(r KeyRules, key string) error {
	if key == "" {
		if r.Required {
			return keyInvalid(r, ErrKeyRequired, "this endpoint needs one")
		}
		return nil
	}
	if r.MinLen > 0 && len(key) < r.MinLen {
		return keyInvalid(r, ErrKeyTooShort, fmt.Sprintf("at least %d characters, got %d", r.MinLen, len(key)))
	}
	if r.MaxLen > 0 && len(key) > r.MaxLen {
		return keyInvalid(r, ErrKeyTooLong, fmt.Sprintf("at most %d characters, got %d", r.MaxLen, len(key)))
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		ok := c > 0x20 && c < 0x7f
		if ok && r.Charset != "" {
			ok = strings.IndexByte(r.Charset, c) >= 0
		}
		if !ok {
			rule := "printable ASCII without spaces"
			if r.Charset != "" {
				rule = "only A-Z a-z 0-9 and " + strings.TrimLeft(r.Charset, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
			}
			return keyInvalid(r, ErrKeyInvalidChars, fmt.Sprintf("%s (bad byte at position %d)", rule, i))
		}
	}
	return nil
}

// keyInvalid is the refusal of a key by the rules r: "idempotency key too
// short: a55: at least 16 characters, got 5".
func keyInvalid(r KeyRules, sentinel error, rule string) *ValidationError {
	if r.Provider != "" {
		rule = r.Provider + ": " + rule
	}
	return &ValidationError{Reason: rule, Err: sentinel}
}

// WithKey runs one operation under k: its value is the Idempotency-Key of
// every attempt, and its creation time is the key's age for the key-age
// guard, in this process or any other. The zero Key is refused
// (ErrKeyRequired) before anything is sent, never replaced by a random
// one: a missing key would make every redelivery a new operation. So are
// a Key without its creation time (the key of a journal entry reserved
// without KeyCreated), two WithKey options naming different keys, and
// WithKey with WithoutKey (ErrInvalidRequest). A call given no key gets a
// random UUID v4 created now, which KeyOf(err) and Meta.Key return to
// resume it.
func WithKey(k Key) CallOption {
	return func(o *callOptions) {
		if o.keySet && (o.key.id != k.id || !o.key.created.Equal(k.created)) {
			o.keyClash = true
		}
		o.key, o.keySet = k, true
	}
}

// WithoutKey sends a keyed operation without an Idempotency-Key. A55 then
// creates a new resource on every attempt (so the client makes only one);
// Coinepay refuses it with ErrKeyRequired before anything is sent.
func WithoutKey() CallOption {
	return func(o *callOptions) { o.noKey = true }
}

// resolveKey picks the operation's key: the call's WithKey, none with
// WithoutKey, else a random one created now. It is called exactly once
// per operation, before the first attempt. A creation time a little ahead
// of now (a clock slightly fast) is the present; one further ahead is
// kept, and refused before sending (ErrKeyCreatedInFuture): it would make
// the key look younger.
func (o *callOptions) resolveKey(now time.Time) (Key, error) {
	const field = "idempotency key"
	switch {
	case o.keyClash:
		return Key{}, invalid(ErrInvalidRequest, field, "two WithKey options name different keys")
	case o.noKey && o.keySet:
		return Key{}, invalid(ErrInvalidRequest, field, "WithoutKey and WithKey contradict each other")
	case o.noKey:
		return Key{}, nil
	case !o.keySet:
		o.keyMade = true
		return randomKey(now)
	case o.key.IsZero():
		return Key{}, &ValidationError{Reason: "WithKey was given the zero Key", Err: ErrKeyRequired}
	case o.key.created.IsZero():
		return Key{}, invalid(ErrInvalidRequest, field, "the key has no creation time: a key needs the time its operation was first asked for")
	}
	return o.key.within(now), nil
}

// within is k with a creation time a little ahead of now (within
// a minute: a clock slightly fast) taken as now.
func (k Key) within(now time.Time) Key {
	if k.created.After(now) && !k.created.After(now.Add(corekit.KeyClockTolerance)) {
		k.created = keyTime(now)
	}
	return k
}

// keyValue is the operation's key as a Key (the zero Key without one).
func (op *operation) keyValue() Key {
	if op.key == "" {
		return Key{}
	}
	return Key{id: op.key, created: keyTime(op.created)}
}
