package payonce

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Each attempt starts from the operation's own headers only: what a
// signer or an observer added to the last attempt (a one-off header, a
// signature added with Add, a trace context) never carries over to the
// next attempt or to that attempt's redirect hops, and the operation's
// headers stay the same on every one.
func TestEachAttemptStartsFromTheOperationHeaders(t *testing.T) {
	srv, headers := headerServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		switch {
		case n == 1:
			w.WriteHeader(http.StatusServiceUnavailable)
		case r.URL.Path == "/things":
			http.Redirect(w, r, "/things/v2", http.StatusTemporaryRedirect)
		default:
			_, _ = io.WriteString(w, `{}`)
		}
	})
	signs := 0
	signer := signerFunc(func(r *http.Request, _ []byte) error {
		signs++
		if signs == 1 {
			r.Header.Set("X-First-Only", "1")
		}
		r.Header.Add("X-Sig", fmt.Sprint("sig-", signs))
		return nil
	})
	obs := ObserverFuncs{OnAttemptStart: func(_ context.Context, info AttemptInfo) {
		info.SetHeader("Traceparent", fmt.Sprintf("00-0af7651916cd43dd8448eb211c80319c-00000000000000%02d-01", info.Attempt))
	}}
	c, err := NewClient(WithBaseURL(srv.URL), WithRetryPolicy(fastPolicy()), WithSigner(signer), WithObserver(obs), WithUserAgent("merchant/1"))
	require.NoError(t, err)
	meta, err := c.Do(context.Background(), postReq(), nil, WithHeader("X-Merchant", "m-1"))
	require.NoError(t, err)
	got := headers()
	require.Len(t, got, 3, "attempt 1, attempt 2, attempt 2's redirect hop")
	assert.Equal(t, 2, meta.Attempts)

	assert.Equal(t, "1", got[0].Get("X-First-Only"))
	assert.Equal(t, []string{"sig-1"}, got[0]["X-Sig"])
	assert.Equal(t, "00-0af7651916cd43dd8448eb211c80319c-0000000000000001-01", got[0].Get("Traceparent"))
	for i, h := range got[1:] {
		assert.Empty(t, h.Get("X-First-Only"), "request %d", i+2)
		assert.Equal(t, []string{fmt.Sprint("sig-", i+2)}, h["X-Sig"], "request %d: signed afresh, once", i+2)
		assert.Equal(t, "00-0af7651916cd43dd8448eb211c80319c-0000000000000002-01", h.Get("Traceparent"), "request %d: attempt 2's trace context", i+2)
	}
	for i, h := range got {
		assert.Equal(t, meta.Key.ID(), h.Get(HeaderIdempotencyKey), "request %d", i+1)
		assert.Equal(t, "application/json", h.Get("Content-Type"), "request %d", i+1)
		assert.Equal(t, "application/json", h.Get("Accept"), "request %d", i+1)
		assert.Equal(t, "merchant/1", h.Get("User-Agent"), "request %d", i+1)
		assert.Equal(t, "m-1", h.Get("X-Merchant"), "request %d", i+1)
	}
}

// An attempt that outlives its timeout is a timeout, retried with the
// same key, while the caller's own deadline stops the loop; the attempt's
// deadline also covers reading the answer's body.
func TestAttemptTimeoutCoversTheBodyAndIsRetried(t *testing.T) {
	release := make(chan struct{})
	defer close(release) // runs before the server's Cleanup, which waits for the handlers
	srv, _ := headerServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			// Headers now, the body never: only a deadline that covers
			// the body ends this attempt.
			w.Header().Set("Content-Length", "100")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		_, _ = io.WriteString(w, `{"ok":true}`)
	})
	p := FastRetryPolicy()
	// The first attempt hangs until this ends it; the second must be
	// answered within it on a loaded -race run.
	p.AttemptTimeout = hangTimeout
	var ends []AttemptResult
	obs := ObserverFuncs{OnAttemptEnd: func(_ context.Context, r AttemptResult) { ends = append(ends, r) }}
	c, err := NewClient(WithBaseURL(srv.URL), WithRetryPolicy(p), WithObserver(obs))
	require.NoError(t, err)
	var out struct{ OK bool }
	meta, err := c.Do(context.Background(), postReq(), &out)
	require.NoError(t, err)
	assert.True(t, out.OK)
	assert.Equal(t, 2, meta.Attempts)
	require.Len(t, ends, 2)
	assert.Equal(t, "timeout", ends[0].RetryCause)
	assert.True(t, isTimeout(ends[0].Err), "%v", ends[0].Err)
	assert.Contains(t, ends[0].Err.Error(), fmt.Sprint("attempt timed out after ", hangTimeout))
	assert.ErrorIs(t, ends[0].Err, context.DeadlineExceeded, "as net/http's own timeouts")
}

type obsMark struct{}

// An observer whose contexts are not derived from the ones it is given
// (against the Observer contract) or carry a cancel of their own cannot
// change when an attempt or the operation ends: the attempt's timeout
// still ends a hung attempt, which is retried, and the hooks still get
// the contexts they returned.
func TestObserverContextsCannotLiftTheAttemptTimeout(t *testing.T) {
	release := make(chan struct{})
	defer close(release) // runs before the servers' Cleanup, which waits for the handlers
	hangFirst := func(n int, w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if n == 1 {
			select { // hangs until the client gives up on the attempt
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		_, _ = io.WriteString(w, `{}`)
	}
	var cancels []context.CancelFunc
	defer func() {
		for _, c := range cancels {
			c()
		}
	}()
	for name, detach := range map[string]func(context.Context) context.Context{
		"not derived": func(context.Context) context.Context {
			return context.WithValue(context.Background(), obsMark{}, "mine")
		},
		"own cancel": func(ctx context.Context) context.Context {
			// Derived, but with a Done channel of its own: as far as the
			// client can tell, it may outlive ctx.
			c, cancel := context.WithCancel(context.WithValue(ctx, obsMark{}, "mine"))
			cancels = append(cancels, cancel)
			return c
		},
	} {
		t.Run(name, func(t *testing.T) {
			srv, _ := headerServer(t, hangFirst)
			var ends []any
			obs := detachingObserver{detach: detach, ends: &ends}
			p := FastRetryPolicy()
			p.AttemptTimeout = hangTimeout // ends the hang, leaves the second attempt ample time
			c, err := NewClient(WithBaseURL(srv.URL), WithRetryPolicy(p), WithObserver(obs))
			require.NoError(t, err)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // bounds a failure
			defer cancel()
			meta, err := c.Do(ctx, postReq(), nil)
			require.NoError(t, err)
			assert.Equal(t, 2, meta.Attempts, "the hung attempt timed out and was retried")
			assert.Equal(t, []any{"mine", "mine", "mine"}, ends, "each end hook gets the context its start hook returned")
		})
	}
}

// The caller's cancellation ends the operation whatever context the
// observer's StartOperation returned.
func TestObserverContextCannotLiftTheCallersCancellation(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	var ends []any
	obs := detachingObserver{detach: func(context.Context) context.Context {
		return context.WithValue(context.Background(), obsMark{}, "mine")
	}, ends: &ends}
	c, err := NewClient(WithBaseURL(srv.URL), WithRetryPolicy(fastPolicy()), WithObserver(obs))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = c.Do(ctx, postReq(), nil)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), generousAttemptTimeout/2, "the caller's deadline ended the call, not the attempt timeout")
}

// detachingObserver returns, from both start hooks, the context detach
// makes, and records the mark each end hook's context carries.
type detachingObserver struct {
	detach func(context.Context) context.Context
	ends   *[]any
}

func (o detachingObserver) StartOperation(ctx context.Context, _ OperationInfo) context.Context {
	return o.detach(ctx)
}

func (o detachingObserver) StartAttempt(ctx context.Context, _ AttemptInfo) context.Context {
	return o.detach(ctx)
}

func (o detachingObserver) EndAttempt(ctx context.Context, _ AttemptResult) {
	*o.ends = append(*o.ends, ctx.Value(obsMark{}))
}

func (o detachingObserver) EndOperation(ctx context.Context, _ OperationResult) {
	*o.ends = append(*o.ends, ctx.Value(obsMark{}))
}
