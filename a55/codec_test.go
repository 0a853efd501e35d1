package a55_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/payonce/payonce/internal/testsupport/keytest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
)

// The A55 table of failures final for a key: refusals of the body or key
// and the charges A55 decided; everything else leaves the entry pending.
func TestFinalForKey(t *testing.T) {
	final := []error{payonce.ErrInvalidRequest, payonce.ErrNotFound, a55.ErrInvalidState, a55.ErrCardDeclined,
		a55.ErrChargeFailed, payonce.ErrKeyTooShort, payonce.ErrKeyTooLong, payonce.ErrKeyInvalidChars, payonce.ErrKeyRequired}
	open := []error{payonce.ErrServer, payonce.ErrRateLimited, payonce.ErrUnauthorized, payonce.ErrForbidden,
		payonce.ErrIdempotencyConflict, payonce.NewResumableKind("insufficient_balance", "insufficient balance") /* another provider's */, payonce.ErrMalformedResponse, payonce.ErrRetriesExhausted,
		payonce.ErrTransport}
	c := a55.ProviderForTest()
	for _, k := range final {
		assert.True(t, c.FinalForKey(&payonce.APIError{Kind: k, StatusCode: 400}), k.Error())
	}
	for _, k := range open {
		assert.False(t, c.FinalForKey(&payonce.APIError{Kind: k, StatusCode: 400}), k.Error())
	}
	assert.False(t, c.FinalForKey(nil))
	assert.True(t, c.FinalForKey(&payonce.APIError{Kind: payonce.ErrRedirectRefused, StatusCode: 307}), "a 307 never ran")
}

// FuzzCodecDecoding feeds arbitrary answers to the A55 codec (general and
// charge-level error shapes, charges): it must never panic.
func FuzzCodecDecoding(f *testing.F) {
	f.Add(200, []byte(`{"charge_uuid":"c1","status":"confirmed","amount":"100.00","currency":"BRL"}`))
	f.Add(409, []byte(`{"charge_uuid":"c1","status":"error","message":[{"code":"CANCEL_NOT_ALLOWED","source":"charge","description":"x"}]}`))
	f.Add(429, []byte(`{"error":{"code":"RATE_LIMIT_EXCEEDED","message":"slow","details":[{"field":"a","reason":"b"}]},"request_id":"req_1"}`))
	f.Add(400, []byte(`{"charge_uuid":"c1","status":"error","message":"PROCESSING_ERROR"}`))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		var ch a55.Charge
		_ = a55.Codec{}.DecodeSuccess(status, http.Header{}, body, &ch)
		e := &payonce.APIError{}
		a55.Codec{}.DecodeError(status, http.Header{}, body, e)
		_ = e.Error()
	})
}

// A charge answered in status "error" is a failed charge in any letter
// case, as a 2xx and as a 4xx: "ERROR" never reads as a success.
func TestChargeErrorStatusInAnyCase(t *testing.T) {
	for _, status := range []string{"ERROR", "Error", " error "} {
		for _, code := range []int{http.StatusOK, http.StatusBadRequest} {
			t.Run(fmt.Sprint(status, code), func(t *testing.T) {
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(code)
					fmt.Fprintf(w, `{"charge_uuid":"ch_1","status":%q,"amount":"10.00","currency":"BRL","message":[{"code":"XYZ","description":"refused"}]}`, status)
				}))
				defer srv.Close()
				c, err := a55.NewClient(a55.AccessToken("tok"), payonce.WithBaseURL(srv.URL), payonce.WithRetryPolicy(fastPolicy()))
				require.NoError(t, err)
				c = c.WithAccount(testAccount)
				req := chargeOf("10.00", "")
				req.TypeCharge, req.Card, req.Description = a55.TypePix, nil, "order 1"
				ch, err := c.Charges.Create(t.Context(), req, payonce.WithKey(keytest.Now(t, "status-case-key-01")))
				require.Error(t, err, "a charge in status %q is no success", status)
				assert.Nil(t, ch)
				require.ErrorIs(t, err, a55.ErrChargeFailed)
				failed, ok := a55.ChargeFromError(err)
				require.True(t, ok)
				assert.Equal(t, "ch_1", failed.UUID)
			})
		}
	}
}
