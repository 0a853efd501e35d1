package payonce

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
	p := fastPolicy()
	p.AttemptTimeout = hangTimeout // ends the hang, leaves the second attempt ample time
	errs := make(chan error, 4)
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
	obs := ObserverFuncs{OnAttemptEnd: func(_ context.Context, r AttemptResult) {
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
	require.Equal(t, 2, meta.Attempts)
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
	obs := ObserverFuncs{OnAttemptStart: func(_ context.Context, info AttemptInfo) { info.SetHeader("traceparent", tp) }}
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
	obs := ObserverFuncs{OnAttemptStart: func(_ context.Context, info AttemptInfo) {
		assert.True(t, info.SetHeader("User-Agent", "observed/1"))
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
			for _, k := range []string{"Accept", "User-Agent", HeaderIdempotencyKey, "X-Merchant"} {
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
		assert.Equal(t, meta.Key.ID(), h.Get(HeaderIdempotencyKey), "request %d", i+2)
		assert.Equal(t, "m-1", h.Get("X-Merchant"), "request %d", i+2)
	}
}
