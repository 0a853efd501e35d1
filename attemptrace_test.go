package payonce

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

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
	p.AttemptTimeout = 100 * time.Millisecond
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
