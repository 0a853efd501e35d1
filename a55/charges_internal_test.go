package a55

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payonce/payonce/internal/corekit"
	"github.com/payonce/payonce/payoncetest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/keytest"
)

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

func TestCreateSendsTheGuidePayloadAndBearer(t *testing.T) {
	u := setup(t)
	var gotBody map[string]any
	var gotAuth, gotKey string
	u.mux.HandleFunc("POST "+PathCharges, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		require.NoError(t, json.Unmarshal(b, &gotBody))
		gotAuth, gotKey = r.Header.Get("Authorization"), r.Header.Get(corekit.HeaderIdempotencyKey)
		w.Header().Set("X-RateLimit-Limit", "100")
		w.Header().Set("X-RateLimit-Remaining", "99")
		w.Header().Set("X-RateLimit-Reset", "1900000000")
		w.Header().Set("X-Request-Id", "req_1")
		writeJSON(w, 200, `{"charge_uuid":"ch_1","status":"confirmed","amount":"100.00","currency":"BRL","new_field":{"x":1},"message":[]}`)
	})
	ch, err := u.client.Charges.Create(context.Background(), guideCharge(), payonce.WithKey(keytest.Key(t, "550e8400-e29b-41d4-a716-446655440000", guideTime)))
	require.NoError(t, err)
	assert.Equal(t, "Bearer tok-1", gotAuth)
	assert.Equal(t, "550e8400-e29b-41d4-a716-446655440000", gotKey)
	var want map[string]any
	require.NoError(t, json.Unmarshal([]byte(`{"amount":"100.00","currency":"BRL","type_charge":"credit_card",
		"card":{"number":"4111111111111111","holder_name":"TEST","expiration_month":"12","expiration_year":"2030","cvv":"123"},
		"payer":{"name":"张伟","email":"zhangwei@example.com","document":"12345678909","document_type":"CPF"}}`), &want))
	assert.Equal(t, want, gotBody)
	assert.Equal(t, "ch_1", ch.UUID)
	assert.Equal(t, StatusConfirmed, ch.Status)
	assert.Equal(t, "100.00", ch.Amount.String())
	assert.Equal(t, gotKey, ch.Meta.Key.String())
	assert.Equal(t, 1, ch.Meta.Attempts)
	assert.Equal(t, "req_1", ch.Meta.RequestID)
	assert.Equal(t, RateLimit{Limit: 100, Remaining: 99, Reset: time.Unix(1900000000, 0)}, ch.Meta.RateLimit)
}

func TestCardExpiryReadsTheCoreClock(t *testing.T) {
	// The example card expires after December 2030: on a client whose clock
	// (payoncetest.ClientClock in tests) reads January 2031 it is refused before sending;
	// on one that reads 2030-12-31 it goes out.
	for _, tc := range []struct {
		now     time.Time
		refused bool
	}{
		{time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC), true},
		{time.Date(2030, 12, 31, 23, 0, 0, 0, time.UTC), false},
		{guideTime, false},
	} {
		t.Run(tc.now.Format(time.DateOnly), func(t *testing.T) {
			u := setup(t, payoncetest.ClientClock(func() time.Time { return tc.now }))
			require.Equal(t, tc.now, u.client.view.Now())
			var hits atomic.Int32
			u.mux.HandleFunc("POST "+PathCharges, func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				writeJSON(w, 200, `{"charge_uuid":"ch_1","status":"confirmed","amount":"100.00","currency":"BRL"}`)
			})
			_, err := u.client.Charges.Create(context.Background(), guideCharge())
			if tc.refused {
				require.Error(t, err)
				assert.ErrorIs(t, err, payonce.ErrInvalidCard)
				assert.EqualValues(t, 0, hits.Load(), "refused before any byte is sent")
				return
			}
			require.NoError(t, err)
			assert.EqualValues(t, 1, hits.Load())
		})
	}
}

func TestValidationBeforeSending(t *testing.T) {
	u := setup(t)
	var hits atomic.Int32
	u.mux.HandleFunc("POST "+PathCharges, func(w http.ResponseWriter, r *http.Request) { hits.Add(1) })
	cases := map[string]struct {
		mut  func(*ChargeCreateRequest)
		kind error
	}{
		"zero amount":  {func(r *ChargeCreateRequest) { r.Amount = payonce.Amount{} }, payonce.ErrInvalidAmount},
		"bad currency": {func(r *ChargeCreateRequest) { r.Currency = "brl" }, payonce.ErrInvalidRequest},
		"luhn":         {func(r *ChargeCreateRequest) { r.Card.Number = "4111111111111112" }, payonce.ErrInvalidCard},
		"cvv":          {func(r *ChargeCreateRequest) { r.Card.CVV = "12" }, payonce.ErrInvalidCard},
		"expired":      {func(r *ChargeCreateRequest) { r.Card.ExpirationYear = "2001" }, payonce.ErrInvalidCard},
		"no card":      {func(r *ChargeCreateRequest) { r.Card = nil }, payonce.ErrInvalidCard},
		"no type":      {func(r *ChargeCreateRequest) { r.TypeCharge = "" }, payonce.ErrInvalidRequest},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req := guideCharge()
			tc.mut(req)
			_, err := u.client.Charges.Create(context.Background(), req)
			require.Error(t, err)
			assert.ErrorIs(t, err, tc.kind)
			assert.NotEmpty(t, payonce.KeyOf(err).String())
			assert.NotContains(t, err.Error(), "411111111111111")
		})
	}
	_, err := u.client.Charges.Create(context.Background(), guideCharge(), payonce.WithKey(keytest.Key(t, "too-short", guideTime)))
	assert.ErrorIs(t, err, corekit.ErrKeyTooShort)
	_, err = u.client.Charges.Create(context.Background(), guideCharge(), payonce.WithKey(keytest.Key(t, strings.Repeat("k", 129), guideTime)))
	assert.ErrorIs(t, err, corekit.ErrKeyTooLong)
	_, err = u.client.Charges.Capture(context.Background(), &CaptureRequest{})
	assert.ErrorIs(t, err, payonce.ErrInvalidRequest)
	_, err = u.client.Charges.Refund(context.Background(), nil)
	assert.ErrorIs(t, err, payonce.ErrInvalidRequest)
	_, err = u.client.Wallets.Create(context.Background(), &WalletCreateRequest{})
	assert.ErrorIs(t, err, payonce.ErrInvalidRequest)
	assert.Zero(t, hits.Load())
	assert.Zero(t, u.tokens.Load(), "nothing, not even a token request, is sent for an invalid request")
}

// A charge request's webhook URL may carry the merchant's own secret in
// its query string (?token=...): no printed form of the request shows it,
// %#v and %d included, and the card stays masked.
func TestPrintedRequestHidesWebhookQuery(t *testing.T) {
	req := guideCharge()
	req.WebhookURL = "https://merchant.example/hooks/a55?token=whsec_merchant_42"
	for _, v := range []any{req, *req} {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%d", "%x"} {
			s := fmt.Sprintf(verb, v)
			assert.NotContains(t, s, "whsec_merchant_42", verb)
			assert.NotContains(t, s, "4111111111111111", verb)
		}
	}
	assert.Contains(t, fmt.Sprintf("%#v", req), "a55.ChargeCreateRequest{")
}

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
		{"bad key", func(*ChargeCreateRequest) {}, corekit.ErrKeyTooShort, "charges.create: idempotency key too short: at least 16 characters, got 5 ["},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := guideCharge()
			tc.mut(req)
			var opts []payonce.CallOption
			if tc.kind == corekit.ErrKeyTooShort {
				opts = append(opts, payonce.WithKey(keytest.Key(t, "short", guideTime)))
			}
			_, err := u.client.Charges.Create(context.Background(), req, opts...)
			require.Error(t, err)
			assert.ErrorIs(t, err, tc.kind)
			assert.ErrorIs(t, err, payonce.ErrInvalidRequest, "every refusal of input is an invalid request")
			assert.Contains(t, err.Error(), tc.text)
			assert.NotContains(t, err.Error(), "amount: amount")
			var ae *payonce.APIError
			require.True(t, errors.As(err, &ae))
			if tc.kind != corekit.ErrKeyTooShort {
				assert.Equal(t, tc.kind, ae.Kind, "the kind stays the specific one")
			}
			assert.False(t, payonce.IsResumable(err))
		})
	}
	// Every documented type is accepted by the client (the card-less ones
	// without a card).
	for _, typ := range []TypeCharge{TypePix, TypeBoleto, TypeApplePay, TypeGooglePay} {
		req := guideCharge()
		req.TypeCharge, req.Card = typ, nil
		assert.NoError(t, req.validate(guideTime, "https://api.example"), typ)
	}
	assert.Zero(t, hits.Load())
}

func TestValidateCurrency(t *testing.T) {
	assert.NoError(t, validateCurrency(payonce.BRL))
	assert.NoError(t, validateCurrency(payonce.USD))
	for _, c := range []payonce.Currency{"", "brl", "BR", "BRLX", "B1L", "BR\xff"} {
		assert.ErrorIs(t, validateCurrency(c), payonce.ErrInvalidRequest, string(c))
	}
}
