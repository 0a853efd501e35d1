package payonce

import (
	"fmt"
	"strings"
	"time"

	"github.com/payonce/payonce/internal/corekit"
)

// HeaderIdempotencyKey is the request header that carries the key.
const HeaderIdempotencyKey = "Idempotency-Key"

// DefaultKeyWindow is how long both providers remember a key.
const DefaultKeyWindow = 24 * time.Hour

// KeyRules are a provider's rules for Idempotency-Key values. They are plain
// values: copy and adjust them for a deployment whose rules differ.
type KeyRules struct {
	Provider string        // used in error messages
	Required bool          // the server refuses a keyed endpoint without a key
	MinLen   int           // minimum length in bytes, 0 for none
	MaxLen   int           // maximum length in bytes, 0 for none
	Charset  string        // allowed characters; "" allows printable ASCII without spaces
	Window   time.Duration // how long the server remembers a key
}

// DefaultKeyRules are the rules of a client given none (WithKeyRules): a
// key of at most 255 bytes of printable ASCII, remembered for 24 hours,
// the window of both providers and of most idempotent APIs. A key older
// than its window is never sent: the server may have forgotten it and
// would run the operation again.
func DefaultKeyRules() KeyRules {
	return KeyRules{MaxLen: 255, Window: DefaultKeyWindow}
}

// KeyError reports a key that breaks its provider's rules. It unwraps to
// ErrKeyRequired, ErrKeyTooShort, ErrKeyTooLong or ErrKeyInvalidChars.
type KeyError struct {
	Provider string
	Rule     string // the rule broken, e.g. "at most 128 characters"
	Err      error
}

// Error names the sentinel, the provider and the rule broken, each once:
// "idempotency key too short: a55: at least 16 characters, got 5".
func (e *KeyError) Error() string {
	if e.Provider == "" {
		return fmt.Sprintf("%s: %s", e.Err, e.Rule)
	}
	return fmt.Sprintf("%s: %s: %s", e.Err, e.Provider, e.Rule)
}

// Unwrap returns the sentinel (ErrKeyRequired, ErrKeyTooShort,
// ErrKeyTooLong or ErrKeyInvalidChars) and ErrInvalidRequest: a key the
// client refuses is a refusal of input like any other.
func (e *KeyError) Unwrap() []error { return []error{e.Err, ErrInvalidRequest} }

// Validate checks key against the rules. It returns nil or a *KeyError.
// An empty key is an error only when Required is set.
func (r KeyRules) Validate(key string) error {
	if key == "" {
		if r.Required {
			return &KeyError{Provider: r.Provider, Rule: "this endpoint needs one", Err: ErrKeyRequired}
		}
		return nil
	}
	if r.MinLen > 0 && len(key) < r.MinLen {
		return &KeyError{Provider: r.Provider, Rule: fmt.Sprintf("at least %d characters, got %d", r.MinLen, len(key)), Err: ErrKeyTooShort}
	}
	if r.MaxLen > 0 && len(key) > r.MaxLen {
		return &KeyError{Provider: r.Provider, Rule: fmt.Sprintf("at most %d characters, got %d", r.MaxLen, len(key)), Err: ErrKeyTooLong}
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
			return &KeyError{Provider: r.Provider, Rule: fmt.Sprintf("%s (bad byte at position %d)", rule, i), Err: ErrKeyInvalidChars}
		}
	}
	return nil
}

// CallOption adjusts one operation.
type CallOption func(*callOptions)

type callOptions struct {
	key      Key           // WithKey
	keySet   bool          // WithKey was given, maybe with the zero Key
	keyClash bool          // two WithKey options name different keys
	keyMade  bool          // set by resolveKey: the call named no key, one was made now
	noKey    bool          // WithoutKey
	policy   *RetryPolicy  // WithCallRetryPolicy
	timeout  time.Duration // WithCallTimeout
	headers  []string      // WithHeader: canonical name, value, name, value...
	err      error         // the first invalid option

	reference    string // WithReference
	hasReference bool
	leaseOwner   string // WithLeaseOwner
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

// apply runs opts on o.
func (o *callOptions) apply(opts []CallOption) {
	for _, opt := range opts {
		if opt != nil {
			opt(o)
		}
	}
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
		return Key{}, &KeyError{Rule: "WithKey was given the zero Key", Err: ErrKeyRequired}
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
