package payonce

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An error answer over the 1 MiB cap is read up to the cap and still
// decoded into a typed error; it is not retried.
func TestHugeErrorBodyIsCapped(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"code":400,"message_key":"openapi_invalid_request","message":"`+strings.Repeat("x", 3<<20)+`"}`)
	}))
	defer srv.Close()
	c, err := NewClient(WithBaseURL(srv.URL), WithRetryPolicy(fastPolicy()))
	require.NoError(t, err)
	_, err = c.Do(context.Background(), postReq(), nil)
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrInvalidRequest)
	assert.Less(t, len(err.Error()), maxErrorBody+1024, "no more than the cap is kept")
	assert.Equal(t, int32(1), n.Load())
	assert.NotEmpty(t, KeyOf(err).ID())
}

// The give-up error of exhausted retries never holds the query string.
func TestExhaustedErrorHasNoQueryString(t *testing.T) {
	rec := &recorder{statuses: []int{503}}
	c := setup(t, rec)
	req := &Request{Operation: "cards.list", Method: http.MethodGet, Path: "/cards", Query: url.Values{"token": {"SECRETQ123"}}}
	_, err := c.Do(context.Background(), req, nil)
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrRetriesExhausted)
	assert.NotContains(t, err.Error(), "SECRETQ123")
	assert.NotContains(t, err.Error(), "token=")
	assert.Len(t, rec.seen(), 5, "a GET is retried without a key")
}

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

// An expired context is never retried.
func TestExpiredContextIsNotRetried(t *testing.T) {
	rec := &recorder{statuses: []int{503}}
	p := fastPolicy()
	p.MaxAttempts = 100
	p.InitialInterval, p.MaxInterval = 20*time.Millisecond, 20*time.Millisecond
	// No jitter: waits of exactly 20 ms fit at most three attempts in the
	// 50 ms (with ±50% jitter, four 10 ms waits could fit a fifth).
	p.RandomizationFactor = 0
	c := setup(t, rec, WithRetryPolicy(p))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := c.Do(ctx, postReq(), nil)
	require.Error(t, err)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.NotEmpty(t, KeyOf(err).ID())
	assert.LessOrEqual(t, len(rec.seen()), 4)
}

// A cancel during a long wait ends it within milliseconds.
func TestCancelEndsWaitWithinMilliseconds(t *testing.T) {
	rec := &recorder{statuses: []int{503}, header: http.Header{"Retry-After": {"30"}}}
	p := fastPolicy()
	p.MaxRetryAfter = time.Minute
	ctx, cancel := context.WithCancel(context.Background())
	var cancelled time.Time
	// Cancelled as the 30 s wait begins (not on a timer a loaded machine
	// could fire before the first answer); the bound is a tenth of the
	// wait, so only a wait that ignores the cancel can break it.
	c := setup(t, rec, WithRetryPolicy(p), onRetry(func() { cancelled = time.Now(); cancel() }))
	_, err := c.Do(ctx, postReq(), nil)
	returned := time.Now()
	assert.ErrorIs(t, err, context.Canceled)
	require.False(t, cancelled.IsZero(), "cancelled during the wait")
	assert.Less(t, returned.Sub(cancelled), 3*time.Second)
	assert.Len(t, rec.seen(), 1, "no attempt after the cancel")
}

// The defaults: a User-Agent, sane timeouts, and no log output.
func TestClientDefaults(t *testing.T) {
	var ua atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { ua.Store(r.UserAgent()) }))
	defer srv.Close()
	c, err := NewClient(WithBaseURL(srv.URL))
	require.NoError(t, err)
	_, err = c.Do(context.Background(), postReq(), nil)
	require.NoError(t, err)
	assert.Equal(t, defaultUserAgent, ua.Load())
	assert.False(t, c.Logger().Enabled(context.Background(), slog.LevelError), "silent by default")
	assert.Equal(t, 60*time.Second, c.HTTPClient().Timeout)
	tr := c.HTTPClient().Transport.(*http.Transport)
	assert.Equal(t, 10*time.Second, tr.TLSHandshakeTimeout)
	assert.Zero(t, tr.ResponseHeaderTimeout, "the attempt's timeout bounds the wait for headers")
	c2, err := NewClient(WithBaseURL(srv.URL), WithUserAgent("merchant/1.0"))
	require.NoError(t, err)
	_, err = c2.Do(context.Background(), postReq(), nil)
	require.NoError(t, err)
	assert.Equal(t, "merchant/1.0", ua.Load())
	_, err = NewClient(WithBaseURL(srv.URL), WithSigner(nil))
	assert.ErrorIs(t, err, ErrInvalidConfig)
	_, err = NewClient(WithBaseURL(srv.URL), WithLimiter(nil))
	assert.ErrorIs(t, err, ErrInvalidConfig)
}

// A context that ends while an attempt is in flight leaves the operation in
// doubt (the server may have executed it): the error is temporary, so a job
// queue that branches on IsTemporary resumes it with the same key instead
// of giving up on it.
func TestContextEndedInFlightIsTemporaryAndResumable(t *testing.T) {
	var mu sync.Mutex
	executed := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get(HeaderIdempotencyKey)
		mu.Lock()
		executed[key]++
		first := executed[key] == 1
		mu.Unlock()
		if first {
			time.Sleep(200 * time.Millisecond) // committed, answer late
		}
		_, _ = io.WriteString(w, `{}`)
	}))
	defer srv.Close()
	c, err := NewClient(WithBaseURL(srv.URL), WithRetryPolicy(fastPolicy()))
	require.NoError(t, err)
	for _, end := range []func(context.Context) (context.Context, context.CancelFunc){
		func(ctx context.Context) (context.Context, context.CancelFunc) {
			return context.WithTimeout(ctx, 30*time.Millisecond)
		},
		func(ctx context.Context) (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(ctx)
			time.AfterFunc(30*time.Millisecond, cancel)
			return ctx, cancel
		},
	} {
		ctx, cancel := end(context.Background())
		_, err = c.Do(ctx, postReq(), nil)
		cancel()
		require.Error(t, err)
		assert.True(t, IsTemporary(err), "an operation cut off in flight must be resumed, not dropped: %v", err)
		key := KeyOf(err).ID()
		require.NotEmpty(t, key)
		meta, err := c.Do(context.Background(), postReq(), nil, WithKey(KeyOf(err)))
		require.NoError(t, err)
		assert.Equal(t, key, meta.Key.ID(), "resumed with the same key")
	}
}
