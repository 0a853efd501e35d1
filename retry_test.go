package payonce

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFinalStatusesAreNotRetried(t *testing.T) {
	for _, status := range []int{400, 401, 403, 404, 405, 409, 413, 422, 501} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			rec := &recorder{statuses: []int{status}}
			c := setup(t, rec)
			meta, err := c.Do(context.Background(), postReq(), nil)
			require.Error(t, err)
			assert.Len(t, rec.seen(), 1, "a %d can never succeed on a retry", status)
			assert.Equal(t, 1, meta.Attempts)
			assert.Equal(t, meta.Key.String(), KeyOf(err).String())
			assert.False(t, IsTemporary(err) && status != 501)
		})
	}
}

func TestRetryableStatusesAreRetried(t *testing.T) {
	for _, status := range []int{429, 500, 502, 503, 504} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			rec := &recorder{statuses: []int{status, status, 201}}
			c := setup(t, rec)
			meta, err := c.Do(context.Background(), postReq(), nil)
			require.NoError(t, err)
			assert.Equal(t, 3, meta.Attempts)
			assert.Equal(t, 201, meta.StatusCode)
		})
	}
}

func TestExhaustedCarriesKeyAndLastAnswer(t *testing.T) {
	rec := &recorder{statuses: []int{503}, body: `{"code":503,"message":"busy","message_key":"openapi_busy"}`}
	c := setup(t, rec, WithRetryPolicy(func() RetryPolicy { p := fastPolicy(); p.MaxAttempts = 3; return p }()))
	_, err := c.Do(context.Background(), postReq(), nil, WithKey(testKey("order-42")))
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrRetriesExhausted)
	assert.ErrorIs(t, err, ErrServer)
	var ae *APIError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "order-42", ae.Key.String())
	assert.Equal(t, 3, ae.Attempts)
	assert.Equal(t, 503, ae.StatusCode)
	assert.Equal(t, "openapi_busy", ae.Code)
	assert.True(t, ae.temporary())
	assert.Contains(t, err.Error(), "order-42")
	for _, a := range rec.seen() {
		assert.Equal(t, "order-42", a.Key)
	}
}

// hijackFirst drops the connection without an answer on the first n
// requests (the request reached the server; the answer is lost).
func hijackFirst(n int32, then http.Handler) (http.Handler, *atomic.Int32) {
	var count atomic.Int32
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if count.Add(1) <= n {
			_, _ = io.ReadAll(r.Body)
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				_ = conn.Close()
			}
			return
		}
		then.ServeHTTP(w, r)
	}), &count
}

func TestConnectionErrorsAreRetried(t *testing.T) {
	rec := &recorder{}
	h, count := hijackFirst(2, rec)
	srv := httptest.NewServer(h)
	defer srv.Close()
	c, err := NewClient(WithBaseURL(srv.URL), WithRetryPolicy(fastPolicy()))
	require.NoError(t, err)
	meta, err := c.Do(context.Background(), postReq(), nil)
	require.NoError(t, err)
	assert.Equal(t, int32(3), count.Load())
	assert.Equal(t, 3, meta.Attempts)
	assert.Equal(t, meta.Key.String(), rec.seen()[0].Key)
}

func TestConnectionRefusedIsRetriedThenExhausted(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	c, err := NewClient(WithBaseURL("http://"+addr), WithRetryPolicy(fastPolicy()))
	require.NoError(t, err)
	_, err = c.Do(context.Background(), postReq(), nil)
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrRetriesExhausted)
	assert.ErrorIs(t, err, ErrTransport)
	assert.NotEmpty(t, KeyOf(err).String())
	assert.NotContains(t, err.Error(), "?")
}

// cutShort answers 200 announcing 100 bytes, sends 6 and drops the
// connection.
func cutShort(w http.ResponseWriter) {
	w.Header().Set("Content-Length", "100")
	w.WriteHeader(200)
	_, _ = io.WriteString(w, `{"ok":`)
	w.(http.Flusher).Flush()
	conn, _, _ := w.(http.Hijacker).Hijack()
	_ = conn.Close()
}

// hangTimeout is the attempt timeout of tests against a server that
// leaves the first attempt without an answer: it ends that attempt. The
// server answers every later attempt at once, but on a loaded -race
// machine one may still outlast hangTimeout and be retried, rightly: so
// these tests count at least two attempts rather than exactly two, and
// hangPolicy leaves attempts to spare.
const hangTimeout = 150 * time.Millisecond

// hangPolicy is fastPolicy with the attempt timeout hangTimeout and
// enough attempts that a few slow ones on a loaded machine do not
// exhaust them.
func hangPolicy() RetryPolicy {
	p := fastPolicy()
	p.AttemptTimeout = hangTimeout
	p.MaxAttempts = 10
	return p
}

// hangFirst is a handler that leaves the first request without an answer
// (until the client gives up on it) and answers the others with {}.
func hangFirst() http.Handler {
	var n atomic.Int32
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			// net/http notices a client that hangs up (and cancels the
			// request's context) only once the body has been read.
			_, _ = io.Copy(io.Discard, r.Body)
			select {
			case <-r.Context().Done():
			case <-time.After(time.Minute):
			}
			return
		}
		_, _ = io.WriteString(w, `{}`)
	})
}

func TestBodyLostMidAnswerIsRetried(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			cutShort(w)
			return
		}
		_, _ = io.WriteString(w, `{"ok":true}`)
	}))
	defer srv.Close()
	c, err := NewClient(WithBaseURL(srv.URL), WithRetryPolicy(fastPolicy()))
	require.NoError(t, err)
	var out struct{ OK bool }
	meta, err := c.Do(context.Background(), postReq(), &out)
	require.NoError(t, err)
	assert.True(t, out.OK)
	assert.Equal(t, 2, meta.Attempts)
}

func TestPerAttemptTimeoutIsRetried(t *testing.T) {
	t.Parallel() // waits out real attempt timeouts: overlap them
	srv := httptest.NewServer(hangFirst())
	defer srv.Close()
	var first AttemptResult
	obs := Observer{EndAttempt: func(_ context.Context, r AttemptResult) {
		if r.Attempt == 1 {
			first = r
		}
	}}
	c, err := NewClient(WithBaseURL(srv.URL), WithRetryPolicy(hangPolicy()), WithObserver(obs))
	require.NoError(t, err)
	meta, err := c.Do(context.Background(), postReq(), nil)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, meta.Attempts, 2)
	assert.Equal(t, "timeout", first.RetryCause, "the hung attempt timed out and was retried")
}

func TestTLSCertificateErrorsAreNotRetried(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { n.Add(1) }))
	defer srv.Close()
	// The first certificate check in a process loads the system roots
	// once; in a loaded -race run that can outlast fastRetryPolicy's 2 s
	// attempt timeout, and a timed-out handshake is rightly retried. The
	// point here is the certificate error alone.
	p := fastPolicy()
	p.AttemptTimeout = generousAttemptTimeout
	c, err := NewClient(WithBaseURL(srv.URL), WithRetryPolicy(p)) // default client does not trust the test CA
	require.NoError(t, err)
	meta, err := c.Do(context.Background(), postReq(), nil)
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrTransport)
	assert.NotErrorIs(t, err, ErrRetriesExhausted)
	assert.Equal(t, 1, meta.Attempts)
	assert.NotEmpty(t, KeyOf(err).String())
	assert.Zero(t, n.Load())
}

func TestCancelDuringWaitReturnsAtOnce(t *testing.T) {
	rec := &recorder{statuses: []int{429}, header: http.Header{"Retry-After": {"30"}}}
	p := fastPolicy()
	p.MaxRetryAfter = time.Minute
	p.AttemptTimeout = generousAttemptTimeout
	ctx, cancel := context.WithCancel(context.Background())
	var cancelled time.Time
	// Cancelled when the 30 s wait begins, not on a timer that a loaded
	// machine could fire before the first answer arrives.
	c := setup(t, rec, WithRetryPolicy(p), onRetry(func() { cancelled = time.Now(); cancel() }))
	_, err := c.Do(ctx, postReq(), nil)
	elapsed := time.Since(cancelled)
	require.Error(t, err)
	assert.ErrorIs(t, err, context.Canceled)
	require.False(t, cancelled.IsZero(), "cancelled during the wait")
	assert.Less(t, elapsed, 3*time.Second, "a tenth of the 30 s Retry-After it would otherwise wait")
	assert.NotEmpty(t, KeyOf(err).String())
	assert.Len(t, rec.seen(), 1)
}

func TestRetryAfterHonouredAndCapped(t *testing.T) {
	t.Parallel() // waits out a real Retry-After of 1 s: overlap it
	gap := func(t *testing.T, maxRetryAfter time.Duration, header string) time.Duration {
		var mu sync.Mutex
		var times []time.Time
		var n atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			times = append(times, time.Now())
			mu.Unlock()
			if n.Add(1) == 1 {
				w.Header().Set("Retry-After", header)
				w.WriteHeader(429)
				return
			}
			_, _ = io.WriteString(w, `{}`)
		}))
		defer srv.Close()
		p := fastPolicy()
		p.MaxRetryAfter = maxRetryAfter
		c, err := NewClient(WithBaseURL(srv.URL), WithRetryPolicy(p))
		require.NoError(t, err)
		_, err = c.Do(context.Background(), postReq(), nil)
		require.NoError(t, err)
		require.Len(t, times, 2)
		return times[1].Sub(times[0])
	}
	t.Run("capped", func(t *testing.T) {
		d := gap(t, 40*time.Millisecond, "60")
		assert.GreaterOrEqual(t, d, 40*time.Millisecond)
		assert.Less(t, d, 6*time.Second, "a tenth of the 60 s asked for")
	})
	t.Run("honoured", func(t *testing.T) {
		d := gap(t, 5*time.Second, "1")
		assert.GreaterOrEqual(t, d, 950*time.Millisecond)
	})
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	d, ok := parseRetryAfter("7", now)
	assert.True(t, ok)
	assert.Equal(t, 7*time.Second, d)
	d, ok = parseRetryAfter(now.Add(90*time.Second).Format(http.TimeFormat), now)
	assert.True(t, ok)
	assert.Equal(t, 90*time.Second, d)
	d, ok = parseRetryAfter(now.Add(-time.Hour).Format(http.TimeFormat), now)
	assert.True(t, ok)
	assert.Zero(t, d)
	for _, v := range []string{"", "-1", "soon"} {
		_, ok = parseRetryAfter(v, now)
		assert.False(t, ok, v)
	}
}

func TestKeyAgeGuardRefusesStaleKeyBeforeSending(t *testing.T) {
	rec := &recorder{}
	c := setup(t, rec)
	created := time.Now().Add(-23*time.Hour - time.Minute) // window 24 h minus 1 h margin is past
	meta, err := c.Do(context.Background(), postReq(), nil, WithKey(testKeyAt("old-key", created)))
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrKeyExpired)
	assert.Equal(t, "old-key", KeyOf(err).String())
	assert.Empty(t, rec.seen(), "nothing may be sent with a key the server may have forgotten")
	assert.Zero(t, meta.Attempts)
	assert.False(t, IsTemporary(err))
}

func TestKeyAgeGuardStopsLoopCrossingTheWindow(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		mu.Lock()
		now = now.Add(30 * time.Minute) // each attempt "takes" half an hour
		mu.Unlock()
		w.WriteHeader(503)
	}))
	defer srv.Close()
	p := fastPolicy()
	p.MaxAttempts = 10
	c, err := NewClient(WithBaseURL(srv.URL), WithRetryPolicy(p), WithClock(clock), WithTestKeyRules(a55Rules()))
	require.NoError(t, err)
	created := now.Add(-22 * time.Hour)
	_, err = c.Do(context.Background(), postReq(), nil, WithKey(testKeyAt("order-123456789012", created)))
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrKeyExpired)
	assert.ErrorIs(t, err, ErrServer, "the last answer is kept as the cause")
	assert.Equal(t, int32(2), hits.Load(), "attempts at 22h and 22h30m; 23h is past the window minus margin")
	assert.Equal(t, "order-123456789012", KeyOf(err).String())
}

func TestRetryBudget(t *testing.T) {
	t.Run("spent budget fails fast with the key", func(t *testing.T) {
		rec := &recorder{statuses: []int{503}}
		p := fastPolicy()
		p.MaxAttempts = 10
		budget := NewRetryBudget(10)
		c := setup(t, rec, WithRetryPolicy(p), WithRetryBudget(budget))
		_, err := c.Do(context.Background(), postReq(), nil)
		require.Error(t, err)
		assert.ErrorIs(t, err, ErrRetryBudgetExhausted)
		assert.ErrorIs(t, err, ErrRetriesExhausted, "a spent budget is one way retries run out")
		assert.NotEmpty(t, KeyOf(err).String())
		assert.Len(t, rec.seen(), 3, "two retries of cost 5 each, then no more")
		assert.Equal(t, 0, budget.Available())
		_, err = c.Do(context.Background(), postReq(), nil)
		assert.ErrorIs(t, err, ErrRetryBudgetExhausted)
		assert.Len(t, rec.seen(), 4, "the next operation gets its first attempt, no retry")
	})
	t.Run("successes refill it", func(t *testing.T) {
		rec := &recorder{statuses: []int{503, 200}}
		budget := NewRetryBudget(20)
		c := setup(t, rec, WithRetryBudget(budget))
		_, err := c.Do(context.Background(), postReq(), nil)
		require.NoError(t, err)
		assert.Equal(t, 20, budget.Available(), "a retry that succeeded gives back its cost")
		budget.acquire(false)
		rec2 := &recorder{}
		c2 := setup(t, rec2, WithRetryBudget(budget))
		_, err = c2.Do(context.Background(), postReq(), nil)
		require.NoError(t, err)
		assert.Equal(t, 16, budget.Available())
	})
}

func TestMaxElapsedTimeStopsRetries(t *testing.T) {
	rec := &recorder{statuses: []int{503}}
	p := fastPolicy()
	p.MaxAttempts = 1000
	p.InitialInterval, p.MaxInterval = 10*time.Millisecond, 10*time.Millisecond
	p.MaxElapsedTime = 60 * time.Millisecond
	c := setup(t, rec, WithRetryPolicy(p))
	_, err := c.Do(context.Background(), postReq(), nil)
	assert.ErrorIs(t, err, ErrRetriesExhausted)
	assert.Less(t, len(rec.seen()), 12)
}

// MaxElapsedTime says no retry starts after it, and a server's
// Retry-After does not lift it: a wait that would start the retry past it
// ends the operation at once (retries exhausted, with the last answer and
// the key) instead of sleeping to send a retry the policy forbids.
func TestRetryAfterDoesNotOutrunMaxElapsedTime(t *testing.T) {
	rec := &recorder{statuses: []int{503}, header: http.Header{"Retry-After": {"30"}}}
	p := fastPolicy()
	p.MaxElapsedTime = time.Second
	p.MaxRetryAfter = time.Minute
	c := setup(t, rec, WithRetryPolicy(p))
	start := time.Now()
	m, err := c.Do(context.Background(), postReq(), nil)
	require.ErrorIs(t, err, ErrRetriesExhausted)
	var apiErr *APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusServiceUnavailable, apiErr.StatusCode)
	assert.Equal(t, m.Key.String(), KeyOf(err).String())
	assert.True(t, IsResumable(err))
	assert.Len(t, rec.seen(), 1, "no retry 30 s later, past MaxElapsedTime")
	assert.Less(t, time.Since(start), 20*time.Second)
}

func TestRetryPolicyValidate(t *testing.T) {
	bad := []func(*RetryPolicy){
		func(p *RetryPolicy) { p.MaxAttempts = 0 },
		func(p *RetryPolicy) { p.InitialInterval = -1 },
		func(p *RetryPolicy) { p.MaxInterval = p.InitialInterval - 1 },
		func(p *RetryPolicy) { p.Multiplier = 0.5 },
		func(p *RetryPolicy) { p.RandomizationFactor = 2 },
		func(p *RetryPolicy) { p.MaxRetryAfter = -1 },
		func(p *RetryPolicy) { p.MaxRetryAfter = 0 },
		func(p *RetryPolicy) { p.KeySafetyMargin = 0 },
		func(p *RetryPolicy) { p.KeySafetyMargin = p.AttemptTimeout - time.Nanosecond },
		func(p *RetryPolicy) { p.AttemptTimeout = 0; p.KeySafetyMargin = 0 },
	}
	for i, mutate := range bad {
		p := DefaultRetryPolicy()
		mutate(&p)
		assert.ErrorIs(t, p.validate(), ErrInvalidConfig, i)
		_, err := NewClient(WithBaseURL("https://x"), WithRetryPolicy(p))
		assert.ErrorIs(t, err, ErrInvalidConfig, i)
	}
	assert.NoError(t, DefaultRetryPolicy().validate())
	assert.NoError(t, fastRetryPolicy().validate())
	p := DefaultRetryPolicy()
	p.KeySafetyMargin = p.AttemptTimeout
	assert.NoError(t, p.validate(), "a margin of one attempt timeout is enough")
}

// A NaN slips past every ordered comparison: a policy with a NaN
// Multiplier or RandomizationFactor made the backoff's waits negative, so
// every retry went out at once (no backoff at all). Such a policy is
// refused, by Validate, NewClient and per call, before anything is sent.
func TestRetryPolicyRefusesNaNAndInfinity(t *testing.T) {
	rec := &recorder{statuses: []int{503}}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	c, err := NewClient(WithBaseURL(srv.URL), WithRetryPolicy(fastPolicy()))
	require.NoError(t, err)
	bad := []func(*RetryPolicy){
		func(p *RetryPolicy) { p.Multiplier = math.NaN() },
		func(p *RetryPolicy) { p.Multiplier = math.Inf(1) },
		func(p *RetryPolicy) { p.RandomizationFactor = math.NaN() },
	}
	for i, mutate := range bad {
		p := fastPolicy()
		mutate(&p)
		assert.ErrorIs(t, p.validate(), ErrInvalidConfig, i)
		_, err := NewClient(WithBaseURL(srv.URL), WithRetryPolicy(p))
		assert.ErrorIs(t, err, ErrInvalidConfig, i)
		_, err = c.Do(context.Background(), postReq(), nil, WithCallRetryPolicy(p))
		require.ErrorIs(t, err, ErrInvalidConfig, i)
		assert.NotEmpty(t, KeyOf(err).String(), i)
	}
	assert.Empty(t, rec.seen(), "nothing sent")
}

// An attempt sent just inside the key's window can arrive after it: the
// margin must cover the attempt's whole timeout, whichever sets it (the
// policy, the call or the http.Client), and a policy without one is
// refused per call as well, before anything is sent.
func TestKeySafetyMarginCoversTheAttemptTimeout(t *testing.T) {
	rec := &recorder{}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	c, err := NewClient(WithBaseURL(srv.URL), WithRetryPolicy(fastPolicy()), WithTestKeyRules(a55Rules()))
	require.NoError(t, err)
	p := fastPolicy()
	p.KeySafetyMargin = 0
	_, err = c.Do(context.Background(), postReq(), nil, WithCallRetryPolicy(p))
	require.ErrorIs(t, err, ErrInvalidConfig)
	assert.Contains(t, err.Error(), "KeySafetyMargin")
	long := fastPolicy()
	long.KeySafetyMargin = time.Minute
	_, err = c.Do(context.Background(), postReq(), nil, WithCallRetryPolicy(long), WithCallTimeout(2*time.Minute))
	require.ErrorIs(t, err, ErrInvalidConfig)
	assert.Contains(t, err.Error(), "KeySafetyMargin")
	long.AttemptTimeout = 0
	hc, err := NewClient(WithBaseURL(srv.URL), WithRetryPolicy(long), WithTestKeyRules(a55Rules()),
		WithHTTPClient(&http.Client{Timeout: 2 * time.Minute}))
	require.NoError(t, err)
	_, err = hc.Do(context.Background(), postReq(), nil)
	require.ErrorIs(t, err, ErrInvalidConfig)
	assert.Empty(t, rec.seen(), "nothing was sent")
	_, err = c.Do(context.Background(), postReq(), nil, WithCallRetryPolicy(long), WithCallTimeout(time.Second))
	require.NoError(t, err)
}

func TestNoKeyMeansNoRetry(t *testing.T) {
	rec := &recorder{statuses: []int{503}}
	c := setup(t, rec, WithTestKeyRules(a55Rules()))
	meta, err := c.Do(context.Background(), postReq(), nil, WithoutKey())
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrServer)
	assert.Empty(t, meta.Key)
	assert.Len(t, rec.seen(), 1, "without a key a retry would be a second operation")
	assert.Empty(t, rec.seen()[0].Key)
}

func TestRetryableError(t *testing.T) {
	assert.False(t, retryableError(nil))
	assert.False(t, retryableError(context.Canceled))
	assert.False(t, retryableError(&stopError{err: ErrKeyExpired}))
	assert.True(t, retryableError(io.ErrUnexpectedEOF))
	assert.True(t, retryableError(&net.OpError{Op: "dial", Err: fmt.Errorf("connection refused")}))
	assert.True(t, strings.Contains(fmt.Sprint(ErrRetriesExhausted), "retries"))
}

// A final answer (a 409 here) whose body is cut short is still final: a
// retry of a conflict can never succeed, and a 4xx must never be repeated.
func TestFinalAnswerWithLostBodyIsNotRetried(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		_, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Length", "200")
		w.WriteHeader(http.StatusConflict)
		_, _ = io.WriteString(w, `{"code":409,"message_key":"openapi_idem`)
		w.(http.Flusher).Flush()
		conn, _, _ := w.(http.Hijacker).Hijack()
		_ = conn.Close()
	}))
	defer srv.Close()
	c, err := NewClient(WithBaseURL(srv.URL), WithRetryPolicy(fastPolicy()))
	require.NoError(t, err)
	meta, err := c.Do(context.Background(), postReq(), nil)
	require.Error(t, err)
	assert.Equal(t, int32(1), n.Load(), "a 409 is final even when its body is lost")
	assert.Equal(t, 1, meta.Attempts)
	assert.ErrorIs(t, err, ErrIdempotencyConflict)
	assert.False(t, IsTemporary(err))
	assert.Equal(t, meta.Key.String(), KeyOf(err).String())
	assert.NotEmpty(t, KeyOf(err).String())
}

// An unkeyed POST (Keyed false) has nothing that lets the server tell a
// retry from a new operation: it is never repeated. Idempotent methods are.
func TestUnkeyedNonIdempotentMethodsAreNotRetried(t *testing.T) {
	for _, method := range []string{http.MethodPost, http.MethodPatch} {
		t.Run(method, func(t *testing.T) {
			h, count := hijackFirst(1, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusServiceUnavailable)
			}))
			srv := httptest.NewServer(h)
			defer srv.Close()
			c, err := NewClient(WithBaseURL(srv.URL), WithRetryPolicy(fastPolicy()))
			require.NoError(t, err)
			_, err = c.Do(context.Background(), &Request{Operation: "raw", Method: method, Path: "/x", Body: map[string]int{"a": 1}}, nil)
			require.Error(t, err)
			assert.Equal(t, int32(1), count.Load(), "a lost answer to an unkeyed %s may hide an executed operation", method)
		})
	}
	rec := &recorder{statuses: []int{503, 200}}
	c := setup(t, rec)
	_, err := c.Do(context.Background(), &Request{Operation: "raw", Method: http.MethodGet, Path: "/x"}, nil)
	require.NoError(t, err)
	assert.Len(t, rec.seen(), 2, "a GET is retried")
}

// TLS failures that a retry cannot mend are not retried: a protocol
// version the server refuses, and plain HTTP where TLS was expected.
func TestTLSProtocolFailuresAreNotRetried(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	srv.TLS = &tls.Config{MinVersion: tls.VersionTLS13}
	srv.StartTLS()
	defer srv.Close()
	tr := srv.Client().Transport.(*http.Transport).Clone()
	tr.TLSClientConfig.MaxVersion = tls.VersionTLS12
	rt := &urlRecorder{next: tr}
	c, err := NewClient(WithBaseURL(srv.URL), WithRetryPolicy(fastPolicy()), WithHTTPClient(&http.Client{Transport: rt}))
	require.NoError(t, err)
	meta, err := c.Do(context.Background(), postReq(), nil)
	require.Error(t, err)
	assert.NotErrorIs(t, err, ErrRetriesExhausted, "%v", err)
	assert.Equal(t, 1, meta.Attempts)
	assert.Len(t, rt.urls, 1)
	assert.Zero(t, hits.Load())

	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer plain.Close()
	c, err = NewClient(WithBaseURL(strings.Replace(plain.URL, "http://", "https://", 1)), WithRetryPolicy(fastPolicy()))
	require.NoError(t, err)
	meta, err = c.Do(context.Background(), postReq(), nil)
	require.Error(t, err)
	assert.NotErrorIs(t, err, ErrRetriesExhausted, "%v", err)
	assert.Equal(t, 1, meta.Attempts)
}

func TestRetryableErrorTLSShapes(t *testing.T) {
	for _, err := range []error{
		tls.AlertError(70),
		tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"},
		errors.New("http: server gave HTTP response to HTTPS client"),
		&net.OpError{Op: "remote error", Err: fakeAlert("tls: protocol version not supported")},
		&net.OpError{Op: "local error", Err: fakeAlert("tls: unexpected message")},
		x509.UnknownAuthorityError{},
		x509.CertificateInvalidError{},
		x509.HostnameError{},
		x509.SystemRootsError{},
		x509.ConstraintViolationError{},
		x509.UnhandledCriticalExtension{},
		x509.InsecureAlgorithmError(x509.SHA1WithRSA),
		&tls.CertificateVerificationError{Err: errors.New("x")},
		fmt.Errorf("dial: %w", errors.New("tls: server selected unsupported protocol version 301")),
	} {
		assert.False(t, retryableError(err), "%T %v", err, err)
	}
	assert.True(t, retryableError(io.ErrUnexpectedEOF))
	assert.True(t, retryableError(&net.OpError{Op: "read", Err: errors.New("connection reset by peer")}))
}

type fakeAlert string

func (a fakeAlert) Error() string { return string(a) }

// Each operation's wait schedule grows exponentially within the jitter.
func TestBackOffScheduleIsJitteredExponential(t *testing.T) {
	p := DefaultRetryPolicy()
	p.InitialInterval, p.MaxInterval, p.Multiplier, p.RandomizationFactor = 100*time.Millisecond, 10*time.Second, 2, 0.5
	seen := map[time.Duration]bool{}
	for range 20 {
		b := p.newBackOff()
		interval := p.InitialInterval
		for i := 0; i < 5; i++ {
			d := b.NextBackOff()
			lo := time.Duration(float64(interval) * (1 - p.RandomizationFactor))
			hi := time.Duration(float64(interval) * (1 + p.RandomizationFactor))
			assert.GreaterOrEqual(t, d, lo, "retry %d", i)
			assert.LessOrEqual(t, d, hi, "retry %d", i)
			seen[d] = true
			interval *= 2
		}
	}
	assert.Greater(t, len(seen), 50, "waits are jittered, not fixed")
	a, b := p.newBackOff(), p.newBackOff()
	assert.NotSame(t, a, b, "one schedule per operation")
}
