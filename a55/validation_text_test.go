package a55

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/keytest"
)

// Every refusal of bad input before sending names the field once, matches
// its specific kind and also payonce.ErrInvalidRequest, and sends nothing.
func TestValidationErrorsTextAndKinds(t *testing.T) {
	u := setup(t)
	var hits atomic.Int32
	u.mux.HandleFunc("POST "+PathCharges, func(w http.ResponseWriter, r *http.Request) { hits.Add(1) })
	cases := []struct {
		name string
		mut  func(*ChargeCreateRequest)
		kind error
		text string
	}{
		{"zero amount", func(r *ChargeCreateRequest) { r.Amount = payonce.Amount{} }, payonce.ErrInvalidAmount, "charges.create: invalid amount: must be greater than 0.00 ["},
		{"bad currency", func(r *ChargeCreateRequest) { r.Currency = "brl" }, payonce.ErrInvalidRequest, "invalid request: currency: want a three-letter ISO 4217 code"},
		{"luhn", func(r *ChargeCreateRequest) { r.Card.Number = "4111111111111112" }, payonce.ErrInvalidCard, "invalid card: card.number: fails the Luhn check"},
		{"no card", func(r *ChargeCreateRequest) { r.Card = nil }, payonce.ErrInvalidCard, "charges.create: invalid card: required for type_charge credit_card ["},
		{"no type", func(r *ChargeCreateRequest) { r.TypeCharge = "" }, payonce.ErrInvalidRequest, "invalid request: type_charge: required"},
		{"unknown type", func(r *ChargeCreateRequest) { r.TypeCharge = "crypto" }, payonce.ErrInvalidRequest,
			"invalid request: type_charge: want one of credit_card, pix, boleto, applepay, googlepay, debit_card"},
		{"debit without card", func(r *ChargeCreateRequest) { r.TypeCharge, r.Card = TypeDebitCard, nil }, payonce.ErrInvalidCard, "card: required for type_charge debit_card"},
		{"bad key", func(*ChargeCreateRequest) {}, payonce.ErrKeyTooShort, "charges.create: idempotency key too short: at least 16 characters, got 5 ["},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := seedCharge()
			tc.mut(req)
			var opts []payonce.CallOption
			if tc.kind == payonce.ErrKeyTooShort {
				opts = append(opts, payonce.WithKey(keytest.Key(t, "short", seedTime)))
			}
			_, err := u.client.Charges.Create(context.Background(), req, opts...)
			require.Error(t, err)
			assert.ErrorIs(t, err, tc.kind)
			assert.ErrorIs(t, err, payonce.ErrInvalidRequest, "every refusal of input is an invalid request")
			assert.Contains(t, err.Error(), tc.text)
			assert.NotContains(t, err.Error(), "amount: amount")
			var ae *payonce.APIError
			require.True(t, errors.As(err, &ae))
			if tc.kind != payonce.ErrKeyTooShort {
				assert.Equal(t, tc.kind, ae.Kind, "the kind stays the specific one")
			}
			assert.False(t, payonce.IsResumable(err))
		})
	}
	// Every documented type is accepted by the client (the card-less ones
	// without a card).
	for _, typ := range []TypeCharge{TypePix, TypeBoleto, TypeApplePay, TypeGooglePay} {
		req := seedCharge()
		req.TypeCharge, req.Card = typ, nil
		assert.NoError(t, req.validate(seedTime, func() string { return "https://api.example" }), typ)
	}
	assert.Zero(t, hits.Load())
}
