package payonce

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/payonce/payonce/internal/corekit"
)

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

// apply runs opts on o.
func (o *callOptions) apply(opts []CallOption) {
	for _, opt := range opts {
		if opt != nil {
			opt(o)
		}
	}
}

// Per-call options beyond the key: an interactive checkout and a background
// job can share one Client and still run under different policies. An
// invalid option makes Do return an *APIError (carrying the operation's
// key) before any byte is sent.

// WithCallRetryPolicy runs one operation under p instead of the client's
// retry policy. A policy that cannot work (as WithRetryPolicy checks) is refused with
// ErrInvalidConfig.
func WithCallRetryPolicy(p RetryPolicy) CallOption {
	return func(o *callOptions) {
		if err := p.validate(); err != nil {
			o.fail(err)
			return
		}
		o.policy = &p
	}
}

// WithCallTimeout sets the per-attempt timeout of one operation (it
// replaces the policy's AttemptTimeout). d must be above 0: an attempt
// always has a timeout.
func WithCallTimeout(d time.Duration) CallOption {
	return func(o *callOptions) {
		if d <= 0 {
			o.fail(fmt.Errorf("%w: call timeout must be above 0", ErrInvalidConfig))
			return
		}
		o.timeout = d
	}
}

// WithHeader sets a request header on every attempt of one operation, for
// example a correlation ID. It is set before the attempt is signed, and its
// value is never logged nor put in an error. Headers the client owns are
// refused with ErrInvalidRequest: Idempotency-Key, Authorization, the
// signing headers (X-Api-Key, X-Timestamp, X-Nonce, X-Signature), Host,
// Content-Type, Content-Length and the connection-level ones; so are a
// name that is not an HTTP token and a value holding CR, LF or another
// control character. A name that reads as one of those once "_" is taken
// for "-" (Idempotency_Key) is refused too.
func WithHeader(name, value string) CallOption {
	return func(o *callOptions) {
		if err := checkHeader(name, value); err != nil {
			o.fail(err)
			return
		}
		o.headers = append(o.headers, http.CanonicalHeaderKey(name), value)
	}
}

// fail keeps the first invalid option's error.
func (o *callOptions) fail(err error) {
	if o.err == nil {
		o.err = &callOptionError{err: err}
	}
}

// reservedHeader reports a header set by the client, its signer or
// net/http (canon is canonical): a per-call header may not override it.
func reservedHeader(canon string) bool {
	switch canon {
	case corekit.HeaderIdempotencyKey, "Authorization", "Proxy-Authorization",
		"X-Api-Key", "X-Timestamp", "X-Nonce", "X-Signature", // the Coinepay signer's
		"Host", "Content-Type", "Content-Length", "Transfer-Encoding",
		"Connection", "Keep-Alive", "Te", "Trailer", "Upgrade", "Cookie", "Expect":
		return true
	}
	return false
}

// checkHeader refuses a per-call header the client owns or cannot send.
func checkHeader(name, value string) error {
	bad := func(reason string) error {
		return &ValidationError{Field: "header", Reason: reason, Err: ErrInvalidRequest}
	}
	if name == "" || len(name) > 256 {
		return bad("a header name must be 1 to 256 characters")
	}
	for i := 0; i < len(name); i++ {
		if !isTokenChar(name[i]) {
			return bad("a header name must be an HTTP token (no spaces, separators or control characters)")
		}
	}
	// Many servers (CGI, WSGI, Rack) read "_" as "-": Idempotency_Key
	// would reach them as Idempotency-Key.
	if canon := http.CanonicalHeaderKey(strings.ReplaceAll(name, "_", "-")); reservedHeader(canon) {
		return bad(fmt.Sprintf("%q is set by the client and cannot be set per call", canon))
	}
	for i := 0; i < len(value); i++ {
		if c := value[i]; (c < 0x20 && c != '\t') || c == 0x7f {
			return bad(fmt.Sprintf("the value of %q holds CR, LF or another control character", http.CanonicalHeaderKey(name)))
		}
	}
	return nil
}

// isTokenChar reports a character allowed in an HTTP token (RFC 9110).
func isTokenChar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	switch c {
	case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~':
		return true
	}
	return false
}

// callOptionError is a refused call option: it reads and unwraps as the
// refusal itself (ErrInvalidConfig for a policy or timeout, a
// *ValidationError for a header) and also matches ErrInvalidRequest, as
// every refusal of input before sending does; the kind stays the specific
// one.
type callOptionError struct{ err error }

func (e *callOptionError) Error() string   { return e.err.Error() }
func (e *callOptionError) Unwrap() []error { return []error{e.err, ErrInvalidRequest} }
