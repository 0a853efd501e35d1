package a55_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/internal/keytest"
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
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "the fake refuses it too")
}
