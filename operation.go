package payonce

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/payonce/payonce/internal/corekit"
	"github.com/payonce/payonce/redact"
)

// operation is the state of one business operation: its key and body
// bytes, fixed before the first attempt (prepare.go), and what the
// attempts learned (attempt.go, classify.go). The client's one
// go-retryablehttp loop reaches it through the request's context
// (operationFrom).
type operation struct {
	c       *Client
	ctx     context.Context // the caller's, or the observer's (observer.go)
	req     *Request
	opts    callOptions // the call's options, applied once
	start   time.Time
	key     string
	created time.Time
	body    []byte
	policy  RetryPolicy   // the client's, or the call's (WithCallRetryPolicy)
	timeout time.Duration // per-attempt timeout, always above 0

	tries     int       // attempts started (a signer's temporary failure leaves one unsent)
	attempts  int       // attempts sent
	spent     int       // budget tokens this operation's retries spent
	recovered bool      // the signer recovered once (classify.go)
	plan      retryPlan // the retry classify.go decided on, until its attempt starts
	lastCause string    // the cause of the last retryable failure, for the journal
	errAnswer *APIError // the last error answer, decoded once (classify.go)
	respBody  []byte    // the last answer's body, read by its attempt

	// Kept inside the operation rather than allocated apart.
	bo            backoff.ExponentialBackOff
	url           url.URL
	attemptCtx    context.Context    // the current attempt's, with its deadline
	cancelAttempt context.CancelFunc // ends attemptCtx (stopTimer)
	timedOut      attemptTimeoutError
	firstBody     bytes.Reader // the request body of the length probe and the first attempt
	bodyCalls     int          // calls of newBody
	answerBody    bodyReader   // the last answer's body, once read
	hv            [4]string    // the first attempt's header values, one backing array

	ob *observation // the observer's state (observer.go), nil without one

	jr         *journalRun // the journaled run (journalrun.go), nil without a reference
	createdNow bool        // the key was made by this call: created is the present
}

// retryPlan is a retry decided after an attempt: why, and how long to
// wait before the next one.
type retryPlan struct {
	cause string
	wait  time.Duration
}

// operationKey is the context key of the operation a request belongs to.
type operationKey struct{}

// operationFrom returns the operation ctx carries, nil for none.
func operationFrom(ctx context.Context) *operation {
	op, _ := ctx.Value(operationKey{}).(*operation)
	return op
}

// debug logs one line about the operation, when debug logging is on.
func (op *operation) debug(msg string, extra ...slog.Attr) {
	if !op.c.logger.Enabled(op.ctx, slog.LevelDebug) {
		return
	}
	a := []slog.Attr{
		slog.String("provider", op.c.provider),
		slog.String("operation", op.req.Operation),
		slog.String("method", op.req.Method),
		slog.String("path", op.req.Path),
		slog.String("idempotency_key", op.key),
	}
	op.c.logger.LogAttrs(op.ctx, slog.LevelDebug, msg, append(a, extra...)...)
}

// meta is what Do returns about the operation and its last answer.
func (op *operation) meta(resp *http.Response) Meta {
	m := Meta{Key: op.keyValue(), Attempts: op.attempts, Duration: time.Since(op.start)}
	if resp != nil {
		m.StatusCode = resp.StatusCode
		m.Header = resp.Header
		m.Replayed = strings.EqualFold(resp.Header.Get(corekit.HeaderReplay), "true")
		m.RequestID = requestID(op.c.redactor(), resp.Header)
	}
	return m
}

// requestID is the answer's request ID (X-Request-Id, else Request-Id),
// redacted by r.
func requestID(r *redact.Redactor, h http.Header) string {
	v := h.Get("X-Request-Id")
	if v == "" {
		v = h.Get("Request-Id")
	}
	return r.ID(v)
}

// fail builds a client-side *APIError.
func (op *operation) fail(kind, cause error) *APIError {
	e := &APIError{Kind: kind, Err: cause}
	op.fill(e, nil)
	return e
}

// fill adds what the operation knows to e.
func (op *operation) fill(e *APIError, resp *http.Response) {
	e.Provider, e.Operation, e.Method, e.Path = op.c.provider, op.req.Operation, op.req.Method, op.req.Path
	e.Key, e.Attempts = op.keyValue(), op.attempts
	e.secrets = op.c.redactor
	// Without a key a non-idempotent operation can never be resumed: a
	// second run would be a second operation.
	e.noResume = !op.mayRepeat()
	if resp != nil {
		e.StatusCode = resp.StatusCode
		e.Replayed = strings.EqualFold(resp.Header.Get(corekit.HeaderReplay), "true")
		if e.RequestID == "" {
			e.RequestID = requestID(op.c.redactor(), resp.Header)
		}
	}
	e.redactFields()
}

// mayRepeat reports whether a repeat of the request is the same
// operation: it carries a key, or it is an idempotent request that is no
// business operation.
func (op *operation) mayRepeat() bool {
	return op.key != "" || (!op.req.Keyed && idempotentMethod(op.req.Method))
}

// idempotentMethod reports the methods RFC 9110 defines as idempotent: a
// repeat of them without a key has the effect of one request.
func idempotentMethod(m string) bool {
	switch strings.ToUpper(m) {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace, http.MethodPut, http.MethodDelete:
		return true
	}
	return false
}
