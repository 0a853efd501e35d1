package payonce

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/payonce/payonce/internal/corekit"
)

// Provider is the contract between the core Client and a provider package
// (a55, coinepay): all the core must know about the API a typed client
// speaks, handed over once, to NewClient, by WithProvider. The core reads
// nothing else of a provider and names none of its errors; a typed client
// reads back what NewClient resolved with Client.Settings.
type Provider struct {
	// Name names the provider in errors and logs, e.g. "a55": printable,
	// at most 64 bytes.
	Name string
	// KeyRules are the provider's rules for Idempotency-Key values; the
	// zero KeyRules stands for DefaultKeyRules.
	KeyRules KeyRules
	// Codec decodes the provider's answers; nil: plain JSON and the
	// common error shapes.
	Codec Codec
	// Kinds are the provider's own error kinds (NewKind), beside the
	// core's: a journal stores a failure's kind by its name (KindName),
	// and an entry answered from the journal gets back the kind its name
	// gives.
	Kinds []error
	// FinalKinds are the kinds, the core's or the provider's own, of a
	// failure that is final for its idempotency key: no later attempt
	// with the same key and body can execute the operation, so the
	// journal records the operation as failed. Any other failure leaves
	// the entry pending. nil: DefaultFinalKinds. See FinalForKey.
	FinalKinds []error
	// ScopeIdentity names the credential the client acts for, e.g.
	// "a55:client-1": unless WithScope sets a scope, journal entries are
	// recorded under the identity and the origin of the base URL, so
	// that one credential on two environments never shares an entry. It
	// must never hold a secret.
	ScopeIdentity string
	// LegacyScopes are the scopes earlier payonce versions recorded this
	// credential's journal entries under: a client that finds entries
	// under one of them, unmapped, refuses to run rather than miss them
	// (see WithLegacyScopes). Scopes that could not have been stored
	// (empty, not printable, too long) are left out.
	LegacyScopes []string
}

// maxProviderName bounds Provider.Name.
const maxProviderName = 64

// WithProvider builds the client for the provider p. A name with a
// control character or longer than 64 bytes, key rules that contradict
// themselves, a Codec holding a nil pointer, a kind not made by NewKind
// or a scope identity that is not printable are refused with
// ErrInvalidConfig.
func WithProvider(p Provider) Option {
	return func(c *Client) error {
		if len(p.Name) > maxProviderName || !corekit.Printable(p.Name) {
			return fmt.Errorf("%w: provider name must be printable and at most %d bytes", ErrInvalidConfig, maxProviderName)
		}
		r := p.KeyRules
		if r == (KeyRules{}) {
			r = DefaultKeyRules()
		}
		if r.MaxLen < 0 || r.MinLen < 0 || (r.MaxLen > 0 && r.MinLen > r.MaxLen) || r.Window < 0 {
			return fmt.Errorf("%w: key rules", ErrInvalidConfig)
		}
		if p.Codec != nil && corekit.IsNil(p.Codec) {
			return fmt.Errorf("%w: nil codec", ErrInvalidConfig)
		}
		for _, k := range p.Kinds {
			if KindName(k) == "" {
				return fmt.Errorf("%w: provider kind %q has no name (NewKind)", ErrInvalidConfig, fmt.Sprint(k))
			}
		}
		if p.ScopeIdentity != "" && (len(p.ScopeIdentity) > corekit.MaxReferenceLen || !corekit.Printable(p.ScopeIdentity)) {
			return fmt.Errorf("%w: scope identity must be non-empty printable UTF-8 of at most %d bytes", ErrInvalidConfig, corekit.MaxReferenceLen)
		}
		var legacy []string
		for _, s := range p.LegacyScopes {
			if s != "" && len(s) <= corekit.MaxReferenceLen && corekit.Printable(s) {
				legacy = append(legacy, s)
			}
		}
		c.provider, c.rules, c.codec = p.Name, r, p.Codec
		if c.codec == nil {
			c.codec = jsonCodec{}
		}
		c.kinds, c.finalKinds = p.Kinds, p.FinalKinds
		c.ident.identity, c.ident.legacy = p.ScopeIdentity, legacy
		return nil
	}
}

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

// DefaultKeyRules are the rules of a client given none (Provider.KeyRules):
// a key of at most 255 bytes of printable ASCII, remembered for 24 hours,
// the window of both providers and of most idempotent APIs. A key older
// than its window is never sent: the server may have forgotten it and
// would run the operation again.
func DefaultKeyRules() KeyRules {
	return KeyRules{MaxLen: 255, Window: DefaultKeyWindow}
}

// Codec decodes a provider's answers (Provider.Codec). A Codec may also
// have a method AnswerFields() *redact.Fields, naming the fields of its
// answers the journal keeps as sent or masks; ResourceID(operation
// string, body []byte) string, naming the resource an answer made; and
// Advise(e *APIError) corekit.Advice, its word on retrying an error
// answer.
type Codec interface {
	// DecodeSuccess decodes a 2xx body into out (out may be nil). It may
	// return an *APIError when a 2xx envelope reports a failure; any other
	// error becomes ErrMalformedResponse.
	DecodeSuccess(status int, header http.Header, body []byte, out any) error
	// DecodeError fills e's Code, Message, RequestID, Details and, when it
	// knows better than the status and code tables, Kind.
	DecodeError(status int, header http.Header, body []byte, e *APIError)
}

// WithClock sets the clock the client measures keys' ages, signs and
// checks cards' expiry by: a test's clock (payoncetest.ClientClock), or
// an operator command's injected one.
func WithClock(now func() time.Time) Option {
	return func(c *Client) error {
		if now == nil {
			return fmt.Errorf("%w: nil clock", ErrInvalidConfig)
		}
		c.now = now
		return nil
	}
}

// WithSleep sets how the client waits before a retry: a test's, which
// moves its fake clock on by d (and records it) instead of sleeping, so
// that a wait of a minute costs nothing and is asserted exactly. It
// returns ctx's error when ctx ends first.
func WithSleep(sleep func(ctx context.Context, d time.Duration) error) Option {
	return func(c *Client) error {
		if sleep == nil {
			return fmt.Errorf("%w: nil sleep", ErrInvalidConfig)
		}
		c.sleep = sleep
		return nil
	}
}

// Settings are what NewClient resolved for a client: what a typed client
// reads back (Client.Settings) to build on the core.
type Settings struct {
	Provider   string           // the provider's name
	BaseURL    string           // the base URL, without a trailing slash
	HTTPClient *http.Client     // sends every attempt (and a typed client's token requests)
	Now        func() time.Time // the client's clock (WithClock)
	Scope      string           // the journal scope, "" for none
	Logger     *slog.Logger     // the client's redacting logger
	KeyRules   KeyRules         // the key rules in force
	Journal    Journal          // the client's journal (WithJournal), nil without one
}

// Settings returns what NewClient resolved for c.
func (c *Client) Settings() Settings {
	return Settings{Provider: c.provider, BaseURL: c.baseURL.String(), HTTPClient: c.httpClient, Now: c.now, Scope: c.scope,
		Logger: c.logger, KeyRules: c.rules, Journal: c.journal}
}

// RequestMatches reports whether a request (method, escaped path and the
// exact body bytes) is the one the journal entry e was recorded with, by
// its fingerprint.
func (c *Client) RequestMatches(e JournalEntry, method, path string, body []byte) bool {
	return c.requestMatches(e, method, path, body)
}

// CheckScopes makes the check a client makes before its first journal
// use (WithLegacyScopes): nil, or the kind of the refusal and the error
// that refuses the use.
func (c *Client) CheckScopes(ctx context.Context) (kind, err error) {
	if err := c.placeScopes(ctx); err != nil {
		return placementKind(err), err
	}
	return nil, nil
}
