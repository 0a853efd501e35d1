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
	"github.com/payonce/payonce/internal/testsupport/keytest"
)

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// counted serves every API path of u, counting the requests that reach it.
func counted(u *unit) *atomic.Int32 {
	var hits atomic.Int32
	u.mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		writeJSON(w, 200, `{"charge_uuid":"ch_1","status":"confirmed"}`)
	})
	return &hits
}

func TestCreateSendsTheReferencePayloadAndBearer(t *testing.T) {
	u := setup(t)
	var gotBody map[string]any
	var gotAuth, gotKey, gotType string
	u.mux.HandleFunc("POST "+PathCharges, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		require.NoError(t, json.Unmarshal(b, &gotBody))
		gotAuth, gotKey, gotType = r.Header.Get("Authorization"), r.Header.Get(corekit.HeaderIdempotencyKey), r.Header.Get("Content-Type")
		w.Header().Set("X-RateLimit-Limit", "100")
		w.Header().Set("X-RateLimit-Remaining", "99")
		w.Header().Set("X-RateLimit-Reset", "1900000000")
		w.Header().Set("X-Request-Id", "req_1")
		writeJSON(w, 200, refAnswer)
	})
	ch, err := u.client.Charges.Create(context.Background(), refCharge(), payonce.WithKey(keytest.Key(t, "550e8400-e29b-41d4-a716-446655440000", guideTime)))
	require.NoError(t, err)
	assert.Equal(t, "Bearer tok-1", gotAuth)
	assert.Equal(t, "application/json", gotType)
	assert.Equal(t, "550e8400-e29b-41d4-a716-446655440000", gotKey)
	var want map[string]any
	require.NoError(t, json.Unmarshal([]byte(refWire), &want))
	assert.Equal(t, want, gotBody)
	assert.Equal(t, "53213ba7-28f7-4b48-9796-989dff453bc7", ch.UUID)
	assert.Equal(t, StatusConfirmed, ch.Status)
	assert.Equal(t, "100.00", ch.InstallmentValue.String())
	assert.Equal(t, "11111111-1111-1111-1111-111111111111", ch.MerchantID)
	assert.Equal(t, "txn-abc-123", ch.TransactionReference)
	assert.Equal(t, gotKey, ch.Meta.Key.String())
	assert.Equal(t, 1, ch.Meta.Attempts)
	assert.Equal(t, "req_1", ch.Meta.RequestID)
	assert.Equal(t, RateLimit{Limit: 100, Remaining: 99, Reset: time.Unix(1900000000, 0)}, ch.Meta.RateLimit)
	var raw map[string]any
	require.NoError(t, json.Unmarshal(ch.Raw(), &raw))
	assert.Equal(t, "p-1", raw["provider_reference"], "a field the SDK does not model is kept")
}

// A PIX charge goes to the generic endpoint with type_charge pix, its
// QR code and copy-and-paste text on the result.
func TestCreatePixCharge(t *testing.T) {
	u := setup(t)
	var got map[string]any
	u.mux.HandleFunc("POST "+PathCharges, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		require.NoError(t, json.Unmarshal(b, &got))
		writeJSON(w, 200, pixAnswer)
	})
	c := u.client.WithAccount(Account{MerchantID: "11111111-1111-1111-1111-111111111111", WalletUUID: "00000000-0000-0000-0000-000000000000"})
	ch, err := c.Charges.Create(context.Background(), pixCharge())
	require.NoError(t, err)
	assert.Equal(t, "pix", got["type_charge"])
	assert.Equal(t, "00000000-0000-0000-0000-000000000000", got["wallet_uuid"], "the account's wallet")
	assert.NotContains(t, got, "card_number")
	assert.Equal(t, StatusIssued, ch.Status)
	require.NotNil(t, ch.Pix)
	assert.Equal(t, "iVBORw0KGgo=", ch.Pix.QRCode)
	assert.Equal(t, "00020126580014br.gov.bcb.pix", ch.Pix.Payload)
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
			hits := counted(u)
			_, err := u.client.Charges.Create(context.Background(), refCharge())
			if tc.refused {
				require.Error(t, err)
				assert.ErrorIs(t, err, payonce.ErrInvalidCard)
				assert.Contains(t, err.Error(), "card_expiry_year: card has expired")
				assert.EqualValues(t, 0, hits.Load(), "refused before any byte is sent")
				return
			}
			require.NoError(t, err)
			assert.EqualValues(t, 1, hits.Load())
		})
	}
}

// requiredBlank empties a required field of the reference's
// create-charge request, by its path in reference.json ("items[].name");
// the request it is given holds the field's parent.
var requiredBlank = map[string]func(r *ChargeCreateRequest){
	"wallet_uuid":               func(r *ChargeCreateRequest) { r.WalletUUID = "" },
	"merchant_id":               func(r *ChargeCreateRequest) { r.MerchantID = "" },
	"payer_name":                func(r *ChargeCreateRequest) { r.Payer.Name = "" },
	"payer_email":               func(r *ChargeCreateRequest) { r.Payer.Email = "" },
	"payer_tax_id":              func(r *ChargeCreateRequest) { r.Payer.TaxID = "" },
	"payer_cell_phone":          func(r *ChargeCreateRequest) { r.Payer.CellPhone = "" },
	"installment_value":         func(r *ChargeCreateRequest) { r.InstallmentValue = payonce.Amount{} },
	"installment_count":         func(r *ChargeCreateRequest) { r.InstallmentCount = 0 },
	"currency":                  func(r *ChargeCreateRequest) { r.Currency = "" },
	"due_date":                  func(r *ChargeCreateRequest) { r.DueDate = "" },
	"description":               func(r *ChargeCreateRequest) { r.Description = "" },
	"type_charge":               func(r *ChargeCreateRequest) { r.TypeCharge = "" },
	"payer_address":             func(r *ChargeCreateRequest) { r.Payer.Address = Address{} },
	"payer_address.street":      func(r *ChargeCreateRequest) { r.Payer.Address.Street = "" },
	"payer_address.city":        func(r *ChargeCreateRequest) { r.Payer.Address.City = "" },
	"payer_address.state":       func(r *ChargeCreateRequest) { r.Payer.Address.State = "" },
	"payer_address.postal_code": func(r *ChargeCreateRequest) { r.Payer.Address.PostalCode = "" },
	"items[].name":              func(r *ChargeCreateRequest) { r.Items[0].Name = "" },
	"items[].quantity":          func(r *ChargeCreateRequest) { r.Items[0].Quantity = 0 },
	"subscription.cycle":        func(r *ChargeCreateRequest) { r.Subscription.Cycle = "" },
	"applepay.eci":              func(r *ChargeCreateRequest) { r.ApplePay.ECI = "" },
	"applepay.cavv":             func(r *ChargeCreateRequest) { r.ApplePay.CAVV = "" },
	"googlepay.eci":             func(r *ChargeCreateRequest) { r.GooglePay.ECI = "" },
	"googlepay.cavv":            func(r *ChargeCreateRequest) { r.GooglePay.CAVV = "" },
}

// requiredPaths lists the required fields of fields by their path, and
// for each the top-level field whose object holds it.
func requiredPaths(prefix string, fields []refField) []string {
	var out []string
	for _, f := range fields {
		p := prefix + f.Name
		if f.Required {
			out = append(out, p)
		}
		sub := p + "."
		if f.Type == "array" {
			sub = p + "[]."
		}
		out = append(out, requiredPaths(sub, f.Fields)...)
	}
	return out
}

// For each field the reference requires, a request without it is refused
// by a *payonce.ValidationError naming it, and nothing is sent: no charge,
// not even a token request.
func TestEveryRequiredFieldIsRefusedBeforeSending(t *testing.T) {
	ref := loadReference(t)
	paths := requiredPaths("", ref.endpoint(t, "create_charge").Request)
	require.Contains(t, paths, "payer_address.postal_code")
	u := setup(t)
	hits := counted(u)
	full := fullCharges()
	for _, p := range paths {
		blank, ok := requiredBlank[p]
		if !assert.True(t, ok, "the test knows how to leave out %s", p) {
			continue
		}
		req := full["credit_card"]
		switch {
		case strings.HasPrefix(p, "applepay."):
			req = full["applepay"]
		case strings.HasPrefix(p, "googlepay."):
			req = full["googlepay"]
		}
		cp := cloneRequest(t, req)
		blank(cp)
		_, err := u.client.Charges.Create(context.Background(), cp)
		require.Error(t, err, p)
		var ve *payonce.ValidationError
		require.True(t, errors.As(err, &ve), "%s: %v", p, err)
		want := strings.ReplaceAll(p, "[]", "[0]")
		if p == "payer_address" {
			assert.True(t, strings.HasPrefix(ve.Field, "payer_address."), "%s: %s", p, ve.Field)
		} else {
			assert.Equal(t, want, ve.Field, "%s: %v", p, err)
		}
		assert.ErrorIs(t, err, payonce.ErrInvalidRequest, p)
		assert.NotEmpty(t, payonce.KeyOf(err).String(), "the refusal carries the key")
	}
	assert.Zero(t, hits.Load(), "nothing is sent for a request the reference would refuse")
	assert.Zero(t, u.tokens.Load(), "not even a token request")
}

// cloneRequest copies r deeply, through its wire form.
func cloneRequest(t *testing.T, r *ChargeCreateRequest) *ChargeCreateRequest {
	t.Helper()
	b, err := r.MarshalWire()
	require.NoError(t, err)
	var c ChargeCreateRequest
	require.NoError(t, json.Unmarshal(b, &c))
	return &c
}

// Every bad value is refused before sending, naming its field: amounts in
// the currency's decimals (100.5 CLP is never rounded), counts per method,
// dates that exist, the card's fields by their wire names.
func TestValidationBeforeSending(t *testing.T) {
	u := setup(t)
	hits := counted(u)
	cases := map[string]struct {
		mut   func(*ChargeCreateRequest)
		kind  error
		field string
	}{
		"fraction in CLP": {func(r *ChargeCreateRequest) { r.Currency, r.InstallmentValue = payonce.CLP, mustAmount("100.5") }, payonce.ErrInvalidAmount, "installment_value"},
		"fraction in COP": {func(r *ChargeCreateRequest) { r.Currency, r.InstallmentValue = payonce.COP, mustAmount("0.01") }, payonce.ErrInvalidAmount, "installment_value"},
		"item fraction in CLP": {func(r *ChargeCreateRequest) {
			r.Currency, r.InstallmentValue = payonce.CLP, mustAmount("100")
			r.Items = []Item{{Name: "x", Quantity: 1, UnitAmount: mustAmount("1.5")}}
		}, payonce.ErrInvalidAmount, "items[0].unit_amount"},
		"unknown currency":  {func(r *ChargeCreateRequest) { r.Currency = "EUR" }, payonce.ErrInvalidRequest, "currency"},
		"lower currency":    {func(r *ChargeCreateRequest) { r.Currency = "brl" }, payonce.ErrInvalidRequest, "currency"},
		"pix in USD":        {func(r *ChargeCreateRequest) { r.TypeCharge, r.Card, r.Currency = TypePix, nil, payonce.USD }, payonce.ErrInvalidRequest, "currency"},
		"13 instalments":    {func(r *ChargeCreateRequest) { r.InstallmentCount = 13 }, payonce.ErrInvalidRequest, "installment_count"},
		"debit instalments": {func(r *ChargeCreateRequest) { r.TypeCharge, r.InstallmentCount = TypeDebitCard, 2 }, payonce.ErrInvalidRequest, "installment_count"},
		"boleto twice":      {func(r *ChargeCreateRequest) { r.TypeCharge, r.Card, r.InstallmentCount = TypeBoleto, nil, 2 }, payonce.ErrInvalidRequest, "installment_count"},
		"no such date":      {func(r *ChargeCreateRequest) { r.DueDate = "2026-02-30" }, payonce.ErrInvalidRequest, "due_date"},
		"date and time":     {func(r *ChargeCreateRequest) { r.DueDate = "2026-12-31T23:59:59Z" }, payonce.ErrInvalidRequest, "due_date"},
		"two @":             {func(r *ChargeCreateRequest) { r.Payer.Email = "a@b@c" }, payonce.ErrInvalidRequest, "payer_email"},
		"spaced e-mail":     {func(r *ChargeCreateRequest) { r.Payer.Email = "a b@c.example" }, payonce.ErrInvalidRequest, "payer_email"},
		"phone letters":     {func(r *ChargeCreateRequest) { r.Payer.CellPhone = "call me" }, payonce.ErrInvalidRequest, "payer_cell_phone"},
		"control text":      {func(r *ChargeCreateRequest) { r.Description = "a\x1b[31m" }, payonce.ErrInvalidRequest, "description"},
		"long text":         {func(r *ChargeCreateRequest) { r.Payer.Name = strings.Repeat("a", 513) }, payonce.ErrInvalidRequest, "payer_name"},
		"wallet with space": {func(r *ChargeCreateRequest) { r.WalletUUID = "w 1" }, payonce.ErrInvalidRequest, "wallet_uuid"},
		"long merchant":     {func(r *ChargeCreateRequest) { r.MerchantID = strings.Repeat("m", 129) }, payonce.ErrInvalidRequest, "merchant_id"},
		"unknown type":      {func(r *ChargeCreateRequest) { r.TypeCharge = "crypto" }, payonce.ErrInvalidRequest, "type_charge"},
		"debit pre-auth":    {func(r *ChargeCreateRequest) { r.TypeCharge, r.Capture = TypeDebitCard, Bool(false) }, payonce.ErrInvalidRequest, "capture"},
		"pix pre-auth":      {func(r *ChargeCreateRequest) { r.TypeCharge, r.Card, r.Capture = TypePix, nil, Bool(false) }, payonce.ErrInvalidRequest, "capture"},
		"debit without 3DS": {func(r *ChargeCreateRequest) { r.TypeCharge = TypeDebitCard }, payonce.ErrInvalidRequest, "threeds_authentication"},
		"3DS without device": {func(r *ChargeCreateRequest) { r.TypeCharge, r.ThreeDSAuthentication = TypeDebitCard, true },
			payonce.ErrInvalidRequest, "device_info"},
		"card on pix": {func(r *ChargeCreateRequest) { r.TypeCharge = TypePix }, payonce.ErrInvalidCard, "card_number"},
		"pix subscription": {func(r *ChargeCreateRequest) {
			r.TypeCharge, r.Card, r.Subscription = TypePix, nil, &Subscription{Cycle: CycleMonthly}
		}, payonce.ErrInvalidRequest, "subscription"},
		"daily cycle": {func(r *ChargeCreateRequest) { r.Subscription = &Subscription{Cycle: "daily"} }, payonce.ErrInvalidRequest, "subscription.cycle"},
		"bad end date": {func(r *ChargeCreateRequest) {
			r.Subscription = &Subscription{Cycle: CycleMonthly, EndDate: "31/12/2027"}
		}, payonce.ErrInvalidRequest, "subscription.end_date"},
		"http webhook":           {func(r *ChargeCreateRequest) { r.WebhookURL = "http://shop.example/hook" }, payonce.ErrInvalidRequest, "webhook_url"},
		"relative redirect":      {func(r *ChargeCreateRequest) { r.RedirectURL = "/return" }, payonce.ErrInvalidRequest, "redirect_url"},
		"number with letters":    {func(r *ChargeCreateRequest) { r.Card.Number = "4111x11111111111" }, payonce.ErrInvalidCard, "card_number"},
		"short number":           {func(r *ChargeCreateRequest) { r.Card.Number = "41111111111" }, payonce.ErrInvalidCard, "card_number"},
		"no holder":              {func(r *ChargeCreateRequest) { r.Card.HolderName = " " }, payonce.ErrInvalidCard, "card_name"},
		"one-digit month":        {func(r *ChargeCreateRequest) { r.Card.ExpirationMonth = "7" }, payonce.ErrInvalidCard, "card_expiry_month"},
		"month 13":               {func(r *ChargeCreateRequest) { r.Card.ExpirationMonth = "13" }, payonce.ErrInvalidCard, "card_expiry_month"},
		"two-digit year":         {func(r *ChargeCreateRequest) { r.Card.ExpirationYear = "30" }, payonce.ErrInvalidCard, "card_expiry_year"},
		"expired":                {func(r *ChargeCreateRequest) { r.Card.ExpirationYear = "2001" }, payonce.ErrInvalidCard, "card_expiry_year"},
		"cvv":                    {func(r *ChargeCreateRequest) { r.Card.CVV = "12" }, payonce.ErrInvalidCard, "card_cvv"},
		"applepay without token": {func(r *ChargeCreateRequest) { r.TypeCharge = TypeApplePay }, payonce.ErrInvalidCard, "applepay"},
		"token without card": {func(r *ChargeCreateRequest) {
			r.TypeCharge, r.Card, r.ApplePay = TypeApplePay, nil, &TokenData{ECI: "05", CAVV: "x"}
		}, payonce.ErrInvalidCard, "card_number"},
		"token on the other wallet": {func(r *ChargeCreateRequest) {
			r.TypeCharge, r.GooglePay = TypeApplePay, &TokenData{ECI: "05", CAVV: "x"}
		}, payonce.ErrInvalidCard, "applepay"},
		"token type": {func(r *ChargeCreateRequest) {
			r.TypeCharge, r.ApplePay = TypeApplePay, &TokenData{ECI: "05", CAVV: "x", Type: TypePix}
		}, payonce.ErrInvalidRequest, "applepay.type"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req := refCharge()
			tc.mut(req)
			_, err := u.client.Charges.Create(context.Background(), req)
			require.Error(t, err)
			assert.ErrorIs(t, err, tc.kind)
			assert.ErrorIs(t, err, payonce.ErrInvalidRequest, "every refusal of input is an invalid request")
			var ve *payonce.ValidationError
			require.True(t, errors.As(err, &ve))
			assert.Equal(t, tc.field, ve.Field, "%v", err)
			assert.NotEmpty(t, payonce.KeyOf(err).String())
			assert.NotContains(t, err.Error(), "411111111111111")
			assert.False(t, payonce.IsResumable(err))
		})
	}
	assert.Zero(t, hits.Load())
	// Every documented type is accepted by the client: the card ones with
	// or without a card (A55's page or SDK takes it then), the others
	// without one.
	for _, typ := range []TypeCharge{TypeCreditCard, TypeDebitCard, TypePix, TypeBoleto, TypeApplePay, TypeGooglePay} {
		req := refCharge()
		req.TypeCharge, req.Card = typ, nil
		assert.NoError(t, req.validate(u.client, req.WalletUUID, req.MerchantID), typ)
	}
	// Whole pesos are fine; so are the full-request examples.
	clp := refCharge()
	clp.Currency, clp.InstallmentValue = payonce.CLP, mustAmount("15000")
	assert.NoError(t, clp.validate(u.client, clp.WalletUUID, clp.MerchantID))
}

// A55's sandbox test cards fail the Luhn check and the sandbox decides by
// their last digit: the client sends them to the Sandbox environment and
// to a loopback base URL (the fakes), and refuses them everywhere else.
func TestLuhnOnlyOutsideSandboxAndLoopback(t *testing.T) {
	const testCard = "4024007153763192" // the test-cards page's decline card: fails Luhn
	req := refCharge()
	req.Card.Number = testCard
	for _, tc := range []struct {
		name string
		opts []payonce.Option
		luhn bool
	}{
		{"sandbox", []payonce.Option{WithEnvironment(Sandbox)}, false},
		{"sandbox spelled otherwise", []payonce.Option{payonce.WithBaseURL("HTTPS://Sandbox.API.a55.tech:443/")}, false},
		{"loopback", nil, false},
		{"production", []payonce.Option{WithEnvironment(Production)}, true},
		{"core-manager", []payonce.Option{WithEnvironment(ProductionCoreManager)}, true},
		{"another host", []payonce.Option{payonce.WithBaseURL("https://a55-proxy.example")}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := AccessToken("tok")
			c, err := NewClient(a, tc.opts...)
			if len(tc.opts) == 0 {
				c = setup(t).client
			}
			require.NoError(t, err)
			assert.Equal(t, tc.luhn, c.luhn)
			err = req.validate(c, req.WalletUUID, req.MerchantID)
			if tc.luhn {
				require.ErrorIs(t, err, payonce.ErrInvalidCard)
				assert.Contains(t, err.Error(), "card_number: fails the Luhn check")
			} else {
				require.NoError(t, err)
			}
		})
	}
}

// A55 needs a merchant and a wallet on every charge: the client's Account
// gives them, a request's own win, and a request that ends up with
// neither is refused naming the field, nothing sent.
func TestAccountDefaultsAndOverrides(t *testing.T) {
	u := setup(t)
	var got []map[string]any
	var paths []string
	u.mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		got, paths = append(got, m), append(paths, r.URL.RequestURI())
		writeJSON(w, 200, `{"charge_uuid":"ch_1","status":"confirmed","charges":[]}`)
	})
	shop := u.client.WithAccount(Account{MerchantID: "mer_1", WalletUUID: "wal_1"})
	assert.Equal(t, Account{}, u.client.Account(), "the original client is unchanged")
	assert.Equal(t, Account{MerchantID: "mer_1", WalletUUID: "wal_1"}, shop.Account())
	assert.Same(t, u.client.Core(), shop.Core(), "one core: one budget, limiter, token cache and journal")

	_, err := shop.Charges.Create(context.Background(), pixCharge())
	require.NoError(t, err)
	own := pixCharge()
	own.WalletUUID, own.MerchantID = "wal_2", "mer_2"
	_, err = shop.Charges.Create(context.Background(), own)
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, []any{"wal_1", "mer_1"}, []any{got[0]["wallet_uuid"], got[0]["merchant_id"]})
	assert.Equal(t, []any{"wal_2", "mer_2"}, []any{got[1]["wallet_uuid"], got[1]["merchant_id"]})

	_, err = shop.Charges.Refund(context.Background(), &RefundRequest{ChargeUUID: "ch_1"})
	require.NoError(t, err)
	_, err = shop.Charges.Get(context.Background(), "ch_1", "")
	require.NoError(t, err)
	_, err = shop.Charges.List(context.Background(), nil)
	require.NoError(t, err)
	assert.Equal(t, "/api/v1/bank/wallet/charge/ch_1/refund/wal_1/", paths[2])
	assert.Contains(t, paths[3], "wallet_uuid=wal_1")
	assert.Contains(t, paths[4], "wallet_uuid=wal_1")

	n := len(got)
	for name, call := range map[string]func() error{
		"create wallet": func() error { _, err := u.client.Charges.Create(context.Background(), pixCharge()); return err },
		"create merchant": func() error {
			_, err := u.client.WithAccount(Account{WalletUUID: "w"}).Charges.Create(context.Background(), pixCharge())
			return err
		},
		"capture": func() error {
			_, err := u.client.Charges.Capture(context.Background(), &CaptureRequest{ChargeUUID: "c"})
			return err
		},
		"refund": func() error {
			_, err := u.client.Charges.Refund(context.Background(), &RefundRequest{ChargeUUID: "c"})
			return err
		},
		"cancel": func() error {
			_, err := u.client.Charges.Cancel(context.Background(), &CancelRequest{ChargeUUID: "c"})
			return err
		},
		"get":  func() error { _, err := u.client.Charges.Get(context.Background(), "c", ""); return err },
		"list": func() error { _, err := u.client.Charges.List(context.Background(), nil); return err },
	} {
		err := call()
		require.Error(t, err, name)
		var ve *payonce.ValidationError
		require.True(t, errors.As(err, &ve), name)
		want := "wallet_uuid"
		if name == "create merchant" {
			want = "merchant_id"
		}
		assert.Equal(t, want, ve.Field, name)
		assert.Contains(t, err.Error(), "WithAccount", "the refusal says where it comes from")
	}
	assert.Len(t, got, n, "nothing sent")
}

// The identifiers of a path are refused before sending when escaping
// could not keep them one segment, and a charge UUID is required.
func TestMovesRefuseBadIdentifiersBeforeSending(t *testing.T) {
	u := setup(t)
	hits := counted(u)
	c := u.client.WithAccount(Account{MerchantID: "m", WalletUUID: "w"})
	for _, id := range []string{"", "../wallet", "a/b", "a?b", "a#b", "a%2Fb", "a b", "a\x00"} {
		_, err := c.Charges.Refund(context.Background(), &RefundRequest{ChargeUUID: id})
		assert.ErrorIs(t, err, payonce.ErrInvalidRequest, "%q", id)
		_, err = c.Charges.Cancel(context.Background(), &CancelRequest{ChargeUUID: "c", WalletUUID: id + "x/"})
		assert.ErrorIs(t, err, payonce.ErrInvalidRequest, "%q", id)
		_, err = c.Charges.Fetch(context.Background(), id)
		assert.ErrorIs(t, err, payonce.ErrInvalidRequest, "%q", id)
	}
	_, err := c.Charges.Refund(context.Background(), &RefundRequest{ChargeUUID: "c", Amount: mustAmount("1.5"), Currency: payonce.CLP})
	assert.ErrorIs(t, err, payonce.ErrInvalidAmount)
	_, err = c.Charges.Capture(context.Background(), &CaptureRequest{ChargeUUID: "c", Amount: mustAmount("1"), Currency: "XXX"})
	assert.ErrorIs(t, err, payonce.ErrInvalidRequest)
	_, err = c.Charges.Capture(context.Background(), nil)
	assert.ErrorIs(t, err, payonce.ErrInvalidRequest)
	_, err = c.Charges.Refund(context.Background(), nil)
	assert.ErrorIs(t, err, payonce.ErrInvalidRequest)
	_, err = c.Charges.Cancel(context.Background(), nil)
	assert.ErrorIs(t, err, payonce.ErrInvalidRequest)
	assert.Zero(t, hits.Load())
	assert.Zero(t, u.tokens.Load())
}

// Fetch reads a charge by the webhook page's path form.
func TestFetchReadsThePathForm(t *testing.T) {
	u := setup(t)
	var path string
	u.mux.HandleFunc("GET /api/v1/bank/wallet/charge/{uuid}/", func(w http.ResponseWriter, r *http.Request) {
		path = r.URL.EscapedPath()
		writeJSON(w, 200, refAnswer)
	})
	ch, err := u.client.Charges.Fetch(context.Background(), "53213ba7-28f7-4b48-9796-989dff453bc7")
	require.NoError(t, err)
	assert.Equal(t, "/api/v1/bank/wallet/charge/53213ba7-28f7-4b48-9796-989dff453bc7/", path)
	assert.Equal(t, StatusConfirmed, ch.Status)
}

// A charge request's webhook URL may carry the merchant's own secret in
// its query string (?token=...): no printed form of the request shows it,
// %#v and %d included, and the card stays masked.
func TestPrintedRequestHidesWebhookQuery(t *testing.T) {
	req := refCharge()
	req.WebhookURL = "https://merchant.example/hooks/a55?token=whsec_merchant_42"
	req.ApplePay = &TokenData{ECI: "05", CAVV: "AAABBBCCC"}
	for _, v := range []any{req, *req} {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%d", "%x"} {
			s := fmt.Sprintf(verb, v)
			assert.NotContains(t, s, "whsec_merchant_42", verb)
			assert.NotContains(t, s, "4111111111111111", verb)
			assert.NotContains(t, s, "AAABBBCCC", verb)
		}
	}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%d", "%x"} {
		assert.NotContains(t, fmt.Sprintf(verb, *req.ApplePay), "AAABBBCCC", verb)
	}
	assert.Contains(t, fmt.Sprintf("%#v", req), "a55.ChargeCreateRequest{")
}

// Every refusal of bad input before sending names the field once, matches
// its specific kind and also payonce.ErrInvalidRequest, and sends nothing.
func TestValidationErrorsTextAndKinds(t *testing.T) {
	u := setup(t)
	hits := counted(u)
	cases := []struct {
		name string
		mut  func(*ChargeCreateRequest)
		kind error
		text string
	}{
		{"zero amount", func(r *ChargeCreateRequest) { r.InstallmentValue = payonce.Amount{} }, payonce.ErrInvalidAmount, "charges.create: invalid amount: installment_value: must be greater than 0 ["},
		{"bad currency", func(r *ChargeCreateRequest) { r.Currency = "brl" }, payonce.ErrInvalidRequest, "invalid request: currency: want BRL, MXN, CLP, COP, PEN, ARS or USD"},
		{"CLP cents", func(r *ChargeCreateRequest) { r.Currency, r.InstallmentValue = payonce.CLP, mustAmount("100.5") }, payonce.ErrInvalidAmount,
			"invalid amount: installment_value: CLP has no decimals: 100.50 cannot be charged (never rounded)"},
		{"no type", func(r *ChargeCreateRequest) { r.TypeCharge = "" }, payonce.ErrInvalidRequest, "invalid request: type_charge: required"},
		{"unknown type", func(r *ChargeCreateRequest) { r.TypeCharge = "crypto" }, payonce.ErrInvalidRequest,
			"invalid request: type_charge: want one of credit_card, pix, boleto, applepay, googlepay, debit_card"},
		{"no wallet", func(r *ChargeCreateRequest) { r.WalletUUID = "" }, payonce.ErrInvalidRequest,
			"invalid request: wallet_uuid: required: set it on the request or on the client (WithAccount)"},
		{"bad key", func(*ChargeCreateRequest) {}, payonce.ErrKeyTooShort, "charges.create: idempotency key too short: at least 16 characters, got 5 ["},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := refCharge()
			tc.mut(req)
			var opts []payonce.CallOption
			if tc.kind == payonce.ErrKeyTooShort {
				opts = append(opts, payonce.WithKey(keytest.Key(t, "short", guideTime)))
			}
			_, err := u.client.Charges.Create(context.Background(), req, opts...)
			require.Error(t, err)
			assert.ErrorIs(t, err, tc.kind)
			assert.ErrorIs(t, err, payonce.ErrInvalidRequest, "every refusal of input is an invalid request")
			assert.Contains(t, err.Error(), tc.text)
			var ae *payonce.APIError
			require.True(t, errors.As(err, &ae))
			if tc.kind != payonce.ErrKeyTooShort {
				assert.Equal(t, tc.kind, ae.Kind, "the kind stays the specific one")
			}
			assert.False(t, payonce.IsResumable(err))
		})
	}
	assert.Zero(t, hits.Load())
}

// A due date is a date that exists, as YYYY-MM-DD: the same answer as
// time.Parse's.
func TestIsDate(t *testing.T) {
	for _, v := range []string{"2026-12-31", "2028-02-29", "2027-02-29", "2026-02-30", "2026-13-01", "2026-00-10", "2026-04-31",
		"2026-04-30", "2026-1-01", "26-12-31", "2026/12/31", "2026-12-31T00:00:00Z", "", "0000-01-01", "9999-12-31", "2026-12-00", "２026-12-31"} {
		p, err := time.Parse(time.DateOnly, v)
		want := err == nil && p.Format(time.DateOnly) == v
		assert.Equal(t, want, isDate(v), v)
	}
}

// A required text of only white space (spaces, a tab, a no-break space)
// is as missing as an empty one: A55 and the fake refuse it, so the
// client refuses it before sending, naming the field.
func TestWhitespaceOnlyRequiredTextIsRefusedBeforeSending(t *testing.T) {
	u := setup(t)
	hits := counted(u)
	blank := " \u00a0 "
	for field, mut := range map[string]func(r *ChargeCreateRequest){
		"payer_name":                func(r *ChargeCreateRequest) { r.Payer.Name = blank },
		"description":               func(r *ChargeCreateRequest) { r.Description = blank },
		"payer_address.street":      func(r *ChargeCreateRequest) { r.Payer.Address.Street = blank },
		"payer_address.city":        func(r *ChargeCreateRequest) { r.Payer.Address.City = "  " },
		"payer_address.state":       func(r *ChargeCreateRequest) { r.Payer.Address.State = "  " },
		"payer_address.postal_code": func(r *ChargeCreateRequest) { r.Payer.Address.PostalCode = blank },
		"items[0].name":             func(r *ChargeCreateRequest) { r.Items = []Item{{Name: blank, Quantity: 1}} },
	} {
		r := refCharge()
		mut(r)
		_, err := u.client.Charges.Create(context.Background(), r)
		var ve *payonce.ValidationError
		require.True(t, errors.As(err, &ve), "%s: %v", field, err)
		assert.Equal(t, field, ve.Field)
		assert.ErrorIs(t, err, payonce.ErrInvalidRequest, field)
	}
	_, err := u.client.Wallets.Create(context.Background(), &WalletCreateRequest{EntityUUID: "ent-1", CustomerID: "cust-1",
		Currency: payonce.BRL, Name: blank, Email: "a@example.com"})
	var ve *payonce.ValidationError
	require.True(t, errors.As(err, &ve), "%v", err)
	assert.Equal(t, "name", ve.Field)
	assert.Zero(t, hits.Load(), "nothing is sent")
	assert.Zero(t, u.tokens.Load(), "not even a token request")
}

// threeds_authentication needs device_info whatever the card method (the
// 3DS page: "mandatory payload for 3DS: ... device_info"), and only
// credit and debit cards take 3DS: a wallet token carries its own
// authentication (eci, cavv). Both are refused before sending.
func TestThreeDSRulesHoldForEveryMethodBeforeSending(t *testing.T) {
	u := setup(t)
	hits := counted(u)
	device := &DeviceInfo{IPAddress: "192.168.0.1", UserAgent: "Mozilla/5.0"}
	for name, c := range map[string]struct {
		mut   func(r *ChargeCreateRequest)
		field string
	}{
		"credit card 3DS without device_info": {func(r *ChargeCreateRequest) { r.ThreeDSAuthentication = true }, "device_info"},
		"credit card paid on A55's page, 3DS without device_info": {func(r *ChargeCreateRequest) {
			r.Card, r.ThreeDSAuthentication = nil, true
		}, "device_info"},
		"apple pay with 3DS": {func(r *ChargeCreateRequest) {
			r.TypeCharge, r.ApplePay = TypeApplePay, &TokenData{ECI: "05", CAVV: "AAABBBCCCDDD"}
			r.ThreeDSAuthentication, r.DeviceInfo = true, device
		}, "threeds_authentication"},
		"google pay with 3DS": {func(r *ChargeCreateRequest) {
			r.TypeCharge, r.Card, r.ThreeDSAuthentication, r.DeviceInfo = TypeGooglePay, nil, true, device
		}, "threeds_authentication"},
	} {
		r := refCharge()
		c.mut(r)
		_, err := u.client.Charges.Create(context.Background(), r)
		var ve *payonce.ValidationError
		require.True(t, errors.As(err, &ve), "%s: %v", name, err)
		assert.Equal(t, c.field, ve.Field, name)
	}
	assert.Zero(t, hits.Load(), "nothing is sent")
}

// An identifier that goes in a path is one segment of it, never a dot
// segment: "." would be resolved away on the way (a refund of charge "."
// reached /charge/refund/{wallet}/, the guide's endpoint, and Fetch(".")
// the get-charge endpoint). It is refused before sending.
func TestPathIDsThatAreDotSegmentsAreRefusedBeforeSending(t *testing.T) {
	u := setup(t)
	hits := counted(u)
	for _, id := range []string{".", ".."} {
		_, err := u.client.Charges.Refund(context.Background(), &RefundRequest{ChargeUUID: id, WalletUUID: "w1"})
		var ve *payonce.ValidationError
		require.True(t, errors.As(err, &ve), "refund of %q: %v", id, err)
		assert.Equal(t, "charge_uuid", ve.Field)
		_, err = u.client.Charges.Cancel(context.Background(), &CancelRequest{ChargeUUID: "c1", WalletUUID: id})
		require.True(t, errors.As(err, &ve), "cancel in wallet %q: %v", id, err)
		assert.Equal(t, "wallet_uuid", ve.Field)
		_, err = u.client.Charges.Fetch(context.Background(), id)
		require.True(t, errors.As(err, &ve), "fetch of %q: %v", id, err)
		assert.Equal(t, "charge_uuid", ve.Field)
	}
	assert.Zero(t, hits.Load(), "nothing is sent")
}
