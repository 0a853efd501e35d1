package payonce

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payonce/payonce/internal/corekit"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A 2xx whose body is cut short on the last attempt is a temporary
// transport failure with its cause, resumable with the key.
func TestCutShortSuccessOnLastAttemptKeepsItsCause(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { cutShort(w) }))
	defer srv.Close()
	p := fastPolicy()
	p.MaxAttempts = 2
	c, err := NewClient(WithBaseURL(srv.URL), WithRetryPolicy(p))
	require.NoError(t, err)
	_, err = c.Do(context.Background(), postReq(), nil)
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrRetriesExhausted)
	assert.ErrorIs(t, err, ErrTransport)
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
	assert.NotErrorIs(t, err, ErrMalformedResponse)
	assert.True(t, IsTemporary(err))
	assert.NotEmpty(t, KeyOf(err).String())

	// Without a retry left to the loop (an unkeyed GET with one attempt):
	// still a transport failure with its cause.
	p.MaxAttempts = 1
	c, err = NewClient(WithBaseURL(srv.URL), WithRetryPolicy(p))
	require.NoError(t, err)
	_, err = c.Do(context.Background(), &Request{Operation: "x.get", Method: http.MethodGet, Path: "/x"}, nil)
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrTransport)
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
	assert.NotErrorIs(t, err, ErrMalformedResponse)
}

// An oversized 2xx means the operation ran: temporary and resumable, not
// final, and not retried (the same answer would come back).
func TestOversizedSuccessIsTemporary(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		_, _ = io.WriteString(w, `{"pad":"`)
		chunk := strings.Repeat("x", 1<<20)
		for range 17 {
			_, _ = io.WriteString(w, chunk)
		}
		_, _ = io.WriteString(w, `"}`)
	}))
	defer srv.Close()
	// 17 MiB through a loaded -race run can take longer than
	// fastRetryPolicy's 2 s: a timed-out read is rightly retried, which
	// is not what this test is about.
	p := fastPolicy()
	p.AttemptTimeout = generousAttemptTimeout
	c, err := NewClient(WithBaseURL(srv.URL), WithRetryPolicy(p))
	require.NoError(t, err)
	_, err = c.Do(context.Background(), postReq(), nil)
	require.Error(t, err)
	assert.True(t, IsTemporary(err), "%v", err)
	assert.ErrorIs(t, err, ErrTransport)
	assert.NotErrorIs(t, err, ErrMalformedResponse)
	assert.Contains(t, err.Error(), "larger than")
	assert.NotEmpty(t, KeyOf(err).String())
	assert.Equal(t, int32(1), n.Load())
}

// An operation without a key whose answer was lost cannot be resumed: a
// second run would be a second operation.
func TestUnkeyedPostLostAnswerIsNotTemporary(t *testing.T) {
	h, _ := hijackFirst(100, &recorder{})
	srv := httptest.NewServer(h)
	defer srv.Close()
	c, err := NewClient(WithBaseURL(srv.URL), WithRetryPolicy(fastPolicy()))
	require.NoError(t, err)
	_, err = c.Do(context.Background(), postReq(), nil, WithoutKey())
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrTransport)
	assert.False(t, IsTemporary(err), "no key: never resumable")
	_, err = c.Do(context.Background(), &Request{Operation: "x.create", Method: http.MethodPost, Path: "/x", Body: map[string]int{"a": 1}}, nil)
	require.Error(t, err)
	assert.False(t, IsTemporary(err), "an unkeyed POST is not resumable either")

	// A GET is idempotent: it stays temporary.
	_, err = c.Do(context.Background(), &Request{Operation: "x.get", Method: http.MethodGet, Path: "/x"}, nil)
	require.Error(t, err)
	assert.True(t, IsTemporary(err))
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
	assert.NotEmpty(t, KeyOf(err).String())
	assert.LessOrEqual(t, len(rec.seen()), 4)
}

// A context that ends while an attempt is in flight leaves the operation in
// doubt (the server may have executed it): the error is temporary, so a job
// queue that branches on IsTemporary resumes it with the same key instead
// of giving up on it.
func TestContextEndedInFlightIsTemporaryAndResumable(t *testing.T) {
	var mu sync.Mutex
	executed := map[string]int{}
	var arrived atomic.Pointer[chan struct{}] // the current operation's: its first attempt reached the server
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get(corekit.HeaderIdempotencyKey)
		mu.Lock()
		executed[key]++
		first := executed[key] == 1
		mu.Unlock()
		if first {
			// Committed; the answer comes only after the client gave up.
			_, _ = io.Copy(io.Discard, r.Body)
			close(*arrived.Load())
			<-r.Context().Done()
			return
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
			in := *arrived.Load()
			go func() { <-in; cancel() }() // once the attempt is in flight
			return ctx, cancel
		},
	} {
		in := make(chan struct{})
		arrived.Store(&in)
		ctx, cancel := end(context.Background())
		_, err = c.Do(ctx, postReq(), nil)
		cancel()
		require.Error(t, err)
		assert.True(t, IsTemporary(err), "an operation cut off in flight must be resumed, not dropped: %v", err)
		key := KeyOf(err).String()
		require.NotEmpty(t, key)
		meta, err := c.Do(context.Background(), postReq(), nil, WithKey(KeyOf(err)))
		require.NoError(t, err)
		assert.Equal(t, key, meta.Key.String(), "resumed with the same key")
	}
}
