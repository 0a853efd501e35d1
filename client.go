package payonce

import (
	"github.com/payonce/payonce/internal/corekit"
	"github.com/payonce/payonce/internal/loopback"
	"github.com/payonce/payonce/redact"

	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"math"

	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/go-retryablehttp"
)

// Client is the core both typed clients (a55, coinepay) embed. It runs one
// business operation per call of Do: resolve and check the key once,
// serialize the body once, then the retry loop, in which every attempt is
// signed afresh, and finally decode the answer or map it to an *APIError.
// A Client is safe for concurrent use.
type Client struct {
	baseURL       *url.URL
	httpClient    *http.Client
	policy        RetryPolicy
	budget        *RetryBudget
	rules         KeyRules
	signer        Signer
	codec         Codec
	kinds         []error        // the provider's own kinds (Provider.Kinds)
	finalKinds    []error        // the kinds final for a key (Provider.FinalKinds); nil: DefaultFinalKinds
	fields        *redact.Fields // what the codec knows of its answers' fields (fieldsCodec), nil for nothing
	limiter       limiter
	logger        *slog.Logger
	secrets       *redact.Secrets // the signer's own secrets (redact.SecretHolder), nil for none
	userAgent     string
	provider      string
	now           func() time.Time
	sleep         func(context.Context, time.Duration) error // WithSleep; nil: a timer
	allowInsecure bool
	explicitKeys  bool                  // WithExplicitKeys
	journal       Journal               // WithJournal
	scope         string                // WithScope, or resolved from WithScopeIdentity (scope.go)
	observer      *Observer             // WithObserver (observer.go); nil: no hooks
	routes        *routeTable           // the routes the client derived, bounded
	refs          routeTable            // the reference templates observers saw, bounded
	jclock        *journalClock         // the journal's clock, as last read
	journalLease  time.Duration         // WithJournalLease; 0: from the policy
	leaseOwner    string                // the journal lease owner of the client's runs
	held          *heldEntries          // the entries the client's runs hold
	retry         *retryablehttp.Client // the attempt loop of every operation (newRetryClient)

	ident journalIdentity // WithScope, WithScopeIdentity, WithFingerprintKey (scope.go)
}

// limiter paces attempts client-side (WithLimiter).
type limiter = interface {
	Wait(ctx context.Context) error
}

// Option configures a Client. Options validate their input and NewClient
// returns the first error, wrapped in ErrInvalidConfig.
type Option func(*Client) error

// option is f, which sets the client under construction, as an Option.
func option(f func(*Client) error) Option { return f }

// WithBaseURL sets the API's base URL. Plain http:// is refused unless the
// host is loopback or WithInsecureHTTP is given.
func WithBaseURL(raw string) Option {
	return option(func(c *Client) error {
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return fmt.Errorf("%w: base URL must be an absolute http(s) URL", ErrInvalidConfig)
		}
		if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			return fmt.Errorf("%w: base URL must not carry a query, fragment or user info", ErrInvalidConfig)
		}
		u.Path = strings.TrimRight(u.Path, "/")
		u.RawPath = ""
		c.baseURL = u
		return nil
	})
}

// WithHTTPClient sets the HTTP client whose transport sends every attempt.
func WithHTTPClient(hc *http.Client) Option {
	return option(func(c *Client) error {
		if hc == nil {
			return fmt.Errorf("%w: nil http.Client", ErrInvalidConfig)
		}
		c.httpClient = hc
		return nil
	})
}

// WithRetryPolicy sets how operations are retried.
func WithRetryPolicy(p RetryPolicy) Option {
	return option(func(c *Client) error {
		if err := p.validate(); err != nil {
			return err
		}
		c.policy = p
		return nil
	})
}

// WithRetryBudget shares a retry budget (nil disables the budget).
func WithRetryBudget(b *RetryBudget) Option {
	return option(func(c *Client) error { c.budget = b; return nil })
}

// WithSigner sets the signer called for every attempt.
func WithSigner(s Signer) Option {
	return option(func(c *Client) error {
		if corekit.IsNil(s) {
			return fmt.Errorf("%w: nil signer", ErrInvalidConfig)
		}
		c.signer = s
		return nil
	})
}

// WithLimiter paces attempts: each waits on l.Wait before it is signed
// and sent. A *rate.Limiter from golang.org/x/time is one (for example
// rate.NewLimiter for A55's documented 100 requests a minute).
func WithLimiter(l interface {
	Wait(ctx context.Context) error
}) Option {
	return option(func(c *Client) error {
		if corekit.IsNil(l) {
			return fmt.Errorf("%w: nil limiter", ErrInvalidConfig)
		}
		c.limiter = l
		return nil
	})
}

// WithLogger logs through l at debug level (attempts, retries, outcomes).
// Every record passes through a redact.Handler first. Without it the
// client is silent.
func WithLogger(l *slog.Logger) Option {
	return option(func(c *Client) error {
		if l == nil {
			return fmt.Errorf("%w: nil logger", ErrInvalidConfig)
		}
		c.logger = slog.New(redact.NewHandler(l.Handler()))
		return nil
	})
}

// maxUserAgent bounds WithUserAgent.
const maxUserAgent = 1024

// WithUserAgent sets the User-Agent header. One with a control character
// (it would forge a header) or longer than 1024 bytes is refused
// (ErrInvalidConfig).
func WithUserAgent(ua string) Option {
	return option(func(c *Client) error {
		if len(ua) > maxUserAgent || !corekit.Printable(ua) {
			return fmt.Errorf("%w: user agent must be printable and at most %d bytes", ErrInvalidConfig, maxUserAgent)
		}
		c.userAgent = ua
		return nil
	})
}

// WithInsecureHTTP allows a plain http:// base URL to a non-loopback host.
// Credentials then cross the network in clear text: use it only inside a
// trusted network.
func WithInsecureHTTP() Option {
	return option(func(c *Client) error { c.allowInsecure = true; return nil })
}

// defaultUserAgent is the default User-Agent.
const defaultUserAgent = "payonce-go/0.1"

// NewClient returns a core client. Typed clients pass their defaults first
// and the caller's options after them.
func NewClient(opts ...Option) (*Client, error) {
	c := &Client{
		policy:     DefaultRetryPolicy(),
		budget:     NewRetryBudget(defaultRetryBudget),
		logger:     slog.New(slog.DiscardHandler),
		userAgent:  defaultUserAgent,
		now:        time.Now,
		routes:     &routeTable{},
		jclock:     &journalClock{},
		leaseOwner: "client:" + uuid.NewString(),
		held:       &heldEntries{},
		rules:      DefaultKeyRules(),
		codec:      jsonCodec{},
	}
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(c); err != nil {
			return nil, err
		}
	}
	if fc, ok := c.codec.(fieldsCodec); ok {
		c.fields = fc.AnswerFields()
	}
	if c.baseURL == nil {
		return nil, fmt.Errorf("%w: a base URL is required", ErrInvalidConfig)
	}
	if h, ok := c.signer.(redact.SecretHolder); ok && !corekit.IsNil(h) {
		c.secrets = redact.NewSecrets(h)
		if rh, ok := c.logger.Handler().(*redact.Handler); ok {
			c.logger = slog.New(rh.WithSecrets(c.secrets))
		}
	}
	if c.baseURL.Scheme == "http" && !c.allowInsecure && !loopback.Host(c.baseURL.Hostname()) {
		return nil, fmt.Errorf("%w: plain http:// to non-loopback host %q (use https, or WithInsecureHTTP)", ErrInvalidConfig, c.baseURL.Hostname())
	}
	if err := c.resolveScope(); err != nil {
		return nil, err
	}
	if c.httpClient == nil {
		c.httpClient = corekit.DefaultHTTPClient()
	}
	if c.policy.AttemptTimeout == 0 && c.httpClient.Timeout <= 0 {
		// An attempt must not block until the caller's context ends.
		return nil, fmt.Errorf("%w: an attempt needs a timeout: set RetryPolicy.AttemptTimeout or the http.Client's Timeout", ErrInvalidConfig)
	}
	c.retry = c.newRetryClient()
	return c, nil
}

// newRetryClient builds the client's one go-retryablehttp loop. Each
// request carries its operation in its context (operationFrom), which
// every hook reaches it by: the http.Client's transport runs an attempt
// (attemptTransport), CheckRetry decides after it (checkRetry), the
// ErrorHandler hands the last answer back (passThrough), PrepareRetry
// gives a retry its own headers (prepareRetry). The operation's policy
// bounds its attempts, so the loop's own bound is never reached.
func (c *Client) newRetryClient() *retryablehttp.Client {
	return &retryablehttp.Client{
		HTTPClient: &http.Client{
			Transport: &attemptTransport{c: c},
			// No Timeout: the attempt's deadline is its context's (see
			// startTimer). A Timeout on a client whose transport net/http
			// does not know costs two goroutines per attempt.
			CheckRedirect: c.checkRedirect,
			Jar:           c.httpClient.Jar,
		},
		RetryMax:     math.MaxInt32,
		CheckRetry:   checkRetry,
		Backoff:      noWait,
		ErrorHandler: passThrough,
		PrepareRetry: prepareRetry,
	}
}

// transport is the RoundTripper that sends every attempt: the
// http.Client's (WithHTTPClient), or net/http's default.
func (c *Client) transport() http.RoundTripper {
	if rt := c.httpClient.Transport; rt != nil {
		return rt
	}
	return http.DefaultTransport
}

// redactor is the redactor of the client's own secrets (nil for none).
func (c *Client) redactor() *redact.Redactor { return c.secrets.Redactor() }

// Redactor returns the redactor the client's journal rows and errors go
// through: redact.String's rules, and the client's own secrets (its
// signer's credentials and tokens, redact.SecretHolder) cut in any
// letter case, as the client holds them when asked: a token it obtains
// later is not in it. Give it to what prints a provider's texts outside
// a call (InboxHandler.Redactor; reconcile.Options.Secrets takes the
// client itself and asks again for each text). It is nil, which redacts
// as redact.String does, for a client whose signer holds none.
func (c *Client) Redactor() *redact.Redactor { return c.redactor() }

// storedAnswer is an answer body as the journal stores it: redacted, the
// fields the codec names kept or masked as it says (fieldsCodec), so that
// what the provider sent comes back as sent.
func (c *Client) storedAnswer(body []byte) []byte { return c.redactor().JSONWith(body, c.fields) }

// Request describes one call of Do.
type Request struct {
	Operation string     // name for errors and logs, e.g. "charges.create"
	Method    string     // HTTP method
	Path      string     // escaped path below the base URL, e.g. "/api/v1/bank/wallet/charge/"
	Query     url.Values // query parameters (never logged)
	Body      any        // encoded once (its MarshalWire, else encoding/json); nil for no body
	// Keyed marks a business operation: one Idempotency-Key, resolved before
	// the first attempt, is sent on every attempt.
	Keyed bool
	// Validate runs after the key is resolved and before any byte is sent;
	// its error is returned as an *APIError carrying the key.
	Validate func() error
	// Route is Path's template for observers, e.g. "/v1/charges/{id}":
	// spans and metrics are named by it, never by raw IDs. The typed
	// clients set it to their documented path templates. When it is
	// empty, one is derived from Path: each segment that is not a word of
	// the API (lowercase ASCII letters, a version, a "{placeholder}")
	// becomes "{id}". A Route given here passes through
	// the same rule, except that its words may hold capital letters
	// ("/v1/paymentMethods/{id}"): its query string, its "{id}"
	// placeholders aside, any segment with a digit or an escape never
	// reaches an observer. Past 256 distinct routes a client
	// reports the route "other" instead.
	Route string
	// Summary, when not nil, is stored with a journaled call's entry
	// (JournalEntry.Summary, see summary.go): what a settle lookup matches
	// the provider's records by. A JSON object holding no card data; the
	// typed clients set it.
	Summary any
	// EarlierForms, when not nil, gives the forms an earlier version of a
	// typed client sent this request in (another wire form: its escaped
	// path and exact body bytes). It is asked only when the journal entry
	// of the call's reference was recorded with another request: an
	// entry one of them matches keeps its meaning, answered from the
	// journal when settled and refused (ErrOutcomeUnknown with an
	// *EarlierFormError) when in doubt, its key never sent again with
	// today's body.
	EarlierForms func() []EarlierForm
	// BeforeResend, when not nil, is asked before an attempt is sent
	// again under the key after one whose answer was lost, and before the
	// call ends resumable with the key after one (no attempt or time
	// left: a resumed call sends the key again): a transport
	// failure once the request may have left (a reset, a timeout, a body
	// cut short), or a 5xx answer in which the codec read no code of the
	// provider's (a gateway's). That attempt may have executed, and a
	// provider that keeps only 2xx answers under a key (A55) would
	// execute a re-send again. It looks the operation up, on the call's
	// context, by its key and, for a journaled call, the reference of its
	// entry ("" for a call without one), by which the lookup asks the
	// journal which entry holds or could have made what it finds
	// (SiftLookup): found false (and no error) when nothing ran, and the
	// attempt is sent (or the call ends resumable); found true when the operation ran, or an error
	// when the lookup cannot tell (it failed, or is ambiguous): nothing
	// more is sent, and Do returns an *APIError of kind ErrOutcomeUnknown
	// carrying the key (a journal entry stays pending, marked
	// LookUpFirst), which the typed client settles with what it found.
	BeforeResend func(ctx context.Context, key Key, reference string) (found bool, err error)
}

// EarlierForm is a form an earlier version of a typed client sent a
// request in: its escaped path and its exact body bytes.
type EarlierForm struct {
	Path string
	Body []byte
}

// fieldsCodec is a codec that knows the fields of its provider's answers:
// which are identifiers, kept in the journal exactly as sent (digits that
// pass the Luhn check included), and which hold card data, always masked.
// The journal redacts the fields it does not name by pattern
// (redact.JSONWith).
type fieldsCodec interface {
	AnswerFields() *redact.Fields
}

// jsonCodec decodes plain JSON answers and the common error shapes:
// {"message_key","message"}, {"error":{"code","message","details"}} and
// {"code","message"}.
type jsonCodec struct{}

// DecodeSuccess unmarshals body into out.
func (jsonCodec) DecodeSuccess(_ int, _ http.Header, body []byte, out any) error {
	if out == nil || len(body) == 0 {
		return nil
	}
	return json.Unmarshal(body, out)
}

// DecodeError reads the common error shapes (corekit.ReadErrorShape).
func (jsonCodec) DecodeError(_ int, _ http.Header, body []byte, e *APIError) {
	var details []ErrorDetail
	rid, code, msg, ok := corekit.ReadErrorShape(body, &details)
	if !ok {
		return
	}
	if rid != "" {
		e.RequestID = rid
	}
	e.Code, e.Message, e.Details = code, msg, details
}
