package payonce_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
)

// A client given no key rules still never sends a key older than 24 hours
// less the retry policy's safety margin (a server may have forgotten it
// and would run the operation again) nor one longer than 255 bytes: both
// are refused before any byte is sent, with the key.
func TestClientWithoutKeyRulesKeepsTheDefaultWindowAndLength(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	c, err := payonce.NewClient(payonce.WithBaseURL(srv.URL), payonce.WithClock(func() time.Time { return now }))
	require.NoError(t, err)
	assert.Equal(t, payonce.DefaultKeyRules(), c.KeyRules())
	req := func() *payonce.Request {
		return &payonce.Request{Operation: "x", Method: http.MethodPost, Path: "/x", Body: map[string]string{"a": "b"}, Keyed: true}
	}

	_, err = c.Do(t.Context(), req(), nil, payonce.WithIdempotencyKey("order-1-payment"),
		payonce.WithKeyCreated(now.Add(-payonce.DefaultKeyWindow-time.Second)))
	require.ErrorIs(t, err, payonce.ErrKeyExpired)
	assert.Equal(t, "order-1-payment", payonce.KeyOf(err))

	_, err = c.Do(t.Context(), req(), nil, payonce.WithIdempotencyKey(strings.Repeat("k", 256)))
	require.ErrorIs(t, err, payonce.ErrKeyTooLong)
	assert.Zero(t, hits.Load(), "nothing was sent")

	// Within the window and the length, the call goes out.
	_, err = c.Do(t.Context(), req(), nil, payonce.WithIdempotencyKey(strings.Repeat("k", 255)),
		payonce.WithKeyCreated(now.Add(-22*time.Hour)))
	require.NoError(t, err)
	assert.EqualValues(t, 1, hits.Load())
}
