package payonce

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"
)

// onRetry returns an option that runs fn once, when the client has chosen
// its first retry's wait and is about to sleep: the observer's end of the
// attempt a retry follows. Tests use it instead of a timer to act "during
// the wait", whatever the machine's load.
func onRetry(fn func()) Option {
	var once sync.Once
	return WithObserver(ObserverFuncs{OnAttemptEnd: func(_ context.Context, r AttemptResult) {
		if r.RetryCause != "" {
			once.Do(fn)
		}
	}})
}

// generousAttemptTimeout is a per-attempt timeout no loopback answer
// reaches, even in a loaded -race run, for tests whose point is not the
// timeout (FastRetryPolicy's 2 s can be reached there, and a timed-out
// attempt is rightly retried, which changes the attempt count).
const generousAttemptTimeout = time.Minute

// headerServer starts a test server, closed by t.Cleanup, that keeps a
// copy of every request's headers and answers the n-th request (from 1)
// with answer; headers returns the copies so far.
func headerServer(t *testing.T, answer func(n int, w http.ResponseWriter, r *http.Request)) (srv *httptest.Server, headers func() []http.Header) {
	var mu sync.Mutex
	var got []http.Header
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Clone())
		n := len(got)
		mu.Unlock()
		answer(n, w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []http.Header {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(got)
	}
}
