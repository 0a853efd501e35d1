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
	"github.com/payonce/payonce/internal/keytest"
)

// A client given no key rules still never sends a key older than 24 hours
// less the retry policy's safety margin (a server may have forgotten it
// and would run the operation again) nor one longer than 255 bytes: both
// are refused before any byte is sent.
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

	_, err = c.Do(t.Context(), req(), nil, payonce.WithKey(keytest.Key(t, "order-1-payment", now.Add(-payonce.DefaultKeyWindow-time.Second))))
	require.ErrorIs(t, err, payonce.ErrKeyExpired)
	assert.Equal(t, "order-1-payment", payonce.KeyOf(err).ID())

	// A key longer than 255 bytes cannot even be read back from storage:
	// what is left is the zero Key, refused.
	long, perr := payonce.ParseKey(keytest.Text(t, strings.Repeat("k", 256), now))
	require.ErrorIs(t, perr, payonce.ErrInvalidRequest)
	_, err = c.Do(t.Context(), req(), nil, payonce.WithKey(long))
	require.ErrorIs(t, err, payonce.ErrKeyRequired)
	assert.Zero(t, hits.Load(), "nothing was sent")

	// Within the window and the length, the call goes out.
	_, err = c.Do(t.Context(), req(), nil, payonce.WithKey(keytest.Key(t, strings.Repeat("k", 255), now.Add(-22*time.Hour))))
	require.NoError(t, err)
	assert.EqualValues(t, 1, hits.Load())
}
