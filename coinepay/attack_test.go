package coinepay_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/coinepay"
)

// A 2xx envelope whose data names no card (data null, {}, or missing) is
// no card issued nor recharged: a malformed answer carrying the key, never
// a success with an empty Card.
func TestEnvelopeWithoutCardIsMalformed(t *testing.T) {
	for _, data := range []any{nil, map[string]any{}, map[string]any{"status": "active"}} {
		c, mux, _ := setup(t)
		mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
			writeEnvelope(w, http.StatusOK, "ok", "成功", data)
		})
		res, err := c.Cards.Apply(context.Background(), &coinepay.ApplyRequest{HeaderID: "h1", PackageID: "p1"})
		assert.Nil(t, res, "%v", data)
		require.ErrorIs(t, err, payonce.ErrMalformedResponse, "%v", data)
		assert.NotEmpty(t, payonce.KeyOf(err).ID())
		rc, err := c.Cards.Recharge(context.Background(), &coinepay.RechargeRequest{CardID: "card_1", Amount: mustAmount(t, "12.50")})
		assert.Nil(t, rc, "%v", data)
		require.ErrorIs(t, err, payonce.ErrMalformedResponse, "%v", data)
		assert.NotEmpty(t, payonce.KeyOf(err).ID())
	}
}
