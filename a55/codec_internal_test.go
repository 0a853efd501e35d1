package a55

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/payoncetest"
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
			payoncetest.ClientClock(func() time.Time { return guideTime }))
		require.NoError(t, err)
		ch, err := c.Charges.Create(context.Background(), refCharge())
		assert.Nil(t, ch, "%q", body)
		require.ErrorIs(t, err, payonce.ErrMalformedResponse, "%q", body)
		assert.NotEmpty(t, payonce.KeyOf(err).String())
		w, err := c.Wallets.Create(context.Background(), &WalletCreateRequest{EntityUUID: "e-1", CustomerID: "cust_1", Currency: payonce.BRL, Name: "store-1", Email: "store@example.com"})
		srv.Close()
		assert.Nil(t, w, "%q", body)
		require.ErrorIs(t, err, payonce.ErrMalformedResponse, "%q", body)
		assert.NotEmpty(t, payonce.KeyOf(err).String())
	}
}

func TestCodecErrorShapes(t *testing.T) {
	cases := []struct {
		name   string
		status int
		body   string
		kind   error
		code   string
		charge bool
	}{
		{"general conflict", 409, `{"error":{"code":"IDEMPOTENCY_KEY_CONFLICT","message":"reused","details":[]},"request_id":"req_9"}`, payonce.ErrIdempotencyConflict, "IDEMPOTENCY_KEY_CONFLICT", false},
		{"empty 409", 409, ``, payonce.ErrIdempotencyConflict, "", false},
		{"charge-level 409", 409, `{"charge_uuid":"c1","status":"error","message":[{"code":"CANCEL_NOT_ALLOWED","source":"charge","description":"no"}]}`, ErrInvalidState, "CANCEL_NOT_ALLOWED", false},
		{"charge-level 409 unknown code", 409, `{"charge_uuid":"c1","status":"error","message":[{"code":"SOMETHING_NEW","source":"charge","description":"no"}]}`, ErrInvalidState, "SOMETHING_NEW", false},
		{"declined", 400, `{"charge_uuid":"c2","status":"error","message":[{"code":"CARD_DECLINED","source":"card","description":"declined"}]}`, ErrCardDeclined, "CARD_DECLINED", true},
		{"card problem", 400, `{"charge_uuid":"c3","status":"error","message":[{"code":"70","source":"acquirer","description":"credit card problems"}]}`, ErrChargeFailed, "70", true},
		{"402 unknown", 402, `{"charge_uuid":"c4","status":"error","message":"nope"}`, ErrCardDeclined, "", true},
		{"unauthorized", 401, `{"error":{"code":"INVALID_TOKEN","message":"expired"},"request_id":"r"}`, payonce.ErrUnauthorized, "INVALID_TOKEN", false},
		{"forbidden", 403, `{"error":{"code":"X","message":"no"}}`, payonce.ErrForbidden, "X", false},
		{"not found", 404, `{"error":{"code":"NOT_FOUND","message":"no"}}`, payonce.ErrNotFound, "NOT_FOUND", false},
		{"unprocessable", 422, `{"error":{"code":"AMOUNT_INVALID","message":"bad","details":[{"field":"amount","reason":"bad"}]}}`, payonce.ErrInvalidRequest, "AMOUNT_INVALID", false},
		{"422 no code", 422, `not json`, payonce.ErrInvalidRequest, "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			u := setup(t)
			u.mux.HandleFunc("POST "+PathCharges, func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, tc.status, tc.body)
			})
			ch, err := u.client.Charges.Create(context.Background(), refCharge())
			require.Error(t, err)
			assert.Nil(t, ch)
			assert.ErrorIs(t, err, tc.kind)
			var ae *payonce.APIError
			require.ErrorAs(t, err, &ae)
			assert.Equal(t, tc.status, ae.StatusCode)
			assert.Equal(t, tc.code, ae.Code)
			assert.NotEmpty(t, payonce.KeyOf(err).String())
			got, ok := ChargeFromError(err)
			assert.Equal(t, tc.charge, ok)
			if tc.charge {
				assert.NotEmpty(t, got.UUID)
				assert.Equal(t, StatusError, got.Status)
			}
			if tc.status == 401 {
				assert.Equal(t, 2, ae.Attempts, "one refresh and one repeat")
				assert.EqualValues(t, 2, u.tokens.Load())
			} else {
				assert.Equal(t, 1, ae.Attempts, "4xx is final")
			}
		})
	}
}

func TestDeclinedAs2xxKeepsCharge(t *testing.T) {
	u := setup(t)
	u.mux.HandleFunc("POST "+PathCharges, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, `{"charge_uuid":"c5","status":"error","amount":"100.00","message":[{"code":"INSUFFICIENT_FUNDS","source":"card","description":"no funds"}]}`)
	})
	_, err := u.client.Charges.Create(context.Background(), refCharge())
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrCardDeclined)
	var ce *ChargeError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "c5", ce.Charge.UUID)
	assert.Equal(t, "100.00", ce.Charge.Amount.String())
	assert.Equal(t, []string{"INSUFFICIENT_FUNDS"}, ce.Charge.Messages.Codes())
	assert.Equal(t, ce.Err.Key, ce.Charge.Meta.Key)
	assert.Equal(t, payonce.KeyOf(err).String(), ce.Err.Key.String())
	assert.False(t, payonce.IsTemporary(err))
}

func TestMessagesForms(t *testing.T) {
	var v struct {
		M Messages `json:"message"`
	}
	require.NoError(t, json.Unmarshal([]byte(`{"message":"plain"}`), &v))
	assert.Equal(t, Messages{{Description: "plain"}}, v.M)
	require.NoError(t, json.Unmarshal([]byte(`{"message":{"code":"A"}}`), &v))
	assert.Equal(t, "A", v.M.String())
	require.NoError(t, json.Unmarshal([]byte(`{"message":null}`), &v))
	assert.Nil(t, v.M)
}
