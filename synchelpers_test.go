package payonce

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/payonce/payonce/internal/logtest"
)

// onRetryHandler is a slog.Handler that runs fn once, on the client's first
// retry record: the moment the attempt loop has chosen its wait and is
// about to sleep. Tests use it instead of a timer to act "during the wait",
// whatever the machine's load.
type onRetryHandler struct {
	once *sync.Once
	fn   func()
}

// onRetry returns a debug logger for WithLogger that runs fn once, when the
// first retry's wait begins.
func onRetry(fn func()) *slog.Logger {
	return slog.New(onRetryHandler{once: &sync.Once{}, fn: fn})
}

func (h onRetryHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h onRetryHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Message == logtest.RetryMessage {
		h.once.Do(h.fn)
	}
	return nil
}

func (h onRetryHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h onRetryHandler) WithGroup(string) slog.Handler      { return h }

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
