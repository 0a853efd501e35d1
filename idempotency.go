package payonce

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
)

// HeaderIdempotencyKey is the request header that carries the key.
const HeaderIdempotencyKey = "Idempotency-Key"

// HeaderReplay marks an answer that is a copy of a stored response
// (Coinepay sends "X-Idempotent-Replay: true").
const HeaderReplay = "X-Idempotent-Replay"

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

// NewKey returns a fresh random UUID v4 key. It never panics: a failure of
// the system's random source is returned as an error.
func NewKey() (string, error) {
	u, err := uuid.NewRandom()
	if err != nil {
		return "", fmt.Errorf("payonce: generate idempotency key: %w", err)
	}
	return u.String(), nil
}

// TaskKey builds a deterministic key for a job that a queue may retry in a
// new process: TaskKey("openapi:apply", "42") is "openapi:apply:42". Every
// retry of the task then sends the same key, as the Coinepay document's
// async task pattern recommends. The caller must make taskID unique per
// business operation and valid for the provider's charset.
func TaskKey(prefix, taskID string) string {
	if prefix == "" {
		return taskID
	}
	return prefix + ":" + taskID
}

type keyCtxKey struct{}

type boundKey struct {
	key     string
	created time.Time
	err     error // a binding that must refuse the operation (WithTaskKey without a job time)
}

// WithKey binds an idempotency key to ctx. Every operation run with the
// returned context (and every retry of it) sends this key, so a task queue
// that retries a job can bind the job's key once. A keyed operation run
// under an empty bound key is refused (ErrKeyRequired) before anything is
// sent.
func WithKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, keyCtxKey{}, boundKey{key: key})
}

// WithKeyCreatedAt binds key like WithKey and records when the operation
// first used it, so the key-age guard can refuse an attempt that the server
// would no longer recognise (24 h later it would charge again).
func WithKeyCreatedAt(ctx context.Context, key string, created time.Time) context.Context {
	return context.WithValue(ctx, keyCtxKey{}, boundKey{key: key, created: created})
}

// KeyFromContext returns the key bound to ctx and when it was created (zero
// when unknown).
func KeyFromContext(ctx context.Context) (key string, created time.Time, ok bool) {
	b, ok := ctx.Value(keyCtxKey{}).(boundKey)
	return b.key, b.created, ok && b.key != ""
}

// ResumeContext binds the key (and its age) of the failed operation err to
// ctx, so running the same operation again with the returned context resumes
// it instead of starting a second one. When err carries no key, ctx is
// returned unchanged.
//
//	ch, err := client.Charges.Create(ctx, req)
//	if payonce.IsTemporary(err) {
//		ch, err = client.Charges.Create(payonce.ResumeContext(ctx, err), req)
//	}
func ResumeContext(ctx context.Context, err error) context.Context {
	var e *APIError
	if !errors.As(err, &e) || e.Key == "" {
		return ctx
	}
	return WithKeyCreatedAt(ctx, e.Key, e.KeyCreated)
}

// CallOption adjusts one operation.
type CallOption func(*callOptions)

type callOptions struct {
	key     string
	keySet  bool // WithIdempotencyKey was given, maybe with ""
	created time.Time
	noKey   bool
	policy  *RetryPolicy  // WithCallRetryPolicy
	timeout time.Duration // WithCallTimeout
	headers []string      // WithHeader: canonical name, value, name, value...
	err     error         // the first invalid option

	reference    string // WithReference
	hasReference bool
	tokenErr     error // WithResumeToken with a bad token
	tokenKey     string
	tokenSet     bool   // WithResumeToken was given
	tokenClash   bool   // two tokens with different keys
	leaseOwner   string // WithLeaseOwner

	origin keyOrigin // set by resolveKey: where the key's creation time came from
}

// keyOrigin says how resolveKey learned the key's creation time.
type keyOrigin int

const (
	keyAgeGiven keyOrigin = iota // a resume token, WithKeyCreated, the context: the time given
	keyAgeNew                    // a key made by this call (NewKey): created now
	keyAgeBare                   // a key given without its creation time: now, unless the client remembers it
)

// WithIdempotencyKey sets the key of one operation; it wins over a key bound
// to the context. With WithResumeToken it must name the token's key, else
// the call is refused (ErrInvalidRequest) before anything is sent. An empty key is refused (ErrKeyRequired) before anything
// is sent, never replaced by a random one. When the context carries the
// same key (ResumeContext, WithTaskKey), the key keeps the age recorded
// there.
func WithIdempotencyKey(key string) CallOption {
	return func(o *callOptions) { o.key, o.keySet = key, true }
}

// WithKeyCreated tells the key-age guard when the operation's key was first
// used (for a key restored from storage).
func WithKeyCreated(t time.Time) CallOption {
	return func(o *callOptions) { o.created = t }
}

// WithoutKey sends a keyed operation without an Idempotency-Key. A55 then
// creates a new resource on every attempt (so the client makes only one);
// Coinepay refuses it with ErrKeyRequired before anything is sent.
func WithoutKey() CallOption {
	return func(o *callOptions) { o.noKey = true }
}

// resolveKey picks the operation's key: per-call option, then context, then
// a new UUID v4. It is called exactly once per operation, before the first
// attempt.
func resolveKey(ctx context.Context, opts []CallOption, now time.Time) (key string, created time.Time, err error) {
	var o callOptions
	o.apply(opts)
	return o.resolveKey(ctx, now)
}

// checkToken refuses a resume token given with another source naming a
// different key (WithIdempotencyKey, a second token, the context's key) or
// with WithoutKey: which one should win is the caller's bug, not a rule to
// guess. The same key from two sources is fine.
func (o *callOptions) checkToken(ctx context.Context) error {
	const field = "idempotency key"
	switch {
	case o.tokenClash:
		return invalid(ErrInvalidRequest, field, "two WithResumeToken options name different keys")
	case o.noKey:
		return invalid(ErrInvalidRequest, field, "WithoutKey and WithResumeToken contradict each other")
	case o.keySet && o.key != o.tokenKey:
		return invalid(ErrInvalidRequest, field, "WithResumeToken and WithIdempotencyKey name different keys")
	}
	if k, _, ok := KeyFromContext(ctx); ok && k != o.tokenKey {
		return invalid(ErrInvalidRequest, field, "WithResumeToken and the context's key (WithKey, WithTaskKey, ResumeContext) name different keys")
	}
	return nil
}

// apply runs opts on o.
func (o *callOptions) apply(opts []CallOption) {
	for _, opt := range opts {
		if opt != nil {
			opt(o)
		}
	}
}

// resolveKey picks the key from the options o holds, then ctx, then a new
// UUID v4.
func (o *callOptions) resolveKey(ctx context.Context, now time.Time) (key string, created time.Time, err error) {
	if o.tokenErr != nil {
		return "", time.Time{}, o.tokenErr
	}
	if o.noKey && o.keySet {
		return "", time.Time{}, invalid(ErrInvalidRequest, "", "WithoutKey and WithIdempotencyKey contradict each other")
	}
	if o.tokenSet {
		if err := o.checkToken(ctx); err != nil {
			return "", time.Time{}, err
		}
		o.key, o.keySet = o.tokenKey, true
	}
	if o.noKey {
		return "", now, nil
	}
	// An empty key given on purpose is a missing ID, not a request for a
	// fresh one: a random key would make every redelivery a new operation.
	if o.keySet && o.key == "" {
		return "", time.Time{}, &KeyError{Rule: "WithIdempotencyKey was given an empty key", Err: ErrKeyRequired}
	}
	if b, ok := ctx.Value(keyCtxKey{}).(boundKey); ok && b.key == "" && !o.keySet {
		return "", time.Time{}, &KeyError{Rule: "the context binds an empty key (WithKey)", Err: ErrKeyRequired}
	}
	key, created = o.key, o.created
	if key == "" {
		if b, _ := ctx.Value(keyCtxKey{}).(boundKey); b.err != nil {
			return "", time.Time{}, b.err
		}
	}
	// The context's key, and its age, apply when no other key is given
	// per call, and also when the same one is: a job that passes its own
	// key on every run and resumes with ResumeContext keeps the key's age.
	if k, c, ok := KeyFromContext(ctx); ok && (key == "" || key == k) {
		key = k
		if created.IsZero() {
			created = c
		}
	}
	o.origin = keyAgeGiven
	if key == "" {
		if key, err = NewKey(); err != nil {
			return "", time.Time{}, err
		}
		o.origin = keyAgeNew
	} else if created.IsZero() {
		o.origin = keyAgeBare
	}
	// A time a little ahead (a clock slightly fast) is the present; one
	// further ahead is kept, and refused before sending
	// (ErrKeyCreatedInFuture): it would make the key look younger.
	if created.IsZero() || (created.After(now) && !created.After(now.Add(KeyClockTolerance))) {
		created = now
	}
	return key, created, nil
}
