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
	"slices"
	"strings"
	"time"

	"github.com/payonce/payonce/internal/corekit"

	"github.com/hashicorp/go-retryablehttp"
)

// Body caps: error answers are read up to 1 MiB, successful ones up to
// 16 MiB. A body is read into a buffer of at most maxPrealloc bytes that
// grows as bytes arrive, whatever Content-Length announces.
const (
	maxErrorBody   = 1 << 20
	maxSuccessBody = 16 << 20
	maxPrealloc    = 64 << 10
)

// send runs the operation's attempts on the client's go-retryablehttp
// loop (built once, in NewClient): each attempt is the client's
// attemptTransport (guard, pace, sign, send, read), and after each one
// classify.go's checkRetry decides. It returns the last answer, its body
// read into op.respBody, or the error that ended the loop.
func (op *operation) send() (*http.Response, error) {
	var raw any
	if op.body != nil {
		raw = retryablehttp.ReaderFunc(op.newBody)
	}
	rreq, err := retryablehttp.NewRequestWithContext(context.WithValue(op.ctx, operationKey{}, op), op.req.Method, "", raw)
	if err != nil {
		return nil, &stopError{err: fmt.Errorf("build request: %w", err)}
	}
	rreq.URL, rreq.Host = &op.url, op.url.Host // set directly: no String-then-Parse round trip
	op.fillHeader(rreq.Header, &op.hv)
	return op.c.retry.Do(rreq)
}

// attemptTransport is the per-attempt stage inside the client's retry
// loop: origin check, then, for an attempt (not a redirect hop it
// follows), the wait classify.go chose and the limiter, the journal's
// check and the key-age guard; then a fresh signature, the real
// transport, and the answer's body read whole. The operation is the
// request context's (operationFrom).
type attemptTransport struct{ c *Client }

func (t *attemptTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	op := operationFrom(req.Context())
	if op == nil {
		return nil, errors.New("request without an operation")
	}
	if !op.c.sameOrigin(req.URL) {
		// Credentials, key and body go to the configured origin only.
		re := &redirectError{Method: req.Method, Target: req.URL.Scheme + "://" + req.URL.Host, Reason: "to another origin"}
		if req.Response != nil {
			re.StatusCode = req.Response.StatusCode
			re.MayHaveRun = mayHaveRun(re.StatusCode, op.req.Method, len(op.body) > 0)
		}
		return nil, &stopError{err: re}
	}
	hop := req.Response != nil // a redirect hop of the current attempt
	if err := op.admit(hop); err != nil {
		return nil, err
	}
	if !hop {
		op.startTimer()
		op.tries++ // started, sent or not
	}
	r := op.attemptRequest(req)
	if op.ob != nil {
		r = op.observeAttempt(r, hop) // before signing: the signer sees the headers it adds
	}
	if err := op.sign(r); err != nil {
		return nil, err
	}
	if hop {
		op.debug("payonce redirect hop", slog.Int("attempt", op.attempts))
	} else {
		op.attempts++
		op.debug("payonce attempt", slog.Int("attempt", op.attempts))
	}
	resp, err := t.c.transport().RoundTrip(r)
	if err != nil {
		return nil, err
	}
	if rerr := badLocation(req, len(op.body) > 0, resp); rerr != nil {
		_ = resp.Body.Close()
		return nil, &stopError{err: rerr}
	}
	if err := op.read(resp); err != nil {
		return nil, err
	}
	return resp, nil
}

// attemptRequest is req as the transport sends it: on the attempt's
// context, never replayable by net/http.
func (op *operation) attemptRequest(req *http.Request) *http.Request {
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
	return r
}

// admit lets an attempt go: after the wait classify.go chose and the
// client's limiter (both on the operation's context, before the attempt's
// timer starts), only while the key is fresh, and after the journal's
// check that this run still holds its entry. A redirect hop of the
// attempt passes the key-age guard only. A refusal stops the loop;
// nothing is sent.
func (op *operation) admit(hop bool) error {
	if !hop {
		wait := op.plan.wait
		if op.ob == nil {
			op.plan = retryPlan{} // else the attempt's observation takes it
		}
		if err := op.pace(wait); err != nil {
			return &stopError{err: err}
		}
	}
	if err := op.keyFresh(0); err != nil {
		return &stopError{err: err}
	}
	if hop || op.jr == nil {
		return nil
	}
	// Durably "may have been sent" before the first byte, and only while
	// this run still holds the entry.
	wrote, err := op.beginAttempt()
	if err != nil {
		return &stopError{err: journalStop(err)}
	}
	if wrote {
		// The check may have waited (a lock, a stalled database): the
		// key's age again, before the first byte.
		if err := op.keyFresh(0); err != nil {
			return &stopError{err: err}
		}
	}
	return nil
}

// pace waits wait (with the client's sleep, when a test gave one), then
// for the client's limiter, on the operation's context.
func (op *operation) pace(wait time.Duration) error {
	if wait > 0 && op.c.sleep != nil {
		if err := op.c.sleep(op.ctx, wait); err != nil {
			return err
		}
	} else if wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-op.ctx.Done():
			t.Stop()
			return op.ctx.Err()
		case <-t.C:
		}
	}
	if op.c.limiter != nil {
		return op.c.limiter.Wait(op.ctx)
	}
	return nil
}

// keyFresh is the key-age guard: an error (ErrKeyExpired) unless an
// attempt wait from now is still safely inside the key's window (window
// minus safety margin), on the client's clock and, for a journaled run on
// a journal with a clock of its own, on the journal's too: a clock may
// make a key look older, never younger.
func (op *operation) keyFresh(wait time.Duration) error {
	w := op.c.rules.Window
	if op.key == "" || w <= 0 {
		return nil
	}
	limit := w - op.policy.KeySafetyMargin
	if op.c.now().Add(wait).Sub(op.created) >= limit {
		return ErrKeyExpired
	}
	if op.jr != nil {
		if jnow, ok := op.c.journalPresent(); ok && jnow.Add(wait).Sub(op.created) >= limit {
			return ErrKeyExpired
		}
	}
	return nil
}

// read reads an answer's body whole inside its attempt, so that a body
// lost in transit is retried like any other transport failure and the
// decision after the attempt sees the whole answer. HEAD, 1xx, 204 and
// 304 answers have no body, whatever their Content-Length says.
func (op *operation) read(resp *http.Response) error {
	if resp.StatusCode < 200 || resp.StatusCode == http.StatusNoContent || resp.StatusCode == http.StatusNotModified ||
		op.req.Method == http.MethodHead {
		_ = resp.Body.Close()
		op.respBody = nil
		resp.Body = http.NoBody
		return nil
	}
	ok := resp.StatusCode >= 200 && resp.StatusCode < 300
	limit := int64(maxErrorBody)
	if ok {
		limit = maxSuccessBody
	}
	b, err := readCapped(resp.Body, resp.ContentLength, limit)
	_ = resp.Body.Close()
	switch {
	case err != nil && ok:
		return &readError{fmt.Errorf("read answer: %w", err)}
	case err != nil:
		// An error answer (a 409, a 400...) keeps its status when its
		// body is cut short: the status decides, and a repeat of a final
		// one could never succeed. Keep what arrived.
	case int64(len(b)) > limit && ok:
		// The operation ran but its answer cannot be kept: a transport
		// failure (temporary, resumable with the key), not retried since
		// the same answer would come back.
		return &stopError{err: fmt.Errorf("answer larger than %d bytes", limit)}
	case int64(len(b)) > limit:
		b = b[:limit]
	case ok && closeDelimited(resp) && jsonContent(resp.Header) && !json.Valid(b):
		// Ended by the server closing the connection: a cut connection
		// looks like a whole body, and only its JSON can tell. The
		// operation ran and its answer was lost, like any body cut short.
		return &readError{fmt.Errorf("read answer without a length: %w", io.ErrUnexpectedEOF)}
	}
	op.respBody = b
	if ok {
		op.answerBody.Reset(b)
		resp.Body = &op.answerBody
	} else {
		resp.Body = io.NopCloser(bytes.NewReader(b)) // a redirect hop may close it while the next is read
	}
	return nil
}

// readError is an answer whose body could not be read whole: a transport
// failure of its attempt, shown without net/http's method prefix.
type readError struct{ err error }

func (e *readError) Error() string { return e.err.Error() }
func (e *readError) Unwrap() error { return e.err }

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

// fillHeader sets the operation's own headers on h: the key, Accept,
// Content-Type, User-Agent and the call's WithHeader ones. The values
// live in hv (one allocation, not four); each slice is capped, so an
// append copies instead of overwriting a neighbour. Each attempt's map
// needs an hv of its own: a transport may still be reading the last
// attempt's values, and a signer may have rewritten one in place.
func (op *operation) fillHeader(h http.Header, hv *[4]string) {
	*hv = [4]string{op.key, "application/json", "application/json", op.c.userAgent}
	if op.key != "" {
		h[corekit.HeaderIdempotencyKey] = hv[0:1:1]
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
	case corekit.HeaderIdempotencyKey, "Accept", "Content-Type":
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

// prepareRetry is go-retryablehttp's PrepareRetry: it gives the request
// of each retry a header map of its own, holding only the operation's
// headers. A signer, an observer or net/http's Client (the jar's cookies)
// write into it without racing with a transport still finishing the last
// attempt, whose map go-retryablehttp's copy of the request would
// otherwise share, and nothing the last attempt added (its signature, its
// trace context, a value rewritten in place) carries over, to it or to
// its redirect hops.
func prepareRetry(r *http.Request) error {
	op := operationFrom(r.Context())
	h := make(http.Header, 8)
	op.fillHeader(h, new([4]string))
	r.Header = h
	return nil
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
