package payonce

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payonce/payonce/internal/corekit"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An HTTP/1.1 answer without Content-Length or chunked encoding ends when
// the server closes the connection, so a connection cut mid-answer looks
// like a complete body. A 2xx JSON answer framed that way that is not
// whole JSON was cut short: the operation ran and its answer was lost, a
// temporary transport failure retried with the same key, never a final
// malformed answer nor (for an empty body) a success with nothing decoded.
func TestCloseDelimitedSuccessCutShortIsALostAnswer(t *testing.T) {
	for name, answer := range map[string]string{
		"cut mid-body": "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{\"id\":\"ch_1\",\"sta",
		"cut at once":  "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n",
	} {
		url, n := rawServer(t, answer)
		p := fastPolicy()
		p.MaxAttempts = 3
		c, err := NewClient(WithBaseURL(url), WithRetryPolicy(p))
		require.NoError(t, err)
		var out struct{ ID string }
		_, err = c.Do(context.Background(), postReq(), &out)
		require.Error(t, err, name)
		assert.ErrorIs(t, err, ErrTransport, name)
		assert.NotErrorIs(t, err, ErrMalformedResponse, name)
		assert.True(t, IsTemporary(err), name)
		assert.NotEmpty(t, KeyOf(err).String(), name)
		assert.Equal(t, int32(3), n.Load(), name)
	}
	// A whole close-delimited answer is fine.
	url, _ := rawServer(t, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{\"id\":\"ch_1\"}")
	c, err := NewClient(WithBaseURL(url), WithRetryPolicy(fastPolicy()))
	require.NoError(t, err)
	var out struct{ ID string }
	_, err = c.Do(context.Background(), postReq(), &out)
	require.NoError(t, err)
	assert.Equal(t, "ch_1", out.ID)
}

// rawServer answers every connection with the raw bytes of answer after
// reading the request head, then closes the connection.
func rawServer(t *testing.T, answer string) (string, *atomic.Int32) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	var n atomic.Int32
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			go func() {
				defer func() { _ = conn.Close() }()
				r := bufio.NewReader(conn)
				req, err := http.ReadRequest(r)
				if err != nil {
					return
				}
				_, _ = io.Copy(io.Discard, req.Body)
				_, _ = io.WriteString(conn, answer)
			}()
		}
	}()
	return "http://" + l.Addr().String(), &n
}

// A server announcing 16 MiB and sending 10 bytes costs the client what it
// sent, not what it announced.
func TestAnnouncedLengthIsNotPreallocated(t *testing.T) {
	url, _ := rawServer(t, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 16000000\r\n\r\n{\"a\":1234}")
	p := fastPolicy()
	p.MaxAttempts = 1
	c, err := NewClient(WithBaseURL(url), WithRetryPolicy(p))
	require.NoError(t, err)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = c.Do(context.Background(), postReq(), nil)
	runtime.ReadMemStats(&after)
	require.Error(t, err)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(4<<20), "bytes allocated for a 10-byte answer")
}

// The limiter's wait happens before the attempt's timer starts: a wait
// longer than the attempt timeout is not a transport failure. (Were the
// timer started before the wait, every attempt would reach its deadline
// while waiting and the call would fail.)
func TestLimiterWaitIsOutsideTheAttemptTimeout(t *testing.T) {
	t.Parallel() // waits out a real limiter: overlap it
	rec := &recorder{}
	p := hangPolicy()
	lim := waitLimiter(2 * p.AttemptTimeout)
	c := setup(t, rec, WithRetryPolicy(p), WithLimiter(lim))
	meta, err := c.Do(context.Background(), postReq(), nil)
	require.NoError(t, err)
	// Each attempt, after its wait, has the whole timeout for a loopback
	// answer; one that outlasts it on a loaded machine is retried.
	assert.GreaterOrEqual(t, meta.Attempts, 1)
	assert.Len(t, rec.seen(), meta.Attempts)
}

// waitLimiter is a limiter whose every wait lasts as long as it says.
type waitLimiter time.Duration

func (l waitLimiter) Wait(ctx context.Context) error {
	t := time.NewTimer(time.Duration(l))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// HEAD, 204 and 304 answers have no body, whatever Content-Length says.
func TestAnswersWithoutBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodHead:
			w.Header().Set("Content-Length", "1234")
			w.WriteHeader(http.StatusOK)
		case r.Header.Get("If-None-Match") != "":
			w.WriteHeader(http.StatusNotModified)
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	}))
	defer srv.Close()
	p := fastPolicy()
	p.MaxAttempts = 1
	c, err := NewClient(WithBaseURL(srv.URL), WithRetryPolicy(p))
	require.NoError(t, err)
	meta, err := c.Do(context.Background(), &Request{Operation: "x.head", Method: http.MethodHead, Path: "/x"}, nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, meta.StatusCode)
	var out map[string]any
	meta, err = c.Do(context.Background(), &Request{Operation: "x.delete", Method: http.MethodDelete, Path: "/x"}, &out)
	require.NoError(t, err)
	assert.Equal(t, http.StatusNoContent, meta.StatusCode)
	meta, err = c.Do(context.Background(), &Request{Operation: "x.get", Method: http.MethodGet, Path: "/x"}, &out, WithHeader("If-None-Match", `"v1"`))
	require.NoError(t, err)
	assert.Equal(t, http.StatusNotModified, meta.StatusCode)
}

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
	assert.NotEmpty(t, KeyOf(err).String())
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
	obs := Observer{StartAttempt: func(ctx context.Context, info AttemptInfo) context.Context {
		info.SetHeader("Traceparent", fmt.Sprintf("00-0af7651916cd43dd8448eb211c80319c-00000000000000%02d-01", info.Attempt))
		return ctx
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
		assert.Equal(t, meta.Key.String(), h.Get(corekit.HeaderIdempotencyKey), "request %d", i+1)
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
	t.Parallel() // waits out real attempt timeouts: overlap them
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
	var ends []AttemptResult
	obs := Observer{EndAttempt: func(_ context.Context, r AttemptResult) { ends = append(ends, r) }}
	c, err := NewClient(WithBaseURL(srv.URL), WithRetryPolicy(hangPolicy()), WithObserver(obs))
	require.NoError(t, err)
	var out struct{ OK bool }
	meta, err := c.Do(context.Background(), postReq(), &out)
	require.NoError(t, err)
	assert.True(t, out.OK)
	assert.GreaterOrEqual(t, meta.Attempts, 2)
	require.Len(t, ends, meta.Attempts)
	for i, e := range ends[:len(ends)-1] { // the first hung; a later one may have been slow
		assert.Equal(t, "timeout", e.RetryCause, "attempt %d", i+1)
		assert.True(t, isTimeout(e.Err), "attempt %d: %v", i+1, e.Err)
		assert.Contains(t, e.Err.Error(), fmt.Sprint("attempt timed out after ", hangTimeout))
		assert.ErrorIs(t, e.Err, context.DeadlineExceeded, "as net/http's own timeouts")
	}
	assert.NoError(t, ends[len(ends)-1].Err)
}

type obsMark struct{}

// An observer whose contexts are not derived from the ones it is given
// (against the Observer contract) or carry a cancel of their own cannot
// change when an attempt or the operation ends: the attempt's timeout
// still ends a hung attempt, which is retried, and the hooks still get
// the contexts they returned.
func TestObserverContextsCannotLiftTheAttemptTimeout(t *testing.T) {
	t.Parallel() // waits out real attempt timeouts: overlap them
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
			c, err := NewClient(WithBaseURL(srv.URL), WithRetryPolicy(hangPolicy()), WithObserver(obs.observer()))
			require.NoError(t, err)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // bounds a failure
			defer cancel()
			meta, err := c.Do(ctx, postReq(), nil)
			require.NoError(t, err)
			assert.GreaterOrEqual(t, meta.Attempts, 2, "the hung attempt timed out and was retried")
			want := slices.Repeat([]any{"mine"}, meta.Attempts+1) // each attempt's end, then the operation's
			assert.Equal(t, want, ends, "each end hook gets the context its start hook returned")
		})
	}
}

// The caller's cancellation ends the operation whatever context the
// observer's StartOperation returned.
func TestObserverContextCannotLiftTheCallersCancellation(t *testing.T) {
	t.Parallel() // waits out the caller's 300 ms deadline: overlap it
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
	c, err := NewClient(WithBaseURL(srv.URL), WithRetryPolicy(fastPolicy()), WithObserver(obs.observer()))
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

// observer is the Observer of o's four hooks.
func (o detachingObserver) observer() Observer {
	return Observer{StartOperation: o.StartOperation, StartAttempt: o.StartAttempt, EndAttempt: o.EndAttempt, EndOperation: o.EndOperation}
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

// A transport may still read a failed attempt's headers after its
// RoundTrip returned (net/http's HTTP/2 writer encodes them on a goroutine
// of its own): building the next attempt's headers must not write to
// anything the last attempt's map holds, values included. Run with -race.
func TestRetryHeadersDoNotRaceWithTheLastAttemptsTransport(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, `{}`) }))
	defer srv.Close()
	var wg sync.WaitGroup
	defer wg.Wait()
	calls := 0
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		calls++
		if calls == 1 {
			wg.Add(1)
			go func(h http.Header) { // still writing the failed attempt
				defer wg.Done()
				for range 100 {
					for _, v := range h {
						_ = strings.Clone(v[0])
					}
					time.Sleep(200 * time.Microsecond)
				}
			}(r.Header)
			return nil, errors.New("connection reset by peer")
		}
		return http.DefaultTransport.RoundTrip(r)
	})}
	signer := signerFunc(func(r *http.Request, _ []byte) error { r.Header.Set("X-Sig", "x"); return nil })
	c, err := NewClient(WithBaseURL(srv.URL), WithRetryPolicy(fastPolicy()), WithHTTPClient(hc), WithSigner(signer), WithUserAgent("merchant/1"))
	require.NoError(t, err)
	meta, err := c.Do(context.Background(), postReq(), nil, WithHeader("X-Merchant", "m-1"))
	require.NoError(t, err)
	require.Equal(t, 2, meta.Attempts)
}

// An attempt's timeout error, handed to EndAttempt, stays the observer's
// to read from any goroutine: the next attempt's deadline does not write
// to it. Run with -race.
func TestAttemptTimeoutErrorIsNotRewrittenByTheNextAttempt(t *testing.T) {
	t.Parallel() // waits out real attempt timeouts: overlap them
	release := make(chan struct{})
	var mu sync.Mutex
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		first := n == 1
		mu.Unlock()
		if first {
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		_, _ = io.WriteString(w, `{}`)
	}))
	defer srv.Close()
	defer close(release)
	p := hangPolicy()
	errs := make(chan error, p.MaxAttempts)
	done := make(chan struct{})
	go func() { // an exporter reading what the hooks handed it
		defer close(done)
		for e := range errs {
			var te interface{ Timeout() bool }
			if errors.As(e, &te) {
				for range 2000 {
					_ = te.(error).Error()
				}
			}
		}
	}()
	obs := Observer{EndAttempt: func(_ context.Context, r AttemptResult) {
		if r.Err != nil {
			errs <- r.Err
		}
	}}
	c, err := NewClient(WithBaseURL(srv.URL), WithRetryPolicy(p), WithObserver(obs))
	require.NoError(t, err)
	meta, err := c.Do(context.Background(), postReq(), nil)
	close(errs)
	<-done
	require.NoError(t, err)
	require.GreaterOrEqual(t, meta.Attempts, 2)
}

// With a cookie jar, the attempt's map holds the jar's Cookie for the
// attempt's URL when StartAttempt runs: it is not a header the observer
// added, and a redirect hop gets its own from the jar, never the
// attempt's (a cookie scoped to one path stays there).
func TestObserverHopHeadersExcludeTheJarsCookie(t *testing.T) {
	var mu sync.Mutex
	got := map[string]http.Header{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got[r.URL.Path] = r.Header.Clone()
		mu.Unlock()
		if r.URL.Path == "/things" {
			http.Redirect(w, r, "/other/things", http.StatusTemporaryRedirect)
			return
		}
		_, _ = io.WriteString(w, `{}`)
	}))
	defer srv.Close()
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	u, err := url.Parse(srv.URL + "/things")
	require.NoError(t, err)
	jar.SetCookies(u, []*http.Cookie{{Name: "scoped", Value: "1", Path: "/things"}})
	const tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	obs := Observer{StartAttempt: func(ctx context.Context, info AttemptInfo) context.Context {
		info.SetHeader("traceparent", tp)
		return ctx
	}}
	c, err := NewClient(WithBaseURL(srv.URL), WithRetryPolicy(fastPolicy()), WithHTTPClient(&http.Client{Jar: jar}), WithObserver(obs))
	require.NoError(t, err)
	_, err = c.Do(context.Background(), postReq(), nil)
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, "scoped=1", got["/things"].Get("Cookie"))
	assert.Equal(t, tp, got["/things"].Get("Traceparent"))
	assert.Empty(t, got["/other/things"].Get("Cookie"), "the cookie is scoped to /things")
	assert.Equal(t, tp, got["/other/things"].Get("Traceparent"), "the observer's header follows the hop")
}

// net/http's Client adds the jar's cookies to the request it is given:
// every retry carries them once, not once more per attempt.
func TestRetriesCarryTheJarsCookiesOnce(t *testing.T) {
	var mu sync.Mutex
	var cookies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		cookies = append(cookies, r.Header.Get("Cookie"))
		k := len(cookies)
		mu.Unlock()
		if k < 3 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, `{}`)
	}))
	defer srv.Close()
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	jar.SetCookies(u, []*http.Cookie{{Name: "sess", Value: "1", Path: "/"}})
	c, err := NewClient(WithBaseURL(srv.URL), WithRetryPolicy(fastPolicy()), WithHTTPClient(&http.Client{Jar: jar}))
	require.NoError(t, err)
	meta, err := c.Do(context.Background(), postReq(), nil)
	require.NoError(t, err)
	assert.Equal(t, 3, meta.Attempts)
	assert.Equal(t, []string{"sess=1", "sess=1", "sess=1"}, cookies)
}

// A client without a User-Agent of its own (WithUserAgent("")) lets the
// observer set one; like any header the observer adds, it follows the
// attempt's redirect hops.
func TestObserverUserAgentFollowsTheHopWhenTheClientSetsNone(t *testing.T) {
	var mu sync.Mutex
	got := map[string]string{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got[r.URL.Path] = r.Header.Get("User-Agent")
		mu.Unlock()
		if r.URL.Path == "/things" {
			http.Redirect(w, r, "/v2/things", http.StatusTemporaryRedirect)
			return
		}
		_, _ = io.WriteString(w, `{}`)
	}))
	defer srv.Close()
	obs := Observer{StartAttempt: func(ctx context.Context, info AttemptInfo) context.Context {
		assert.True(t, info.SetHeader("User-Agent", "observed/1"))
		return ctx
	}}
	c, err := NewClient(WithBaseURL(srv.URL), WithRetryPolicy(fastPolicy()), WithUserAgent(""), WithObserver(obs))
	require.NoError(t, err)
	_, err = c.Do(context.Background(), postReq(), nil)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"/things": "observed/1", "/v2/things": "observed/1"}, got)
}

// Each attempt's header values are its own: a signer that rewrites a
// value in place (h["Accept"][0] = ...) changes that attempt only, and
// the next attempt starts again from the operation's headers.
func TestRetryHeaderValuesAreTheAttemptsOwn(t *testing.T) {
	srv, headers := headerServer(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n < 3 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, `{}`)
	})
	signs := 0
	signer := signerFunc(func(r *http.Request, _ []byte) error {
		signs++
		if signs == 1 {
			for _, k := range []string{"Accept", "User-Agent", corekit.HeaderIdempotencyKey, "X-Merchant"} {
				if v := r.Header[k]; len(v) > 0 {
					v[0] = "rewritten" // in place
				}
			}
		}
		return nil
	})
	c, err := NewClient(WithBaseURL(srv.URL), WithRetryPolicy(fastPolicy()), WithSigner(signer), WithUserAgent("merchant/1"))
	require.NoError(t, err)
	meta, err := c.Do(context.Background(), postReq(), nil, WithHeader("X-Merchant", "m-1"))
	require.NoError(t, err)
	got := headers()
	require.Len(t, got, 3)
	assert.Equal(t, "rewritten", got[0].Get("Accept"))
	for i, h := range got[1:] {
		assert.Equal(t, "application/json", h.Get("Accept"), "request %d", i+2)
		assert.Equal(t, "merchant/1", h.Get("User-Agent"), "request %d", i+2)
		assert.Equal(t, meta.Key.String(), h.Get(corekit.HeaderIdempotencyKey), "request %d", i+2)
		assert.Equal(t, "m-1", h.Get("X-Merchant"), "request %d", i+2)
	}
}
