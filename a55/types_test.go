package a55_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/internal/testsupport/keytest"
)

// The client and the fake agree on the documented payment methods: every
// type the client accepts the fake creates, and a type the client refuses
// before sending the fake refuses too.
func TestTypeChargeClientAndFakeAgree(t *testing.T) {
	srv, c := newFake(t)
	for i, typ := range []a55.TypeCharge{a55.TypeCreditCard, a55.TypePix, a55.TypeBoleto, a55.TypeApplePay, a55.TypeGooglePay, a55.TypeDebitCard} {
		req := refCharge(t, a55test.CardConfirms)
		req.TypeCharge = typ
		if typ != a55.TypeCreditCard && typ != a55.TypeDebitCard {
			req.Card = nil
		}
		if typ == a55.TypeDebitCard { // the debit-card page: 3DS, with the browser, or declined
			req.ThreeDSAuthentication = true
			req.DeviceInfo = &a55.DeviceInfo{IPAddress: "192.168.0.1", UserAgent: "Mozilla/5.0", HTTPBrowserLanguage: "en-US",
				HTTPBrowserColorDepth: "24", HTTPBrowserScreenHeight: "1080", HTTPBrowserScreenWidth: "1920"}
		}
		_, err := c.Charges.Create(context.Background(), req, payonce.WithKey(keytest.Now(t, key("type-"+string(rune('a'+i))))))
		require.NoError(t, err, typ)
	}
	req := refCharge(t, a55test.CardConfirms)
	req.TypeCharge = "crypto"
	_, err := c.Charges.Create(context.Background(), req)
	require.ErrorIs(t, err, payonce.ErrInvalidRequest)
	assert.Empty(t, apiAttempts(srv, payonce.KeyOf(err).String()), "refused before sending")

	body := `{"amount":"1.00","currency":"BRL","type_charge":"crypto"}`
	hr, err := http.NewRequestWithContext(context.Background(), http.MethodPost, srv.URL+a55test.ChargePath, strings.NewReader(body))
	require.NoError(t, err)
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Idempotency-Key", key("type-raw"))
	resp, err := srv.HTTPClient().Do(hr)
	require.NoError(t, err)
	defer resp.Body.Close()
	// A valid JSON type holding an undocumented method: a validation
	// failure naming the field (422), as the fake answers every one.
	assert.Equal(t, http.StatusUnprocessableEntity, resp.StatusCode, "the fake refuses it too")
	answer, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Contains(t, string(answer), `"field":"type_charge"`)
}
