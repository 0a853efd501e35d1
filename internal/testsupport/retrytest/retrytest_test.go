package retrytest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payonce/payonce/payoncetest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
)

// A 429 asking for a second, then a success: one retry, after
// FastRetryPolicy's capped wait; the final attempt adds none.
func TestAllHoldsTheWaitOfEachRetry(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		_, _ = w.Write([]byte(`{}`))
	}))
	t.Cleanup(srv.Close)
	waits, observe := New()
	c, err := payonce.NewClient(payonce.WithBaseURL(srv.URL), payonce.WithRetryPolicy(payoncetest.FastRetryPolicy()), observe)
	require.NoError(t, err)
	_, err = c.Do(context.Background(), &payonce.Request{Method: http.MethodGet, Path: "/x"}, nil)
	require.NoError(t, err)
	assert.Equal(t, []time.Duration{payoncetest.FastRetryPolicy().MaxRetryAfter}, waits.All())
}
