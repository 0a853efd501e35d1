package a55

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/corekit"
	"github.com/payonce/payonce/internal/keytest"
)

// guideWire is the exact wire form of guideCharge.
const guideWire = `{"amount":"100.00","currency":"BRL","type_charge":"credit_card",` +
	`"card":{"number":"4111111111111111","holder_name":"TEST","expiration_month":"12","expiration_year":"2030","cvv":"123"},` +
	`"payer":{"name":"张伟","email":"zhangwei@example.com","document":"12345678909","document_type":"CPF"}}`

func assertNoCard(t *testing.T, out string) {
	t.Helper()
	assert.NotContains(t, out, "4111111111111111")
	assert.NotContains(t, out, "411111")
	assert.NotContains(t, out, `"cvv":"123"`)
	assert.NotContains(t, out, "123\"")
}

func TestChargeCreateRequestJSONMasksTheCard(t *testing.T) {
	r := guideCharge()
	r.WebhookURL = "https://shop.example/hook?secret=s3cr3t-value"
	b, err := json.Marshal(r)
	require.NoError(t, err)
	assertNoCard(t, string(b))
	assert.Contains(t, string(b), `"number":"************1111"`)
	assert.NotContains(t, string(b), "cvv")
	assert.NotContains(t, string(b), "s3cr3t-value")

	b, err = json.Marshal(*r) // by value
	require.NoError(t, err)
	assertNoCard(t, string(b))

	type job struct {
		Req   *ChargeCreateRequest
		Inner struct{ ChargeCreateRequest }
	}
	j := job{Req: r}
	j.Inner.ChargeCreateRequest = *r
	b, err = json.Marshal(j)
	require.NoError(t, err)
	assertNoCard(t, string(b))

	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("job", "job", struct{ Req *ChargeCreateRequest }{r}, "card", r.Card, "cards", []payonce.Card{*r.Card})
	assertNoCard(t, logged.String())
	assert.Contains(t, logged.String(), "1111")
}

func TestChargeCreateRequestWireFormIsWhole(t *testing.T) {
	b, err := corekit.MarshalWire(guideCharge())
	require.NoError(t, err)
	assert.Equal(t, guideWire, string(b))

	var nilReq *ChargeCreateRequest
	b, err = corekit.MarshalWire(nilReq)
	require.NoError(t, err)
	assert.Equal(t, "null", string(b))
}

func TestChargeCreateWireHasTheRequestFields(t *testing.T) {
	// The wire struct mirrors the request field by field, name, tag and
	// order: a field added to one and not the other fails here.
	req, wire := reflect.TypeFor[ChargeCreateRequest](), reflect.TypeFor[chargeCreateWire]()
	require.Equal(t, req.NumField(), wire.NumField())
	for i := range req.NumField() {
		assert.Equal(t, req.Field(i).Name, wire.Field(i).Name)
		assert.Equal(t, req.Field(i).Tag, wire.Field(i).Tag)
	}
	full := &ChargeCreateRequest{Amount: guideCharge().Amount, Currency: payonce.BRL, TypeCharge: TypePix,
		Payer: &Payer{Name: "P"}, WalletUUID: "w", Description: "d", DueDate: "2030-01-01",
		InstallmentCount: 2, Capture: Bool(false), WebhookURL: "https://shop.example/hook"}
	got, err := corekit.MarshalWire(full)
	require.NoError(t, err)
	want, err := json.Marshal(chargeCreateRequestFields(*full)) // no card: the plain form is the wire form
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got))
}

func TestCreateSendsTheWireBytes(t *testing.T) {
	u := setup(t)
	var got []byte
	u.mux.HandleFunc("POST "+PathCharges, func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		writeJSON(w, 200, `{"charge_uuid":"ch_1","status":"confirmed","amount":"100.00","currency":"BRL",`+
			`"card":{"number":"4111111111111111","last4":"1111"}}`)
	})
	ch, err := u.client.Charges.Create(context.Background(), guideCharge(), payonce.WithKey(keytest.Key(t, "550e8400-e29b-41d4-a716-446655440000", guideTime)))
	require.NoError(t, err)
	assert.Equal(t, guideWire, string(got))
	b, err := json.Marshal(ch)
	require.NoError(t, err)
	assertNoCard(t, string(b))
}

// The request's wire form writes the card whole as encoding/json writes its
// fields, and the amount as payonce.Amount marshals, byte for byte,
// whatever the texts hold: HTML characters, line separators, invalid UTF-8.
func TestChargeCreateWireWritesCardAndAmountAsPayonce(t *testing.T) {
	for _, text := range []string{"ANA SILVA", "<a&b>", "jo\u2028\u00e3o", "x\xffy", `"q"\`, ""} {
		c := payonce.Card{Number: payonce.CardNumber("4111111111111111" + text), HolderName: text,
			ExpirationMonth: text, ExpirationYear: "2099", CVV: payonce.CVV(text)}
		want, err := json.Marshal(struct {
			Number          string `json:"number"`
			HolderName      string `json:"holder_name"`
			ExpirationMonth string `json:"expiration_month"`
			ExpirationYear  string `json:"expiration_year"`
			CVV             string `json:"cvv"`
		}{string(c.Number), c.HolderName, c.ExpirationMonth, c.ExpirationYear, string(c.CVV)})
		require.NoError(t, err)
		body, err := (&ChargeCreateRequest{TypeCharge: TypeCreditCard, Card: &c}).MarshalWire()
		require.NoError(t, err)
		var got struct{ Card json.RawMessage }
		require.NoError(t, json.Unmarshal(body, &got))
		assert.Equal(t, string(want), string(got.Card), "%q", text)
	}
	for _, s := range []string{"0.00", "0.01", "100.00", "123456789.99"} {
		a, err := payonce.ParseAmount(s)
		require.NoError(t, err)
		want, err := json.Marshal(a)
		require.NoError(t, err)
		got, err := json.Marshal(a.String())
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got), s)
	}
}

func TestAmountOmittedWhenZero(t *testing.T) {
	b, err := json.Marshal(RefundRequest{ChargeUUID: "c"})
	require.NoError(t, err)
	assert.JSONEq(t, `{"charge_uuid":"c"}`, string(b))
	amt, _ := payonce.ParseAmount("10.5")
	b, err = json.Marshal(CaptureRequest{ChargeUUID: "c", WalletUUID: "w", Amount: amt})
	require.NoError(t, err)
	assert.JSONEq(t, `{"charge_uuid":"c","wallet_uuid":"w","amount":"10.50"}`, string(b))
}
