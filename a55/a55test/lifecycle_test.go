package a55test_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/payoncetest"
)

// lifeFake is a fake on a fixed clock with a webhook receiver, driven by
// raw requests in the reference's form.
type lifeFake struct {
	srv  *a55test.Server
	hook string
	got  chan []byte
}

func newLifeFake(t *testing.T) *lifeFake {
	t.Helper()
	lf := &lifeFake{got: make(chan []byte, 64)}
	lf.srv = a55test.New(t, payoncetest.WithClock(payoncetest.NewFixedClock(time.Date(2030, 3, 14, 12, 0, 0, 0, time.UTC))))
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		m := hmac.New(sha256.New, []byte(lf.srv.WebhookSecret()))
		m.Write([]byte(r.Header.Get("X-Webhook-Timestamp") + "."))
		m.Write(b)
		if hex.EncodeToString(m.Sum(nil)) != r.Header.Get("X-Webhook-Signature") {
			w.WriteHeader(http.StatusUnauthorized)
			b = []byte(`{"status":"unsigned"}`)
		}
		lf.got <- b
	}))
	t.Cleanup(rc.Close)
	lf.hook = rc.URL + "/hooks/a55"
	return lf
}

// charge creates a charge of type typ with extra members and returns its
// answer; the creation's webhook is taken.
func (lf *lifeFake) charge(t *testing.T, typ string, extra map[string]any) map[string]any {
	t.Helper()
	body := map[string]any{
		"wallet_uuid": lf.srv.WalletUUID(), "merchant_id": lf.srv.MerchantID(), "payer_name": "João Silva",
		"payer_email": "joao@example.com", "payer_tax_id": "39999999999", "payer_cell_phone": "+5511988887777",
		"installment_value": 150, "installment_count": 1, "currency": "BRL", "due_date": "2030-12-31",
		"description": "order 42", "type_charge": typ, "webhook_url": lf.hook,
		"payer_address": map[string]any{"street": "Av. Paulista", "city": "São Paulo", "state": "SP", "postal_code": "01310-100"},
	}
	for k, v := range extra {
		body[k] = v
	}
	b, _ := json.Marshal(body)
	resp, err := lf.srv.HTTPClient().Post(lf.srv.URL+a55test.ChargePath, "application/json", bytes.NewReader(b))
	require.NoError(t, err)
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", out)
	var m map[string]any
	require.NoError(t, json.Unmarshal(out, &m))
	lf.webhook(t)
	return m
}

// webhook returns the one signed webhook the last change sent.
func (lf *lifeFake) webhook(t *testing.T) map[string]any {
	t.Helper()
	lf.srv.DeliverDueWebhooks()
	var b []byte
	select {
	case b = <-lf.got:
	default:
		t.Fatal("no webhook")
	}
	select {
	case extra := <-lf.got:
		t.Fatalf("a second webhook: %s", extra)
	default:
	}
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	require.NotEqual(t, "unsigned", m["status"], "the signature did not verify")
	return m
}

// Each of a55test's event methods moves the charge and fires one signed
// webhook with its new status, as A55 would.
func TestLifecycleFromGo(t *testing.T) {
	lf := newLifeFake(t)
	s := lf.srv
	card := func(n string) map[string]any {
		return map[string]any{"card_number": n, "card_name": "MARIA SILVA", "card_expiry_month": "12", "card_expiry_year": "2031", "card_cvv": "123"}
	}
	threeDS := func(n string) map[string]any {
		m := card(n)
		m["threeds_authentication"] = true
		m["device_info"] = map[string]any{"ip_address": "192.0.2.1"}
		return m
	}
	id := func(m map[string]any) string { return m["charge_uuid"].(string) }
	for _, tc := range []struct {
		name   string
		typ    string
		extra  map[string]any
		steps  []func(string) error
		status string
		field  string // a member the last webhook adds
	}{
		{"PayPix", "pix", nil, []func(string) error{s.PayPix}, "paid", ""},
		{"ExpirePix", "pix", nil, []func(string) error{s.ExpirePix}, "expired", ""},
		{"RegisterBoleto", "boleto", nil, []func(string) error{s.RegisterBoleto}, "pending", ""},
		{"PayBoleto", "boleto", nil, []func(string) error{s.PayBoleto}, "paid", ""},
		{"ExpireBoleto", "boleto", nil, []func(string) error{s.ExpireBoleto}, "canceled", ""},
		{"Complete3DS", "credit_card", threeDS("4024007153763191"), []func(string) error{s.Complete3DS}, "confirmed", ""},
		{"Complete3DS declined", "debit_card", threeDS("4024007153763192"), []func(string) error{s.Complete3DS}, "error", "error_code"},
		{"Fail3DS", "credit_card", threeDS("4024007153763191"), []func(string) error{s.Fail3DS}, "error", "error_code"},
		{"Abandon3DS", "credit_card", threeDS("4024007153763191"), []func(string) error{s.Abandon3DS}, "canceled", ""},
		{"Refund part", "credit_card", card("4024007153763191"), []func(string) error{func(id string) error { return s.Refund(id, "10.00") }},
			"confirmed", "refund_amount"},
		{"Refund all", "pix", nil, []func(string) error{s.PayPix, func(id string) error { return s.Refund(id, "") }}, "refunded", "refund_amount"},
		{"Chargeback", "credit_card", card("4024007153763191"), []func(string) error{func(id string) error { return s.Chargeback(id, "fraud") }},
			"chargeback_requested", "chargeback_reason"},
		{"ChargebackPreResolution", "credit_card", card("4024007153763191"), []func(string) error{
			func(id string) error { return s.Chargeback(id, "") }, s.ChargebackPreResolution}, "pre_chargeback_resolution", "chargeback_reason"},
		{"ReverseChargeback", "credit_card", card("4024007153763191"), []func(string) error{
			func(id string) error { return s.Chargeback(id, "") }, s.ReverseChargeback}, "chargeback_reversed", "chargeback_reason"},
		{"RefundChargeback", "credit_card", card("4024007153763191"), []func(string) error{
			func(id string) error { return s.Chargeback(id, "") }, s.RefundChargeback}, "chargeback_refunded", "chargeback_reason"},
	} {
		c := id(lf.charge(t, tc.typ, tc.extra))
		var last map[string]any
		for _, step := range tc.steps {
			require.NoError(t, step(c), tc.name)
			last = lf.webhook(t)
		}
		assert.Equal(t, c, last["charge_uuid"], tc.name)
		assert.Equal(t, tc.status, last["status"], tc.name)
		if tc.field != "" {
			assert.NotEmpty(t, last[tc.field], tc.name)
		}
		st, _, err := s.ChargeStatus(c)
		require.NoError(t, err)
		assert.Equal(t, tc.status, st, tc.name)
	}

	pix := id(lf.charge(t, "pix", nil))
	st, events, err := s.ChargeStatus(pix)
	require.NoError(t, err)
	assert.Equal(t, "issued", st)
	assert.Equal(t, []a55test.Event{a55test.EventPixPaid, a55test.EventPixExpired}, events)
	assert.ErrorIs(t, s.Complete3DS(pix), a55test.ErrEventNotAllowed)
	assert.ErrorIs(t, s.Chargeback(pix, ""), a55test.ErrEventNotAllowed, "PIX has no chargebacks")
	assert.ErrorIs(t, s.PayPix("no-such-charge"), a55test.ErrUnknownCharge)
	_, err = s.Trigger(pix, "pix.teleported", "", "")
	assert.ErrorIs(t, err, a55test.ErrUnknownEvent)

	// The clock: at their due date's end the PIX expires and the
	// registered boleto is canceled, by themselves, each with a webhook.
	s.Clock().Set(time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC))
	s.DeliverDueWebhooks()
	ended := map[string]int{}
	for len(lf.got) > 0 {
		var m map[string]any
		require.NoError(t, json.Unmarshal(<-lf.got, &m))
		ended[m["status"].(string)]++
	}
	assert.Equal(t, map[string]int{"expired": 1, "canceled": 1}, ended)
	st, _, err = s.ChargeStatus(pix)
	require.NoError(t, err)
	assert.Equal(t, "expired", st)
}

// The account the fake gives the client is what a reference charge needs.
func TestAccount(t *testing.T) {
	s := a55test.New(t)
	assert.NotEmpty(t, s.WalletUUID())
	assert.NotEmpty(t, s.MerchantID())
	assert.NotEmpty(t, s.EntityUUID())
	w, m, ok := s.AccountOf(a55test.DefaultClientID)
	assert.True(t, ok)
	assert.Equal(t, s.WalletUUID(), w)
	assert.Equal(t, s.MerchantID(), m)
	s.Reset()
	assert.Equal(t, w, s.WalletUUID(), "kept across Reset")
}
