package payonce

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/payonce/payonce/internal/corekit"
)

// checkRetry is the client's go-retryablehttp CheckRetry: after each
// attempt it decides, once, whether another follows and after what wait
// (kept in op.plan for the next attempt's admit). It refuses what cannot
// succeed (any status but 429/500/502/503/504, TLS failures, a done
// context) and stops when no attempt is left, the backoff's time is up,
// the key would age past its window before the retry, the lookup after a
// lost answer finds the operation or cannot tell (resend.go), or the
// retry budget runs dry. A final error answer the signer recovers from (a refreshed
// token after a 401) is repeated once.
func checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	op := operationFrom(ctx)
	retry, stop := op.decide(ctx, resp, err)
	if op.ob != nil {
		op.endAttempt(resp, err, retry)
	}
	if retry {
		op.debug("payonce retrying", slog.String("cause", op.plan.cause), slog.Duration("wait", op.plan.wait))
	}
	return retry, stop
}

// decide is checkRetry's decision; a stop error says why the loop ends
// other than on a final answer.
func (op *operation) decide(ctx context.Context, resp *http.Response, err error) (bool, error) {
	op.plan, op.errAnswer = retryPlan{}, nil
	if cerr := ctx.Err(); cerr != nil {
		if op.req.BeforeResend != nil && op.key != "" && op.answerLost(resp, err) {
			// The call ends with no lookup possible: resumed, the key
			// would be sent again, as a retry would (lookBeforeResend).
			return false, &stopError{err: &lookupStop{why: "the call's context ended before the operation could be looked up (" + cerr.Error() + ")"}}
		}
		return false, cerr
	}
	timeout := false
	var cause string
	var adv corekit.Advice
	if err != nil {
		if !retryableError(err) {
			return false, err
		}
		timeout = isTimeout(err)
		cause = "transport"
		if timeout {
			cause = "timeout"
		}
	} else {
		switch adv = op.advise(resp); {
		case adv.Retry == corekit.RetryNever:
			return false, nil // the outcome is unknown: the answer is the operation's error
		case adv.Retry == corekit.RetrySameKey:
			cause = op.errAnswer.Code
		case !retryableStatus(resp.StatusCode):
			return op.recover(resp), nil
		}
		if cause == "" {
			if cause = http.StatusText(resp.StatusCode); cause == "" {
				cause = fmt.Sprint(resp.StatusCode)
			}
		}
	}
	op.lastCause = cause
	if !op.mayRepeat() {
		// Without a key a repeat of a business operation (or of any
		// non-idempotent request) would be a second operation: never retry.
		return false, err
	}
	if op.tries >= op.policy.MaxAttempts {
		return false, op.exhausted(resp, err, &exhaustedError{err: err})
	}
	wait := op.bo.NextBackOff()
	if wait == backoff.Stop {
		return false, op.exhausted(resp, err, &exhaustedError{err: err})
	}
	if resp != nil {
		if d, ok := parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
			wait = min(d, op.policy.MaxRetryAfter)
			if m := op.policy.MaxElapsedTime; m > 0 && op.bo.GetElapsedTime()+wait > m {
				// The server's wait would start the retry past
				// MaxElapsedTime, which the backoff's own schedule never does.
				return false, op.exhausted(resp, err, &exhaustedError{err: err})
			}
		}
	}
	if nb := adv.NotBefore; nb > 0 {
		// The provider's least wait is never shortened: a call that
		// cannot wait it ends now, resumable with its key.
		if why := op.cannotWait(ctx, nb); why != "" {
			return false, op.exhausted(resp, err, &exhaustedError{why: why})
		}
		wait = max(wait, nb)
	}
	if kerr := op.keyFresh(wait); kerr != nil {
		return false, &stopError{err: kerr}
	}
	if lerr := op.lookBeforeResend(resp, err); lerr != nil {
		return false, lerr
	}
	if op.c.budget != nil {
		cost, ok := op.c.budget.acquire(timeout)
		if !ok {
			return false, ErrRetryBudgetExhausted
		}
		op.spent += cost
	}
	op.plan = retryPlan{cause: cause, wait: wait}
	return true, nil
}

// exhausted ends the loop with ex, resumable with the key, once the
// attempt that just ended (resp, err) is looked up when it lost its
// answer (lookBeforeResend): a resumed call sends the key again knowing
// nothing of that attempt, so a provider that keeps only 2xx answers
// under a key would run the operation a second time. Found, or a lookup
// that cannot tell, ends the loop in doubt instead, nothing resumable.
func (op *operation) exhausted(resp *http.Response, err error, ex *exhaustedError) error {
	if lerr := op.lookBeforeResend(resp, err); lerr != nil {
		return lerr
	}
	return ex
}

// adviceCodec is a codec whose provider's codes say more about a retry
// than the HTTP status does (corekit.Advice): a code that asks for a
// retry under the key on a 4xx, or for a wait of its own, or one that
// forbids any retry on a 5xx since the outcome is unknown.
type adviceCodec interface {
	Advise(e *APIError) corekit.Advice
}

// advise asks an adviceCodec about an error answer, which it decodes
// here, once; the zero Advice (the status table) for any other answer or
// codec.
func (op *operation) advise(resp *http.Response) corekit.Advice {
	ac, ok := op.c.codec.(adviceCodec)
	if !ok || resp.StatusCode < 400 {
		return corekit.Advice{}
	}
	op.errAnswer = op.apiError(resp, op.respBody)
	return ac.Advise(op.errAnswer)
}

// cannotWait says why the call cannot wait d, a provider's least wait,
// before its next attempt: longer than the policy lets a server's wait
// be (MaxRetryAfter), past the policy's MaxElapsedTime or past the
// context's deadline; "" when it can.
func (op *operation) cannotWait(ctx context.Context, d time.Duration) string {
	p := op.policy
	switch {
	case d > p.MaxRetryAfter:
		return fmt.Sprintf("the answer asks for %s before the next attempt, more than the retry policy's MaxRetryAfter (%s)", d, p.MaxRetryAfter)
	case p.MaxElapsedTime > 0 && op.bo.GetElapsedTime()+d > p.MaxElapsedTime:
		return fmt.Sprintf("the answer asks for %s before the next attempt, past the retry policy's MaxElapsedTime (%s)", d, p.MaxElapsedTime)
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < d {
		return fmt.Sprintf("the answer asks for %s before the next attempt, past the context's deadline", d)
	}
	return ""
}

// recover decides on a final answer: an error answer the signer recovers
// from (once per operation) is repeated at once. The error answer is
// decoded here (or in advise), once.
func (op *operation) recover(resp *http.Response) bool {
	if resp.StatusCode < 400 {
		return false
	}
	if op.errAnswer == nil {
		op.errAnswer = op.apiError(resp, op.respBody)
	}
	if op.recovered || !recoverSigner(op.ctx, op.c.signer, resp, op.errAnswer) {
		return false
	}
	op.recovered = true
	op.debug("payonce repeating attempt after signer recovery", slog.String("code", op.errAnswer.Code))
	op.plan = retryPlan{cause: corekit.CauseSignerRecovery}
	return true
}

// exhaustedError ends a loop whose last failure was retryable but no
// retry was left (attempts, the backoff's time, or a provider's least
// wait the call cannot afford, why): err is the last transport failure,
// nil for a retryable answer.
type exhaustedError struct {
	err error
	why string
}

func (e *exhaustedError) Error() string {
	switch {
	case e.err != nil:
		return e.err.Error()
	case e.why != "":
		return ErrRetriesExhausted.Error() + ": " + e.why
	}
	return ErrRetriesExhausted.Error()
}

func (e *exhaustedError) Unwrap() error { return e.err }

// passThrough is the client's go-retryablehttp ErrorHandler: it hands
// the last answer and error back unchanged (its default error names the
// URL with its query string).
func passThrough(resp *http.Response, err error, _ int) (*http.Response, error) {
	return resp, err
}

// noWait is the client's go-retryablehttp Backoff: the wait checkRetry
// chose is the next attempt's own (admit, in attempt.go), on the
// operation's clock and context, since go-retryablehttp hands its Backoff
// no request to find the operation by after a transport failure.
func noWait(_, _ time.Duration, _ int, _ *http.Response) time.Duration { return 0 }

// classify ends the loop: the final answer (a 2xx, or a 304 to a
// conditional request) gives the operation's Meta and returns what its
// retries spent to the budget; any other answer or failure becomes the
// operation's *APIError.
func (op *operation) classify(resp *http.Response, err error) (Meta, error) {
	m := op.meta(resp)
	switch {
	case err != nil:
		return m, op.failure(resp, err)
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		if resp.StatusCode != http.StatusNotModified || !op.conditional() {
			e := op.fail(ErrRedirectRefused, unfollowed(op.req.Method, len(op.body) > 0, resp))
			op.fill(e, resp)
			return m, e
		}
	case resp.StatusCode < 200 || resp.StatusCode >= 300:
		if op.errAnswer == nil {
			op.errAnswer = op.apiError(resp, op.respBody)
		}
		return m, op.errAnswer
	}
	if op.c.budget != nil {
		op.c.budget.release(op.spent)
	}
	return m, nil
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

// apiError maps an error answer to an *APIError: the codec reads the body
// and its provider's codes, then the status table chooses the kind.
func (op *operation) apiError(resp *http.Response, body []byte) *APIError {
	e := &APIError{}
	op.c.codec.DecodeError(resp.StatusCode, resp.Header, body, e)
	op.fill(e, resp)
	if e.Kind == nil { // the codec knows no kind for the answer's code
		e.Kind = KindForStatus(resp.StatusCode)
	}
	if d, ok := parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
		e.RetryAfter = d
	}
	return e
}

// failure maps a loop that ended in an error to an *APIError: the kind
// says whether the operation is final or resumable with its key.
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
	var redirect *redirectError
	var exhausted *exhaustedError
	var ls *lookupStop
	switch {
	case op.ctx.Err() != nil && !errors.As(err, &ls):
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
	case errors.As(err, &exhausted):
		if last == nil {
			e := op.fail(ErrRetriesExhausted, fmt.Errorf("%w: %w", ErrTransport, cleanTransportError(exhausted.err)))
			if resp != nil {
				op.fill(e, resp)
			}
			return e
		}
		e := withLast(ErrRetriesExhausted)
		if exhausted.why != "" {
			e.Err = fmt.Errorf("%w; %s", last.Kind, exhausted.why)
		}
		return e
	case errors.Is(err, ErrMalformedResponse):
		return op.fail(ErrMalformedResponse, cause)
	case errors.As(err, &stop):
		e := withLast(stopKind(err))
		if ls := (*lookupStop)(nil); errors.As(err, &ls) {
			e.Err = ls // what the lookup said, not the lost answer's kind
		}
		return e
	}
	return withLast(ErrTransport)
}

// stopKind is the kind of an error that stopped the loop in the client
// (a signer that could not get credentials, a refused redirect): a refusal
// keeps its kind, so that IsTemporary tells a job queue not to try again
// with bad credentials; anything else is a transport failure.
func stopKind(err error) error {
	for _, k := range []error{ErrOutcomeUnknown, ErrJournalFenced, ErrJournal, ErrUnauthorized, ErrForbidden, ErrInvalidConfig, ErrInvalidRequest} {
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
	var rerr *readError
	var ue *url.Error
	if errors.As(err, &ue) {
		switch {
		case errors.As(ue.Err, &stop):
			return stop.err // the client's own stop: the method adds nothing
		case errors.As(ue.Err, &rerr):
			return rerr.err // the answer came: the method adds nothing
		}
		return fmt.Errorf("%s: %w", strings.ToLower(ue.Op), ue.Err)
	}
	if errors.As(err, &stop) {
		return stop.err
	}
	return err
}
