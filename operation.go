package payonce

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/hashicorp/go-retryablehttp"
	"github.com/payonce/payonce/redact"
)

// Body caps: error answers are read up to 1 MiB, successful ones up to
// 16 MiB. A body is read into a buffer of at most maxPrealloc bytes that
// grows as bytes arrive, whatever Content-Length announces.
const (
	maxErrorBody   = 1 << 20
	maxSuccessBody = 16 << 20
	maxPrealloc    = 64 << 10
)

// operation is the state of one business operation: its key and body bytes,
// fixed before the first attempt, and what the attempts learned.
type operation struct {
	c       *Client
	ctx     context.Context
	req     *Request
	key     string
	created time.Time
	body    []byte
	backoff *backoff.ExponentialBackOff
	opts    callOptions   // the call's options, applied once
	policy  RetryPolicy   // the client's, or the call's (WithCallRetryPolicy)
	timeout time.Duration // per-attempt timeout, always above 0
	paceErr error         // the limiter's refusal of the next attempt

	attempts  int
	unsent    int // attempts a temporary signer failure kept from being sent
	retries   int
	spent     int  // budget tokens spent by this operation's retries
	exhausted bool // the last answer was retryable but no retry was left
	nextWait  time.Duration
	lastCause string

	respBody []byte // body of the final answer, read inside the loop

	attemptCtx    context.Context    // the current attempt's, with its deadline
	cancelAttempt context.CancelFunc // ends attemptCtx (stopTimer)
	timedOut      attemptTimeoutError

	// Kept inside the operation rather than allocated apart: one
	// allocation per operation instead of one each (see run).
	bo  backoff.ExponentialBackOff
	url url.URL
	rc  retryablehttp.Client
	hc  http.Client
	at  attemptTransport

	firstBody  bytes.Reader // the request body of the length probe and the first attempt
	bodyCalls  int          // calls of newBody
	answerBody bodyReader   // the final answer's body, once read
	hv         [4]string    // the request's header values, one backing array

	ob *observation // the observer's state (observer.go), nil without one

	jr         *journalRun // the journaled run (journalrun.go), nil without a reference
	createdNow bool        // the key was made by this call: created is the present
}

// Do runs one operation and decodes a 2xx answer into out (which may be
// nil). Every error is an *APIError carrying the operation's key.
func (c *Client) Do(ctx context.Context, req *Request, out any, opts ...CallOption) (m Meta, err error) {
	if req == nil {
		return Meta{}, &APIError{Provider: c.provider, Kind: ErrInvalidRequest, Err: errors.New("nil request")}
	}
	start := time.Now()
	var op *operation
	if c.observer != nil {
		oo := &observedOperation{}
		op = &oo.operation
		op.ob = &oo.ob
	} else {
		op = &operation{}
	}
	op.c, op.ctx, op.req, op.policy = c, ctx, req, c.policy
	defer op.stopTimer()
	if c.observer != nil {
		op.startObserving(start)
		defer func() { op.endObserving(m, err) }()
	}
	if len(opts) > 0 {
		op.opts.apply(opts)
	}
	now := c.now()
	if err := c.checkReference(req, op.opts); err != nil {
		return Meta{}, op.fail(errKind(err, ErrInvalidRequest), err)
	}
	if req.Keyed {
		key, err := op.opts.resolveKey(now)
		if err != nil {
			kind := errKind(err, ErrTransport) // ErrTransport: no random source for a new key
			var ke *KeyError
			if errors.As(err, &ke) {
				kind = ke.Err
			}
			return Meta{}, op.fail(kind, err)
		}
		if err := c.checkExplicitKey(&op.opts); err != nil {
			return Meta{}, op.fail(ErrKeyRequired, err) // a key made by this call is never used
		}
		op.key, op.created, op.createdNow = key.id, key.created, op.opts.keyMade
		if err := c.rules.Validate(op.key); err != nil {
			return op.meta(nil, start), op.fail(keyKind(err), err)
		}
		if !op.opts.hasReference {
			// A journaled run checks on the journal's clock (journaled).
			if err := op.checkCreated(now); err != nil {
				return op.meta(nil, start), err
			}
		}
	}
	if err := op.setPolicy(); err != nil {
		kind := ErrInvalidRequest
		if errors.Is(err, ErrInvalidConfig) {
			kind = ErrInvalidConfig
		}
		return op.meta(nil, start), op.fail(kind, err)
	}
	if req.Validate != nil {
		if err := req.Validate(); err != nil {
			kind := ErrInvalidRequest
			var ve *ValidationError
			if errors.As(err, &ve) {
				kind = ve.Err
			}
			return op.meta(nil, start), op.fail(kind, err)
		}
	}
	if req.Body != nil {
		b, err := MarshalWire(req.Body)
		if err != nil {
			return op.meta(nil, start), op.fail(ErrInvalidRequest, fmt.Errorf("encode body: %w", err))
		}
		op.body = b
	}
	op.backoff = op.policy.initBackOff(&op.bo)
	if op.opts.hasReference {
		return op.journaled(op.opts.reference, out, start)
	}
	return op.execute(out, start)
}

// execute runs the attempt loop and decodes the final answer.
func (op *operation) execute(out any, start time.Time) (Meta, error) {
	c, ctx, req := op.c, op.ctx, op.req
	recovered := false
	for {
		resp, err := op.run()
		if err != nil {
			return op.meta(resp, start), op.failure(resp, err)
		}
		meta := op.meta(resp, start)
		if resp.StatusCode >= 300 && resp.StatusCode < 400 {
			if resp.StatusCode != http.StatusNotModified || !op.conditional() {
				e := op.fail(ErrRedirectRefused, unfollowed(req.Method, len(op.body) > 0, resp))
				op.fill(e, resp)
				return meta, e
			}
			if c.budget != nil {
				c.budget.release(op.spent)
			}
			return meta, nil // the caller's copy is current
		}
		if resp.StatusCode >= 200 && resp.StatusCode < 300 {
			if c.budget != nil {
				c.budget.release(op.spent)
			}
			if derr := c.codec.DecodeSuccess(resp.StatusCode, resp.Header, op.respBody, out); derr != nil {
				var apiErr *APIError
				if errors.As(derr, &apiErr) {
					op.fill(apiErr, resp)
					return meta, apiErr
				}
				return meta, op.fail(ErrMalformedResponse, serverCause(derr))
			}
			op.debug("payonce operation done", slog.Int("status", resp.StatusCode), slog.Bool("replayed", meta.Replayed))
			return meta, nil
		}
		apiErr := op.apiError(resp, op.respBody)
		if !recovered {
			if recoverSigner(ctx, c.signer, resp, apiErr) {
				recovered = true
				op.debug("payonce repeating attempt after signer recovery", slog.String("code", apiErr.Code))
				continue
			}
		}
		return meta, apiErr
	}
}

// setPolicy applies the call's policy, timeout and header options: an
// invalid one, or an attempt left without any timeout, is refused.
func (op *operation) setPolicy() error {
	if op.opts.err != nil {
		return op.opts.err
	}
	if op.opts.policy != nil {
		op.policy = *op.opts.policy
	}
	op.timeout = op.policy.AttemptTimeout
	if op.opts.timeout > 0 {
		op.timeout = op.opts.timeout
	}
	if op.timeout == 0 {
		op.timeout = op.c.httpClient.Timeout
	}
	if op.timeout <= 0 {
		return fmt.Errorf("%w: an attempt needs a timeout: set AttemptTimeout, WithCallTimeout or the http.Client's Timeout", ErrInvalidConfig)
	}
	if op.key != "" && op.c.rules.Window > 0 && op.policy.KeySafetyMargin < op.timeout {
		// The last attempt, sent just inside the window, could arrive after it.
		return fmt.Errorf("%w: KeySafetyMargin (%s) must be at least the attempt timeout (%s)", ErrInvalidConfig, op.policy.KeySafetyMargin, op.timeout)
	}
	return nil
}

// conditional reports whether the call sent a header that makes a 304 a
// valid answer.
func (op *operation) conditional() bool {
	for i := 0; i < len(op.opts.headers); i += 2 {
		if n := op.opts.headers[i]; n == "If-None-Match" || n == "If-Modified-Since" {
			return true
		}
	}
	return false
}

// run performs the attempt loop on go-retryablehttp. It returns the final
// response (body already read into op.respBody) or an error; on an error
// the response, when not nil, holds the last answer with its body unread.
func (op *operation) run() (*http.Response, error) {
	c := op.c
	op.url = *c.baseURL
	u := &op.url
	u.Path += op.req.Path
	u.RawPath = ""
	if strings.Contains(op.req.Path, "%") {
		if p, err := url.PathUnescape(u.Path); err == nil {
			u.RawPath, u.Path = u.Path, p
		}
	}
	u.RawQuery = op.req.Query.Encode()

	var raw any
	if op.body != nil {
		raw = retryablehttp.ReaderFunc(op.newBody)
	}
	rreq, err := retryablehttp.NewRequestWithContext(op.ctx, op.req.Method, "", raw)
	if err != nil {
		return nil, &stopError{err: fmt.Errorf("build request: %w", err)}
	}
	rreq.URL, rreq.Host = u, u.Host // set directly: no String-then-Parse round trip
	// The first run's first attempt keeps its values in op.hv; a signer
	// recovery's run gets an array of its own.
	hv := &op.hv
	if op.hv[1] != "" {
		hv = new([4]string)
	}
	op.fillHeader(rreq.Header, hv)
	check, handler := op.checkRetry, op.readBody
	if c.observer != nil {
		check, handler = op.observedCheckRetry, op.observedReadBody
	}
	rreq.SetResponseHandler(handler)

	base := c.httpClient
	rt := base.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	remaining := op.policy.MaxAttempts - op.attempts
	if remaining < 1 {
		remaining = 1 // a signer recovery repeats the last attempt once
	}
	op.at = attemptTransport{op: op, next: rt}
	op.hc = http.Client{
		Transport: &op.at,
		// No Timeout: the attempt's deadline is its context's (see
		// startTimer). A Timeout on a client whose transport net/http
		// does not know costs two goroutines per attempt.
		CheckRedirect: op.checkRedirect(base.CheckRedirect),
		Jar:           base.Jar,
	}
	op.rc = retryablehttp.Client{
		HTTPClient:   &op.hc,
		RetryMax:     remaining - 1,
		CheckRetry:   check,
		Backoff:      op.wait,
		ErrorHandler: passThrough,
	}
	if c.limiter != nil {
		op.rc.RequestLogHook = op.pace
	}
	if c.signer != nil || c.observer != nil || base.Jar != nil {
		// Whatever writes to an attempt's headers (the signer, the
		// observer, net/http's Client adding the jar's cookies) needs
		// a map per attempt.
		op.rc.PrepareRetry = op.prepareRetry
	}
	op.exhausted = false
	return op.rc.Do(rreq)
}

// fillHeader sets the operation's own headers on h: the key, Accept,
// Content-Type, User-Agent and the call's WithHeader ones. The values
// live in hv (one allocation, not four); each slice is capped, so an
// append copies instead of overwriting a neighbour. Each attempt's map
// needs an hv of its own: a transport may still be reading the last
// attempt's values, and a signer may have rewritten one in place.
func (op *operation) fillHeader(h http.Header, hv *[4]string) {
	*hv = [4]string{op.key, "application/json", "application/json", op.c.userAgent}
	if op.key != "" {
		h[HeaderIdempotencyKey] = hv[0:1:1]
	}
	h["Accept"] = hv[1:2:2]
	if op.body != nil {
		h["Content-Type"] = hv[2:3:3]
	}
	if op.c.userAgent != "" {
		h["User-Agent"] = hv[3:4:4]
	}
	for i := 0; i+1 < len(op.opts.headers); i += 2 {
		h[op.opts.headers[i]] = []string{op.opts.headers[i+1]} // canonical and checked by WithHeader
	}
}

// ownHeader reports whether name is one of the headers fillHeader sets.
func (op *operation) ownHeader(name string) bool {
	switch name {
	case HeaderIdempotencyKey, "Accept", "Content-Type":
		return true
	case "User-Agent":
		return op.c.userAgent != "" // else an observer may set one
	}
	for i := 0; i < len(op.opts.headers); i += 2 {
		if op.opts.headers[i] == name {
			return true
		}
	}
	return false
}

// prepareRetry gives the request of each retry a header map of its own,
// holding only the operation's headers (it is go-retryablehttp's
// PrepareRetry, set when a signer, an observer or a cookie jar writes
// headers): they write into it without racing with a transport
// still finishing the last attempt, whose map go-retryablehttp's copy of
// the request would otherwise share, and nothing the last attempt added
// (its signature, its trace context, a value rewritten in place)
// carries over, to it or to its redirect hops.
func (op *operation) prepareRetry(r *http.Request) error {
	h := make(http.Header, 8)
	op.fillHeader(h, new([4]string))
	r.Header = h
	return nil
}

// passThrough hands the last answer and error back unchanged: the default
// error of go-retryablehttp names the URL with its query string.
func passThrough(resp *http.Response, err error, _ int) (*http.Response, error) {
	if err == nil && resp != nil {
		err = errRetryable
	}
	return resp, err
}

var errRetryable = errors.New("retryable answer")

// readBody reads a final answer's body inside the loop, so a body lost in
// transit is retried like any other transport failure. HEAD, 1xx, 204 and
// 304 answers have no body, whatever their Content-Length says.
func (op *operation) readBody(resp *http.Response) error {
	if resp.StatusCode < 200 || resp.StatusCode == http.StatusNoContent || resp.StatusCode == http.StatusNotModified ||
		op.req.Method == http.MethodHead {
		_ = resp.Body.Close()
		op.respBody = nil
		resp.Body = http.NoBody
		return nil
	}
	limit := int64(maxErrorBody)
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		limit = maxSuccessBody
	}
	b, err := readCapped(resp.Body, resp.ContentLength, limit)
	_ = resp.Body.Close()
	if err != nil {
		if resp.StatusCode < 200 || resp.StatusCode >= 300 {
			// A final error answer (a 409, a 400...) stays final when its
			// body is cut short: the status decides, and a repeat of it
			// could never succeed. Keep what arrived.
			op.respBody = b
			resp.Body = io.NopCloser(bytes.NewReader(b))
			return nil
		}
		return fmt.Errorf("read answer: %w", err)
	}
	if int64(len(b)) > limit {
		if resp.StatusCode < 300 {
			// The operation ran but its answer cannot be kept: a transport
			// failure (temporary, resumable with the key), not retried
			// since the same answer would come back.
			return &stopError{err: fmt.Errorf("answer larger than %d bytes", limit)}
		}
		b = b[:limit]
	}
	if resp.StatusCode < 300 && closeDelimited(resp) && jsonContent(resp.Header) && !json.Valid(b) {
		// Ended by the server closing the connection: a cut connection
		// looks like a whole body, and only its JSON can tell. The
		// operation ran and its answer was lost, like any body cut short.
		return fmt.Errorf("read answer without a length: %w", io.ErrUnexpectedEOF)
	}
	op.respBody = b
	op.answerBody.Reset(b)
	resp.Body = &op.answerBody
	return nil
}

// closeDelimited reports an HTTP/1 answer whose body ends when the server
// closes the connection (no Content-Length, not chunked, not gzip, whose
// own framing would catch a cut).
func closeDelimited(resp *http.Response) bool {
	return resp.ProtoMajor == 1 && resp.ContentLength < 0 && len(resp.TransferEncoding) == 0 && !resp.Uncompressed
}

// jsonContent reports a JSON answer, or one without a Content-Type.
func jsonContent(h http.Header) bool {
	ct := strings.ToLower(h.Get("Content-Type"))
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	ct = strings.TrimSpace(ct)
	return ct == "" || ct == "application/json" || strings.HasSuffix(ct, "+json")
}

// bodyReader is a bytes.Reader that is also an io.ReadCloser, so that
// neither go-retryablehttp nor net/http wraps it in another allocation.
type bodyReader struct{ bytes.Reader }

// Close does nothing: the bytes stay the operation's.
func (*bodyReader) Close() error { return nil }

// newBody is the request body's go-retryablehttp ReaderFunc: called once
// to learn the length, then once per attempt. The probe and the first
// attempt share the reader kept in the operation; every later attempt
// gets its own, since net/http may still be reading the last attempt's
// body after that attempt failed. It is a *bytes.Reader on purpose:
// net/http knows that type is in memory and writes the headers and the
// body in one write, where any other reader costs a flush of the headers
// on their own (one more write for the client, one more read for the
// server, on every attempt).
func (op *operation) newBody() (io.Reader, error) {
	op.bodyCalls++
	if op.bodyCalls <= 2 {
		op.firstBody.Reset(op.body)
		return &op.firstBody, nil
	}
	return bytes.NewReader(op.body), nil
}

// readCapped reads r up to limit+1 bytes. A body of known small length is
// read into one buffer of that size; any other grows as bytes arrive from
// at most maxPrealloc bytes, so an announced length costs nothing unless
// the bytes come.
func readCapped(r io.Reader, announced, limit int64) ([]byte, error) {
	if announced >= 0 && announced <= maxPrealloc && announced <= limit {
		b := make([]byte, announced)
		n, err := io.ReadFull(r, b)
		return b[:n], err
	}
	size := int64(512)
	if announced > 0 {
		size = min(announced, maxPrealloc)
	}
	lr := io.LimitReader(r, limit+1)
	b := make([]byte, 0, size)
	for {
		n, err := lr.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return b, err
		}
		if len(b) == cap(b) {
			b = slices.Grow(b, len(b)) // double: at most twice what arrived
		}
	}
}

// checkRetry decides after each attempt. It refuses what cannot succeed
// (any status but 429/500/502/503/504, TLS failures, a done context) and
// stops before the key ages past its window or the budget runs dry.
func (op *operation) checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if cerr := ctx.Err(); cerr != nil {
		return false, cerr
	}
	var cause string
	var retryAfter time.Duration
	hasRetryAfter := false
	timeout := false
	if err != nil {
		if !RetryableError(err) {
			return false, err
		}
		timeout = isTimeout(err)
		cause = "transport"
		if timeout {
			cause = "timeout"
		}
	} else {
		if !RetryableStatus(resp.StatusCode) {
			return false, nil
		}
		cause = http.StatusText(resp.StatusCode)
		if cause == "" {
			cause = fmt.Sprint(resp.StatusCode)
		}
		retryAfter, hasRetryAfter = ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	}
	op.lastCause = cause
	if op.key == "" && (op.req.Keyed || !idempotentMethod(op.req.Method)) {
		// Without a key a repeat of a business operation (or of any
		// non-idempotent request) would be a second operation: never retry.
		return false, err
	}
	if op.attempts+op.unsent >= op.policy.MaxAttempts {
		op.exhausted = true
		return true, nil // go-retryablehttp stops: no retry left
	}
	wait := op.backoff.NextBackOff()
	if wait == backoff.Stop {
		return false, ErrRetriesExhausted
	}
	if hasRetryAfter {
		wait = min(retryAfter, op.policy.MaxRetryAfter)
		if m := op.policy.MaxElapsedTime; m > 0 && op.backoff.GetElapsedTime()+wait > m {
			// The server's wait would start the retry past MaxElapsedTime,
			// which the backoff's own schedule never does.
			return false, ErrRetriesExhausted
		}
	}
	if op.key != "" && !op.keyFresh(wait) {
		return false, &stopError{err: ErrKeyExpired}
	}
	if op.c.budget != nil {
		cost, ok := op.c.budget.acquire(timeout)
		if !ok {
			return false, ErrRetryBudgetExhausted
		}
		op.spent += cost
	}
	op.nextWait = wait
	op.retries++
	op.debug("payonce retrying", slog.String("cause", cause), slog.Duration("wait", wait))
	return true, nil
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

// wait is go-retryablehttp's Backoff: the wait checkRetry chose.
func (op *operation) wait(_, _ time.Duration, _ int, _ *http.Response) time.Duration {
	return op.nextWait
}

// keyFresh reports whether an attempt wait from now is still safely inside
// the key's window (window minus safety margin), on the client's clock and,
// for a journaled run on a journal with a clock of its own, on the
// journal's too: a clock may make a key look older, never younger.
func (op *operation) keyFresh(wait time.Duration) bool {
	w := op.c.rules.Window
	if w <= 0 {
		return true
	}
	limit := w - op.policy.KeySafetyMargin
	if op.c.now().Add(wait).Sub(op.created) >= limit {
		return false
	}
	if op.jr != nil {
		if jnow, ok := op.c.journalPresent(); ok && jnow.Add(wait).Sub(op.created) >= limit {
			return false
		}
	}
	return true
}

// pace waits for the client's limiter before each attempt, on the
// operation's context and before the attempt's timer starts (it is
// go-retryablehttp's RequestLogHook, called just before each attempt). A
// refusal is kept for RoundTrip to return.
func (op *operation) pace(_ retryablehttp.Logger, _ *http.Request, _ int) {
	op.paceErr = nil
	if op.c.limiter != nil {
		op.paceErr = op.c.limiter.Wait(op.ctx)
	}
}

// attemptTransport is the per-attempt middleware inside the retry loop:
// origin check, key-age guard, a fresh signature, then the real transport.
// It sees the first request of each attempt and each redirect hop the
// http.Client follows; only the former count as attempts.
type attemptTransport struct {
	op   *operation
	next http.RoundTripper
}

func (t *attemptTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	op := t.op
	if !op.c.sameOrigin(req.URL) {
		// Credentials, key and body go to the configured origin only.
		re := &RedirectError{Method: req.Method, Target: req.URL.Scheme + "://" + req.URL.Host, Reason: "to another origin"}
		if req.Response != nil {
			re.StatusCode = req.Response.StatusCode
			re.MayHaveRun = mayHaveRun(re.StatusCode, op.req.Method, len(op.body) > 0)
		}
		return nil, &stopError{err: re}
	}
	if op.key != "" && !op.keyFresh(0) {
		return nil, &stopError{err: ErrKeyExpired}
	}
	hop := req.Response != nil // a redirect hop of the current attempt
	if !hop {
		if err := op.paceErr; err != nil {
			op.paceErr = nil
			return nil, &stopError{err: err}
		}
		if op.jr != nil {
			// Durably "may have been sent" before the first byte, and
			// only while this run still holds the entry.
			if err := op.beginAttempt(); err != nil {
				return nil, &stopError{err: journalStop(err)}
			}
			// The check may have waited (a lock, a stalled database):
			// the key's age again, before the first byte.
			if op.key != "" && !op.keyFresh(0) {
				return nil, &stopError{err: ErrKeyExpired}
			}
		}
	}
	if !hop {
		op.startTimer()
	}
	// The attempt's context carries its deadline, redirect hops included.
	// The rest is shared, as WithContext does: nothing below writes to the
	// URL. The headers are this attempt's own map (prepareRetry gives each
	// retry a new one, the http.Client each redirect hop a copy), which
	// only a signer or an observer writes to.
	r := req.WithContext(op.attemptCtx)
	// Without GetBody net/http's Transport cannot silently re-send a POST
	// (it does for one carrying an Idempotency-Key when a reused
	// connection fails): retries belong to this loop, where they are
	// counted, paced and signed afresh.
	r.GetBody = nil
	if r.Body == nil || r.Body == http.NoBody {
		// A body-less GET is replayable for net/http whatever GetBody says,
		// and a re-sent GET repeats the nonce the server may already have
		// seen (openapi_nonce_replayed). An empty body it cannot rewind
		// makes it non-replayable; the Transport probes it, finds it empty
		// and sends no body.
		r.Body = io.NopCloser(http.NoBody)
	}
	if op.c.observer != nil {
		r = op.observeAttempt(r, hop) // before signing: the signer sees the headers it adds
	}
	if op.c.signer != nil {
		if err := op.c.signer.Sign(r, op.body); err != nil {
			if errors.Is(err, ErrSignerTemporary) {
				op.unsent++ // nothing sent: not an attempt, but a place in the schedule
				return nil, fmt.Errorf("sign: %w", err)
			}
			return nil, &stopError{err: fmt.Errorf("sign: %w", err)}
		}
	}
	if hop {
		op.debug("payonce redirect hop", slog.Int("attempt", op.attempts))
	} else {
		op.attempts++
		op.debug("payonce attempt", slog.Int("attempt", op.attempts))
	}
	resp, err := t.next.RoundTrip(r)
	if err == nil {
		if rerr := badLocation(req, len(op.body) > 0, resp); rerr != nil {
			_ = resp.Body.Close()
			return nil, &stopError{err: rerr}
		}
	}
	return resp, err
}

// startTimer starts an attempt's deadline: it ends the last attempt's
// context and gives the new one op.timeout from now, to send the request,
// follow its redirects and read the whole answer. The deadline's cause is
// a timeout error of the client's, so a timed-out attempt is retried like
// any timeout while the caller's own deadline still stops the loop.
func (op *operation) startTimer() {
	op.stopTimer()
	if op.timedOut.d == 0 {
		// Once, before the first attempt: the last attempt's error, which
		// its transport or a hook may still be reading, is this value.
		op.timedOut.d = op.timeout
	}
	op.attemptCtx, op.cancelAttempt = context.WithDeadlineCause(op.ctx, time.Now().Add(op.timeout), &op.timedOut)
}

// stopTimer ends the current attempt's context, if any. Do calls it last,
// once the final answer's body has been read.
func (op *operation) stopTimer() {
	if op.cancelAttempt != nil {
		op.cancelAttempt()
		op.cancelAttempt = nil
	}
}

// attemptTimeoutError is the cause of an attempt that outlived its
// timeout: a net.Error whose Timeout is true.
type attemptTimeoutError struct{ d time.Duration }

func (e *attemptTimeoutError) Error() string {
	return "attempt timed out after " + e.d.String()
}

// Timeout reports true: the attempt timed out.
func (e *attemptTimeoutError) Timeout() bool { return true }

// Temporary reports true: another attempt may succeed.
func (e *attemptTimeoutError) Temporary() bool { return true }

// Is reports target == context.DeadlineExceeded, as for net/http's own
// timeouts: the attempt's deadline passed.
func (e *attemptTimeoutError) Is(target error) bool { return target == context.DeadlineExceeded }

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

func (op *operation) meta(resp *http.Response, start time.Time) Meta {
	m := Meta{Key: op.keyValue(), Attempts: op.attempts, Duration: time.Since(start)}
	if resp != nil {
		m.StatusCode = resp.StatusCode
		m.Header = resp.Header
		m.Replayed = strings.EqualFold(resp.Header.Get(HeaderReplay), "true")
		m.RequestID = requestID(op.c.redactor(), resp.Header)
	}
	return m
}

// requestID is the answer's request ID, redacted by r.
func requestID(r *redact.Redactor, h http.Header) string {
	if v := h.Get("X-Request-Id"); v != "" {
		return r.Redact(v)
	}
	return r.Redact(h.Get("Request-Id"))
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
	e.noResume = op.key == "" && (op.req.Keyed || !idempotentMethod(op.req.Method))
	if resp != nil {
		e.StatusCode = resp.StatusCode
		e.Replayed = strings.EqualFold(resp.Header.Get(HeaderReplay), "true")
		if e.RequestID == "" {
			e.RequestID = requestID(op.c.redactor(), resp.Header)
		}
	}
	e.redactFields()
}

// apiError maps an error answer to an *APIError: the codec reads the body,
// then the code table, then the status table choose the kind.
func (op *operation) apiError(resp *http.Response, body []byte) *APIError {
	e := &APIError{}
	op.c.codec.DecodeError(resp.StatusCode, resp.Header, body, e)
	op.fill(e, resp)
	if e.Kind == nil {
		e.Kind = KindForCode(e.Code)
	}
	if e.Kind == nil {
		e.Kind = KindForStatus(resp.StatusCode)
	}
	if d, ok := ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
		e.RetryAfter = d
	}
	return e
}

// failure maps a loop that ended in an error to an *APIError.
func (op *operation) failure(resp *http.Response, err error) *APIError {
	var last *APIError
	if resp != nil && (resp.StatusCode < 200 || resp.StatusCode >= 300) {
		// The last answer was an error answer (a 503 when retries ran
		// out): it becomes the cause. A 2xx here is an answer whose body
		// could not be read: the cause is the transport failure.
		body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		_ = resp.Body.Close()
		last = op.apiError(resp, body)
	}
	cause := cleanTransportError(err)
	withLast := func(kind error) *APIError {
		if last == nil {
			e := op.fail(kind, cause)
			if resp != nil {
				op.fill(e, resp)
			}
			return e
		}
		e := *last
		e.Err = last.Kind
		e.Kind = kind
		return &e
	}
	var stop *stopError
	var redirect *RedirectError
	switch {
	case op.ctx.Err() != nil:
		return withLast(op.ctx.Err())
	case errors.As(err, &redirect):
		// A 307/308 means the server did not execute the request: final.
		// A 301/302/303 to a POST means it may have: Temporary says so.
		e := op.fail(ErrRedirectRefused, redirect)
		if resp != nil {
			op.fill(e, resp)
		} else {
			e.StatusCode = redirect.StatusCode
		}
		return e
	case errors.Is(err, ErrKeyExpired):
		return withLast(ErrKeyExpired)
	case errors.Is(err, ErrRetryBudgetExhausted):
		return withLast(ErrRetryBudgetExhausted)
	case errors.Is(err, errRetryable), op.exhausted && RetryableError(err), errors.Is(err, ErrRetriesExhausted):
		if last == nil {
			e := op.fail(ErrRetriesExhausted, fmt.Errorf("%w: %w", ErrTransport, cause))
			if resp != nil {
				op.fill(e, resp)
			}
			return e
		}
		return withLast(ErrRetriesExhausted)
	case errors.Is(err, ErrMalformedResponse):
		return op.fail(ErrMalformedResponse, cause)
	case errors.As(err, &stop):
		return withLast(stopKind(err))
	}
	return withLast(ErrTransport)
}

// stopKind is the kind of an error that stopped the loop in the client
// (a signer that could not get credentials, a refused redirect): a refusal
// keeps its kind, so that IsTemporary tells a job queue not to try again
// with bad credentials; anything else is a transport failure.
func stopKind(err error) error {
	for _, k := range []error{ErrJournalFenced, ErrJournal, ErrUnauthorized, ErrForbidden, ErrInvalidConfig, ErrInvalidRequest} {
		if errors.Is(err, k) {
			return k
		}
	}
	return ErrTransport
}

// cleanTransportError drops the *url.Error wrapper, whose text holds the
// full URL with its query string.
func cleanTransportError(err error) error {
	var stop *stopError
	var ue *url.Error
	if errors.As(err, &ue) {
		if errors.As(ue.Err, &stop) {
			return stop.err // the client's own stop: the method adds nothing
		}
		return fmt.Errorf("%s: %w", strings.ToLower(ue.Op), ue.Err)
	}
	if errors.As(err, &stop) {
		return stop.err
	}
	return err
}
