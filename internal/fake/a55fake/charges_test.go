package a55fake_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce/internal/fake/a55fake"
)

// What each method answers on create: a card with capture true (or
// omitted) is confirmed and captured, with capture false confirmed and
// nothing captured; a card charge without card fields, PIX and boleto
// are issued; a 3DS charge is pending with url_3ds. Never pending for a
// pre-authorisation or a PIX.
func TestCreateStatusByMethod(t *testing.T) {
	h := newHarness(t, a55fake.Config{})
	dev := map[string]any{"device_info": map[string]any{"ip_address": "192.0.2.1", "user_agent": "Mozilla/5.0"}}
	for _, tc := range []struct {
		name               string
		body               map[string]any
		status, remaining  string
		url3DS, paymentURL bool
	}{
		{"card", h.body("credit_card", card("4024007153763191")), "confirmed", "150.00", false, false},
		{"card capture true", h.body("credit_card", with(card("4024007153763191"), map[string]any{"capture": true})), "confirmed", "150.00", false, false},
		{"pre-authorisation", h.body("credit_card", with(card("4024007153763191"), map[string]any{"capture": false})), "confirmed", "0.00", false, false},
		{"card without card fields", h.body("credit_card", nil), "issued", "0.00", false, false},
		{"applepay through the SDK", h.body("applepay", nil), "issued", "0.00", false, false},
		{"pix", h.body("pix", nil), "issued", "0.00", false, true},
		{"boleto", h.body("boleto", nil), "issued", "0.00", false, false},
		{"3ds credit", h.body("credit_card", with(card("4024007153763191"), dev, map[string]any{"threeds_authentication": true})), "pending", "0.00", true, false},
		{"debit", h.body("debit_card", with(card("4024007153763191"), dev, map[string]any{"threeds_authentication": true})), "pending", "0.00", true, false},
	} {
		out := h.create(t, chargePath, tc.body)
		assert.Equal(t, tc.status, out["status"], tc.name)
		assert.Equal(t, json.Number(tc.remaining), out["amount_remaining"], tc.name)
		assert.Equal(t, tc.url3DS, out["url_3ds"] != nil, tc.name)
		assert.Equal(t, tc.paymentURL, out["charge_payment_url"] != nil, tc.name)
	}
}

// The generic endpoint answers PIX in the payment-methods/pix page's
// spelling, /charge/pix/ in the create-pix-charge page's; each charge
// keeps its spelling when read again.
func TestPixSpellingPerEndpoint(t *testing.T) {
	h := newHarness(t, a55fake.Config{})
	pixBody := h.body("", map[string]any{"type_charge": nil, "installment_value": nil, "installment_count": nil,
		"amount": json.Number("150.00")})
	for _, tc := range []struct {
		path       string
		body       map[string]any
		want, not  []string
		expiration string
	}{
		{chargePath, h.body("pix", nil), []string{"qr_code", "payload", "expiration_date"}, []string{"qr_code_base64", "copy_paste", "expiration"}, "expiration_date"},
		{pixPath, pixBody, []string{"qr_code_base64", "copy_paste", "expiration"}, []string{"qr_code", "payload", "expiration_date"}, "expiration"},
	} {
		created := h.create(t, tc.path, tc.body)
		got := h.do(t, http.MethodGet, chargePath+created["charge_uuid"].(string)+"/", "", nil)
		require.Equal(t, http.StatusOK, got.status)
		for _, out := range []map[string]any{created, got.obj(t)} {
			p, ok := out["pix_payload"].(map[string]any)
			require.True(t, ok, "%s: %v", tc.path, out)
			for _, k := range tc.want {
				assert.NotEmpty(t, p[k], "%s %s", tc.path, k)
			}
			for _, k := range tc.not {
				assert.NotContains(t, p, k, tc.path)
			}
			assert.Equal(t, "2030-12-31T23:59:59Z", p[tc.expiration], "a PIX expires at its due date's end")
			assert.Equal(t, "issued", out["status"])
			assert.Equal(t, json.Number("150.00"), out["local_currency"])
			assert.True(t, strings.HasPrefix(p[tc.want[1]].(string), "000201"), "an EMV payload")
		}
	}
	// The dedicated endpoint takes BRL only and validates amount.
	r := h.do(t, http.MethodPost, pixPath, "", with(pixBody, map[string]any{"currency": "USD"}))
	assert.Equal(t, http.StatusUnprocessableEntity, r.status)
	assert.Equal(t, "CURRENCY_NOT_SUPPORTED", r.code(t))
	r = h.do(t, http.MethodPost, pixPath, "", with(pixBody, map[string]any{"amount": json.Number("150.001")}))
	assert.Equal(t, http.StatusUnprocessableEntity, r.status)
	assert.Equal(t, "AMOUNT_INVALID", r.code(t))
	assert.Equal(t, []string{"amount"}, r.details(t))
}

// Amounts are exact decimals with the currency's places: 100.5 CLP and
// 1.001 BRL are refused, 100.00 CLP is 100; zero, negative and exponent
// forms too. Answers write the currency's places.
func TestAmountsFollowTheCurrency(t *testing.T) {
	h := newHarness(t, a55fake.Config{})
	for _, tc := range []struct {
		currency, value string
		ok              bool
		answer          string
	}{
		{"BRL", "100.5", true, "100.50"},
		{"BRL", "100", true, "100.00"},
		{"BRL", "100.50", true, "100.50"},
		{"BRL", "1.001", false, ""},
		{"BRL", "0", false, ""},
		{"BRL", "0.00", false, ""},
		{"BRL", "-5", false, ""},
		{"BRL", "1e2", false, ""},
		{"BRL", "12345678901234", false, ""},
		{"USD", "19.99", true, "19.99"},
		{"CLP", "100", true, "100"},
		{"CLP", "100.00", true, "100"},
		{"CLP", "100.5", false, ""},
		{"COP", "2500.01", false, ""},
		{"MXN", "0.01", true, "0.01"},
	} {
		r := h.do(t, http.MethodPost, chargePath, "", h.body("credit_card", map[string]any{
			"currency": tc.currency, "installment_value": json.RawMessage(tc.value)}))
		if !tc.ok {
			if assert.Equal(t, http.StatusUnprocessableEntity, r.status, "%s %s: %s", tc.currency, tc.value, r.body) {
				assert.Equal(t, "AMOUNT_INVALID", r.code(t))
				assert.Equal(t, []string{"installment_value"}, r.details(t))
			}
			continue
		}
		require.Equal(t, http.StatusOK, r.status, "%s %s: %s", tc.currency, tc.value, r.body)
		assert.Contains(t, string(r.body), `"installment_value":`+tc.answer+`,`, "%s %s", tc.currency, tc.value)
	}
	// An unknown currency, and PIX or boleto in another currency.
	r := h.do(t, http.MethodPost, chargePath, "", h.body("credit_card", map[string]any{"currency": "EUR"}))
	assert.Equal(t, "CURRENCY_NOT_SUPPORTED", r.code(t))
	for _, typ := range []string{"pix", "boleto"} {
		r := h.do(t, http.MethodPost, chargePath, "", h.body(typ, map[string]any{"currency": "MXN"}))
		assert.Equal(t, http.StatusUnprocessableEntity, r.status)
		assert.Equal(t, "CURRENCY_NOT_SUPPORTED", r.code(t), typ)
	}
}

// Instalments: the request carries the value per instalment and the
// count; the answer's amount is their product. Credit 1..12; debit, PIX
// and boleto exactly 1.
func TestInstalments(t *testing.T) {
	h := newHarness(t, a55fake.Config{})
	out := h.create(t, chargePath, h.body("credit_card", with(card("4024007153763191"),
		map[string]any{"installment_value": json.Number("33.33"), "installment_count": 3})))
	assert.Equal(t, json.Number("99.99"), out["amount"])
	assert.Equal(t, json.Number("33.33"), out["installment_value"])
	for _, tc := range []struct {
		typ   string
		count any
	}{{"credit_card", 13}, {"credit_card", 0}, {"debit_card", 2}, {"pix", 2}, {"boleto", 3}} {
		r := h.do(t, http.MethodPost, chargePath, "", h.body(tc.typ, map[string]any{"installment_count": tc.count}))
		assert.Equal(t, http.StatusUnprocessableEntity, r.status, "%s %v", tc.typ, tc.count)
		assert.Contains(t, r.details(t), "installment_count", "%s %v", tc.typ, tc.count)
	}
	r := h.do(t, http.MethodPost, chargePath, "", h.body("credit_card", map[string]any{"installment_count": json.Number("1.5")}))
	assert.Equal(t, http.StatusBadRequest, r.status, "an integer member")
}

// The reference's other rules, each answered 422 naming the member.
func TestCreateRules(t *testing.T) {
	h := newHarness(t, a55fake.Config{})
	dev := map[string]any{"ip_address": "192.0.2.1"}
	cardFields := card("4024007153763191")
	for _, tc := range []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"card fields all or none", h.body("credit_card", with(cardFields, map[string]any{"card_cvv": nil})), "card_cvv"},
		{"card number digits", h.body("credit_card", with(cardFields, map[string]any{"card_number": "4024 0071 5376 3191"})), "card_number"},
		{"card number length", h.body("credit_card", with(cardFields, map[string]any{"card_number": "40240071"})), "card_number"},
		{"expiry month", h.body("credit_card", with(cardFields, map[string]any{"card_expiry_month": "7"})), "card_expiry_month"},
		{"expiry month range", h.body("credit_card", with(cardFields, map[string]any{"card_expiry_month": "13"})), "card_expiry_month"},
		{"expiry year", h.body("credit_card", with(cardFields, map[string]any{"card_expiry_year": "31"})), "card_expiry_year"},
		{"expired card", h.body("credit_card", with(cardFields, map[string]any{"card_expiry_month": "02", "card_expiry_year": "2030"})), "card_expiry_year"},
		{"cvv", h.body("credit_card", with(cardFields, map[string]any{"card_cvv": "12"})), "card_cvv"},
		{"card fields on pix", h.body("pix", cardFields), "card_number"},
		{"debit without 3DS", h.body("debit_card", cardFields), "threeds_authentication"},
		{"debit without device_info", h.body("debit_card", with(cardFields, map[string]any{"threeds_authentication": true})), "device_info"},
		{"debit pre-authorisation", h.body("debit_card", map[string]any{"capture": false}), "capture"},
		{"pix pre-authorisation", h.body("pix", map[string]any{"capture": false}), "capture"},
		{"3DS on pix", h.body("pix", map[string]any{"threeds_authentication": true, "device_info": dev}), "threeds_authentication"},
		{"subscription on pix", h.body("pix", map[string]any{"subscription": map[string]any{"cycle": "monthly"}}), "subscription"},
		{"subscription cycle", h.body("credit_card", map[string]any{"subscription": map[string]any{"cycle": "daily"}}), "subscription.cycle"},
		{"applepay object on credit", h.body("credit_card", with(cardFields, map[string]any{"applepay": map[string]any{"eci": "05", "cavv": "x"}})), "applepay"},
		{"applepay token without its object", h.body("applepay", cardFields), "applepay"},
		{"applepay object without the card", h.body("applepay", map[string]any{"applepay": map[string]any{"eci": "05", "cavv": "x"}}), "card_number"},
		{"due date", h.body("credit_card", map[string]any{"due_date": "2030-02-30"}), "due_date"},
		{"due date shape", h.body("credit_card", map[string]any{"due_date": "31/12/2030"}), "due_date"},
		{"boleto due in the past", h.body("boleto", map[string]any{"due_date": "2030-03-13"}), "due_date"},
		{"e-mail", h.body("pix", map[string]any{"payer_email": "joao at example.com"}), "payer_email"},
		{"webhook over plain http", h.body("pix", map[string]any{"webhook_url": "http://shop.example/hook"}), "webhook_url"},
		{"relative redirect", h.body("pix", map[string]any{"redirect_url": "/return"}), "redirect_url"},
		{"empty payer name", h.body("pix", map[string]any{"payer_name": "  "}), "payer_name"},
		{"control characters", h.body("pix", map[string]any{"description": "a\u0000b"}), "description"},
		{"long description", h.body("pix", map[string]any{"description": strings.Repeat("d", 1025)}), "description"},
		{"item quantity", h.body("pix", map[string]any{"items": []any{map[string]any{"name": "x", "quantity": 0}}}), "items[0].quantity"},
		{"item amount decimals", h.body("pix", map[string]any{"items": []any{map[string]any{"name": "x", "quantity": 1, "unit_amount": json.Number("1.999")}}}), "items[0].unit_amount"},
		{"type_charge", h.body("cash", nil), "type_charge"},
		{"JCB", h.body("credit_card", card("3530111333300000")), "card_number"},
		{"Diners in instalments", h.body("credit_card", with(card("36000000000008"), map[string]any{"installment_count": 2})), "installment_count"},
	} {
		r := h.do(t, http.MethodPost, chargePath, "", tc.body)
		if assert.Equal(t, http.StatusUnprocessableEntity, r.status, "%s: %s", tc.name, r.body) {
			assert.Contains(t, r.details(t), tc.field, tc.name)
		}
	}
	assert.Empty(t, h.e.Ledger().Operations())
}

// The wallet must be the client's and the merchant the wallet's.
func TestCreateWalletAndMerchant(t *testing.T) {
	h := newHarness(t, a55fake.Config{Clients: map[string]string{"demo-client": "demo-secret", "other": "other-secret"}})
	other, _ := h.f.AccountOf("other")
	r := h.do(t, http.MethodPost, chargePath, "", h.body("pix", map[string]any{"wallet_uuid": other.WalletUUID, "merchant_id": other.MerchantUUID}))
	assert.Equal(t, http.StatusForbidden, r.status, "%s", r.body)
	r = h.do(t, http.MethodPost, chargePath, "", h.body("pix", map[string]any{"wallet_uuid": "wal_unknown"}))
	assert.Equal(t, http.StatusNotFound, r.status)
	r = h.do(t, http.MethodPost, chargePath, "", h.body("pix", map[string]any{"merchant_id": other.MerchantUUID}))
	assert.Equal(t, http.StatusUnprocessableEntity, r.status)
	assert.Equal(t, []string{"merchant_id"}, r.details(t))
}

// The sandbox decides a card by its last digit (test-cards page, the
// Luhn check not made: its test cards fail it); the quickstart's cards
// keep their answers, 4000000000000002 as declined.
func TestTestCards(t *testing.T) {
	h := newHarness(t, a55fake.Config{})
	for _, tc := range []struct {
		number, status, code string
	}{
		{"4024007153763191", "confirmed", ""},
		{"4024007153763190", "confirmed", ""},
		{"4024007153763194", "confirmed", ""},
		{"4024007153763192", "error", "05"},
		{"4024007153763193", "error", "57"},
		{"4024007153763195", "error", "78"},
		{"4024007153763196", "error", "99"},
		{"4024007153763197", "error", "77"},
		{"4024007153763198", "error", "70"},
		{a55fake.CardConfirms, "confirmed", ""},
		{a55fake.CardDeclined, "declined", "CARD_DECLINED"},
		{a55fake.CardProcError, "error", "PROCESSING_ERROR"},
	} {
		r := h.do(t, http.MethodPost, chargePath, "", h.body("credit_card", card(tc.number)))
		out := r.obj(t)
		assert.Equal(t, tc.status, out["status"], tc.number)
		if tc.code == "" {
			assert.Equal(t, http.StatusOK, r.status, tc.number)
			continue
		}
		assert.Equal(t, http.StatusBadRequest, r.status, tc.number)
		msg := out["message"].([]any)[0].(map[string]any)
		assert.Equal(t, tc.code, msg["code"], tc.number)
		assert.NotEmpty(t, out["charge_uuid"])
	}
}

// The idempotency guide's own body is recognised as the guide's form and
// validated by the guide's rules; its cards and payer are nested.
func TestGuideForm(t *testing.T) {
	h := newHarness(t, a55fake.Config{})
	const guide = `{
"amount": "100.00",
"currency": "BRL",
"type_charge": "credit_card",
"card": { "number": "4111111111111111", "holder_name": "TEST", "expiration_month": "12", "expiration_year": "2030", "cvv": "123" },
"payer": { "name": "张伟", "email": "zhangwei@example.com", "document": "12345678909", "document_type": "CPF" }
}`
	const key = "550e8400-e29b-41d4-a716-446655440000"
	first := h.do(t, http.MethodPost, chargePath, key, guide)
	require.Equal(t, http.StatusOK, first.status, "%s", first.body)
	out := first.obj(t)
	assert.Equal(t, "confirmed", out["status"])
	assert.Equal(t, h.acct.WalletUUID, out["wallet_uuid"], "the client's own wallet")
	assert.Equal(t, key, out["idempotency_key"])
	again := h.do(t, http.MethodPost, chargePath, key, guide)
	assert.Equal(t, first.body, again.body, "the same key and body: the original answer")
	assert.Equal(t, 1, h.e.Ledger().Count(key))

	for _, tc := range []struct {
		body, field string
		status      int
	}{
		{`{"amount":100.00,"currency":"BRL","type_charge":"pix"}`, "amount", 400},
		{`{"amount":"100.001","currency":"BRL","type_charge":"pix"}`, "amount", 422},
		{`{"amount":"1.5","currency":"CLP","type_charge":"credit_card","card":{"number":"4111111111111111","holder_name":"T","expiration_month":"12","expiration_year":"2031","cvv":"123"}}`, "amount", 422},
		{`{"amount":"10.00","type_charge":"pix"}`, "currency", 422},
		{`{"amount":"10.00","currency":"BRL"}`, "type_charge", 422},
		{`{"amount":"10.00","currency":"BRL","type_charge":"credit_card"}`, "card", 422},
		{`{"amount":"10.00","currency":"BRL","type_charge":"credit_card","card":{"number":"4111111111111111"}}`, "card.cvv", 422},
		{`{"amount":"10.00","currency":"BRL","type_charge":"pix","payer":{"name":1}}`, "payer.name", 400},
		{`{"amount":"10.00","currency":"BRL","type_charge":"pix","installment_count":3}`, "installment_count", 422},
	} {
		r := h.do(t, http.MethodPost, chargePath, "", tc.body)
		if assert.Equal(t, tc.status, r.status, "%s: %s", tc.body, r.body) {
			assert.Contains(t, r.details(t), tc.field, tc.body)
		}
	}
	// A body mixing the guide's amount with reference members is read by
	// the reference's rules.
	r := h.do(t, http.MethodPost, chargePath, "", `{"amount":"10.00","currency":"BRL","type_charge":"pix","merchant_id":"m"}`)
	assert.Equal(t, http.StatusUnprocessableEntity, r.status)
	assert.Contains(t, r.details(t), "installment_value")
	assert.Contains(t, r.details(t), "amount")
}

// Get answers in the query form (both UUIDs required) and the path form.
func TestGetForms(t *testing.T) {
	h := newHarness(t, a55fake.Config{})
	id := h.create(t, chargePath, h.body("pix", nil))["charge_uuid"].(string)
	r := h.do(t, http.MethodGet, chargePath+"?charge_uuid="+id+"&wallet_uuid="+h.acct.WalletUUID, "", nil)
	assert.Equal(t, http.StatusOK, r.status)
	r = h.do(t, http.MethodGet, chargePath+id+"/", "", nil)
	assert.Equal(t, http.StatusOK, r.status)
	r = h.do(t, http.MethodGet, chargePath+"?charge_uuid="+id, "", nil)
	assert.Equal(t, http.StatusUnprocessableEntity, r.status)
	assert.Equal(t, []string{"wallet_uuid"}, r.details(t))
	r = h.do(t, http.MethodGet, chargePath+"?charge_uuid=nope&wallet_uuid="+h.acct.WalletUUID, "", nil)
	assert.Equal(t, http.StatusNotFound, r.status)
}

// payer_cell_phone is a mobile number with its country code: 8 to 15
// digits, a leading + and spaces, dashes or parentheses between them. A
// number of another shape is 422 naming the field, on both create
// endpoints, as the client refuses it before sending.
func TestPayerCellPhoneIsChecked(t *testing.T) {
	h := newHarness(t, a55fake.Config{})
	pix := h.body("pix", nil)
	delete(pix, "type_charge")
	delete(pix, "installment_value")
	delete(pix, "installment_count")
	pix["amount"] = json.Number("150.00")
	for _, phone := range []string{"12", "1234567", "+55 11 9888-877x", "55+11988887777", "1234567890123456"} {
		for path, body := range map[string]map[string]any{chargePath: h.body("pix", nil), pixPath: pix} {
			r := h.do(t, http.MethodPost, path, "", with(body, map[string]any{"payer_cell_phone": phone}))
			if assert.Equal(t, http.StatusUnprocessableEntity, r.status, "%s %q: %s", path, phone, r.body) {
				assert.Contains(t, r.details(t), "payer_cell_phone", "%s %q", path, phone)
			}
		}
	}
	assert.Empty(t, h.e.Ledger().Operations())
	for _, phone := range []string{"+5511988887777", "5511988887777", "+55 (11) 98888-7777"} {
		r := h.do(t, http.MethodPost, chargePath, "", h.body("pix", map[string]any{"payer_cell_phone": phone}))
		assert.Equal(t, http.StatusOK, r.status, "%q: %s", phone, r.body)
	}
}
