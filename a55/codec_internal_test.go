package a55

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
)

// A 2xx answer to a charge move or a wallet creation that names no charge
// or wallet (an empty body, {}, a proxy's blank page) is none: a malformed
// answer carrying the key, never a success with an empty Charge or Wallet.
func TestChargeAnswerWithoutUUIDIsMalformed(t *testing.T) {
	for _, body := range []string{"", "{}", `{"status":"confirmed"}`, "null"} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", "0")
			if body != "" {
				w.Header().Del("Content-Length")
			}
			_, _ = io.WriteString(w, body)
		}))
		c, err := NewClient(AccessToken("fixed-token-value"), payonce.WithBaseURL(srv.URL), payonce.WithRetryPolicy(fastPolicy()),
			payonce.WithClock(func() time.Time { return seedTime }))
		require.NoError(t, err)
		ch, err := c.Charges.Create(context.Background(), seedCharge())
		assert.Nil(t, ch, "%q", body)
		require.ErrorIs(t, err, payonce.ErrMalformedResponse, "%q", body)
		assert.NotEmpty(t, payonce.KeyOf(err).ID())
		w, err := c.Wallets.Create(context.Background(), &WalletCreateRequest{Name: "store-1"})
		srv.Close()
		assert.Nil(t, w, "%q", body)
		require.ErrorIs(t, err, payonce.ErrMalformedResponse, "%q", body)
		assert.NotEmpty(t, payonce.KeyOf(err).ID())
	}
}
