package a55

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
)

// chargeBodies are charge answers for decodeCharge to read as
// json.Unmarshal into a Charge reads them: usual ones, and the ones a
// hostile or broken server may send.
var chargeBodies = []string{
	refAnswer,
	pixAnswer,
	pixDedicatedAnswer,
	`{"charge_uuid":"c1","status":"pending","url_3ds":"https://3ds.example/c1","action_url":"https://other.example/"}`,
	`{"charge_uuid":"c1","status":"pending","action_url":"https://3ds.example/c1"}`,
	`{"charge_uuid":"c1","card":{"number":"4111111111111111","last4":"4111 1111 1111 1111"},"card_number":"4111111111111111"}`,
	`{"charge_uuid":"c1","pix_payload":null}`,
	`{"charge_uuid":"c1","pix_payload":[]}`,
	`{"charge_uuid":"c1","pix_payload":{"qr_code":5}}`,
	`{"charge_uuid":"c1","status":"error","message":[{"code":"card_declined","description":"cvv 123 for 4111111111111111"}]}`,
	`{"charge_uuid":"c1","message":"declined"}`,
	`{"charge_uuid":"c1","message":{"code":"x"}}`,
	`{"charge_uuid":"c1","message":7}`,
	`{"charge_uuid":"c1","amount":"abc"}`,
	`{"charge_uuid":"c1","installment_value":100.505}`,
	`{"charge_uuid":"c1","installment_value":1e2}`,
	`{"charge_uuid":"c1","amount":12.5,"amount":"1.00"}`,
	`{"charge_uuid":"c1","charge_uuid":"c2","subscription":{"cycle":"monthly"},"subscription":{"status":"active"}}`,
	`{"charge_uuid":"c1","created_at":"yesterday"}`,
	`{"charge_uuid":"c1","installment_count":"3"}`,
	`{}`,
	`null`,
	`[]`,
	`"x"`,
	`<html>`,
	`{"charge_uuid":"c1"} x`,
	`{"charge_uuid":"c1","CHARGE_UUID":"c2","Status":"paid"}`,
	`{"charge_uuid":"c\u00e3","url_3ds":"https:\/\/3ds.example\/"}`,
	`{"charge_uuid":"c1","installment_count":3.0}`,
	`{"charge_uuid":"c1","installment_count":99999999999999999999}`,
	`{"charge_uuid":"c1","installment_count":null,"amount":null,"created_at":null,"message":null,"pix_payload":null}`,
	`{"charge_uuid":"c1","pix_payload":{"qr_code":"a"},"pix_payload":{"payload":"b"}}`,
	`{"charge_uuid":"c1","x":{"a":[1,2,{"b":null}],"c":-0.5e+3},"y":[],"z":{}}`,
	`{"charge_uuid":"c1","x":01}`,
	`{"charge_uuid":"c1","x":"\x"}`,
	` {"charge_uuid":"c1"} `,
	`{"charge_uuid":"c1",}`,
	`{"charge_uuid":"c1" "status":"paid"}`,
	"{\"charge_uuid\":\"c\x01\"}",
	"{\"charge_uuid\":\"c\xff\"}",
}

// refAnswer is a confirmed card charge as the reference documents its
// fields.
const refAnswer = `{"charge_uuid":"53213ba7-28f7-4b48-9796-989dff453bc7","wallet_uuid":"00000000-0000-0000-0000-000000000000",` +
	`"merchant_id":"11111111-1111-1111-1111-111111111111","status":"confirmed","type_charge":"credit_card","currency":"BRL",` +
	`"local_currency":100.0,"usd_currency":18.5,"installment_value":100,"installment_count":1,"due_date":"2026-12-31",` +
	`"description":"Order 42","transaction_reference":"txn-abc-123","message":[],` +
	`"created_at":"2026-12-02T00:13:27.258965821Z","updated_at":"2026-12-02T00:13:27.258965821Z","provider_reference":"p-1"}`

// pixAnswer is a PIX charge in the payment-methods/pix page's spelling.
const pixAnswer = `{"charge_uuid":"81f0045c-301a-45c4-96bc-5395f7cf0001","status":"issued","type_charge":"pix","currency":"BRL",` +
	`"installment_value":150,"installment_count":1,"pix_payload":{"qr_code":"iVBORw0KGgo=","payload":"00020126580014br.gov.bcb.pix",` +
	`"expiration_date":"2026-12-31T23:59:59Z"},"charge_payment_url":"https://pay.a55.tech/c/81f0045c"}`

// pixDedicatedAnswer is a PIX charge in the create-pix-charge page's
// spelling.
const pixDedicatedAnswer = `{"charge_uuid":"81f0045c-301a-45c4-96bc-5395f7cf0002","status":"issued","local_currency":150.00,` +
	`"pix_payload":{"qr_code_base64":"iVBORw0KGgo=","copy_paste":"00020126580014br.gov.bcb.pix","expiration":"2026-12-31T23:59:59Z"},` +
	`"charge_payment_url":"https://pay.a55.tech/c/81f0045c"}`

// checkDecodeCharge requires decodeCharge, where it reads body, to give
// what encoding/json gives (decodeChargeSlow), and the fast path, where
// it reads body, the same.
func checkDecodeCharge(t *testing.T, body []byte) {
	var once, fast, want Charge
	slowErr := decodeChargeSlow(body, &want)
	if decodeChargeFast(body, &fast) {
		require.NoError(t, slowErr, "%s", body)
		require.Equal(t, want, fast, "%s", body)
	}
	if !decodeCharge(body, &once) {
		assert.Error(t, slowErr, "%s", body)
		return
	}
	require.NoError(t, slowErr, "%s", body)
	require.Equal(t, want, once, "%s", body)
	var viaUnmarshal Charge
	require.NoError(t, json.Unmarshal(body, &viaUnmarshal))
	require.Equal(t, want, viaUnmarshal, "%s", body)
}

func TestDecodeChargeReadsAsUnmarshal(t *testing.T) {
	for _, b := range chargeBodies {
		checkDecodeCharge(t, []byte(b))
	}
	var ch Charge
	for _, b := range []string{refAnswer, pixAnswer, pixDedicatedAnswer, chargeBodies[3]} {
		assert.True(t, decodeChargeFast([]byte(b), &ch), "the usual answer is read by the fast path: %s", b)
	}
	for _, b := range []string{`{"Charge_UUID":"c"}`, `{"charge_uuid":"c\u0031"}`, `{"ſtatus":"x"}`, `{"subscription":{"cycle":"monthly"}}`} {
		assert.False(t, decodeChargeFast([]byte(b), &ch), "left to encoding/json: %s", b)
	}
}

func FuzzDecodeCharge(f *testing.F) {
	for _, b := range chargeBodies {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, body []byte) { checkDecodeCharge(t, body) })
}

// Both PIX spellings and both 3DS spellings read into the same fields.
func TestChargeReadsEverySpelling(t *testing.T) {
	var a, b Charge
	require.NoError(t, json.Unmarshal([]byte(pixAnswer), &a))
	require.NoError(t, json.Unmarshal([]byte(pixDedicatedAnswer), &b))
	for _, ch := range []Charge{a, b} {
		require.NotNil(t, ch.Pix)
		assert.Equal(t, "iVBORw0KGgo=", ch.Pix.QRCode)
		assert.Equal(t, "00020126580014br.gov.bcb.pix", ch.Pix.Payload)
		exp, ok := ch.Pix.Expiry()
		assert.True(t, ok)
		assert.Equal(t, "2026-12-31T23:59:59Z", exp.UTC().Format("2006-01-02T15:04:05Z"))
		assert.Equal(t, "https://pay.a55.tech/c/81f0045c", ch.ChargePaymentURL)
	}
	var c Charge
	require.NoError(t, json.Unmarshal([]byte(chargeBodies[3]), &c))
	assert.Equal(t, "https://3ds.example/c1", c.URL3DS, "url_3ds wins over action_url")
	require.NoError(t, json.Unmarshal([]byte(chargeBodies[4]), &c))
	assert.Equal(t, "https://3ds.example/c1", c.URL3DS, "action_url alone")
}

// Amounts are read exactly from numbers and decimal strings; an amount
// that cannot be held exactly is a decoding error, never rounded.
func TestChargeAmountsAreExact(t *testing.T) {
	var ch Charge
	require.NoError(t, json.Unmarshal([]byte(`{"charge_uuid":"c","installment_value":100.5,"installment_count":3,"amount":"301.50","local_currency":150.000}`), &ch))
	assert.Equal(t, int64(10050), ch.InstallmentValue.Minor())
	assert.Equal(t, int64(30150), ch.Amount.Minor())
	assert.Equal(t, int64(15000), ch.LocalCurrency.Minor())
	total, err := ch.Total()
	require.NoError(t, err)
	assert.Equal(t, "301.50", total.String())
	for _, b := range []string{`{"charge_uuid":"c","installment_value":100.505}`, `{"charge_uuid":"c","amount":-1}`, `{"charge_uuid":"c","usd_currency":"1e400"}`} {
		assert.Error(t, json.Unmarshal([]byte(b), &ch), b)
		assert.Error(t, Codec{}.DecodeSuccess(200, nil, []byte(b), new(Charge)), b)
	}
	var only Charge
	require.NoError(t, json.Unmarshal([]byte(`{"charge_uuid":"c","amount":"199.90"}`), &only))
	total, err = only.Total()
	require.NoError(t, err)
	assert.Equal(t, "199.90", total.String(), "without the instalment's value, the amount")
}

// Fields the SDK does not model are kept: Raw gives the whole answer,
// card data masked by its field's name (Luhn or not) and secrets cut.
func TestChargeRawKeepsUnknownFieldsMaskingCardData(t *testing.T) {
	body := `{"charge_uuid":"c1","status":"confirmed","provider_reference":"p-9","applepay_payload":{"eci":"05","cavv":"AAABBBCCC"},` +
		`"card":{"number":"4111111111111112","cvv":"987"},"card_number":"5105 1051 0510 5100","token":"tok_live_1"}`
	var ch Charge
	require.NoError(t, Codec{}.DecodeSuccess(200, nil, []byte(body), &ch))
	raw := ch.Raw()
	var v map[string]any
	require.NoError(t, json.Unmarshal(raw, &v), "%s", raw)
	assert.Equal(t, "p-9", v["provider_reference"])
	assert.Equal(t, "05", v["applepay_payload"].(map[string]any)["eci"])
	for _, gone := range []string{"4111111111111112", "987", "5105 1051", "AAABBBCCC", "tok_live_1"} {
		assert.NotContains(t, string(raw), gone)
	}
	assert.Contains(t, string(raw), "************1112", "a number that fails Luhn is masked too")
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%x"} {
		assert.NotContains(t, fmt.Sprintf(verb, ch), "4111111111111112", verb)
		assert.NotContains(t, fmt.Sprintf(verb, ch), "tok_live_1", verb)
	}
	b, err := json.Marshal(ch)
	require.NoError(t, err)
	assert.NotContains(t, string(b), "4111111111111112")
	assert.Nil(t, (&Charge{UUID: "x"}).Raw(), "a charge not read from an answer has none")
}

// An empty message list reads as encoding/json reads it into a slice:
// empty, not nil, whether or not it is spaced.
func TestEmptyMessagesReadAsASlice(t *testing.T) {
	var want []Message
	require.NoError(t, json.Unmarshal([]byte(`[]`), &want))
	for _, b := range []string{`[]`, ` [ ] `, "[\n]"} {
		var m Messages
		require.NoError(t, json.Unmarshal([]byte(b), &m))
		assert.NotNil(t, m, b)
		assert.Equal(t, Messages(want), m, b)
	}
}

// sampleValue is a JSON value of a documented field's type for the
// reference tests: every one reads into a non-zero Go value.
func sampleValue(f refField) any {
	switch {
	case f.Type == "object":
		obj := map[string]any{}
		for _, sub := range f.Fields {
			obj[sub.Name] = sampleValue(sub)
		}
		return obj
	case f.Type == "array":
		obj := map[string]any{}
		for _, sub := range f.Fields {
			obj[sub.Name] = sampleValue(sub)
		}
		return []any{obj}
	case f.Type == "number":
		return json.Number("12.50")
	case f.Type == "integer":
		return 3
	case f.Type == "boolean":
		return true
	case strings.HasSuffix(f.Name, "_at"):
		return "2026-12-01T10:00:00Z"
	}
	return "v-" + f.Name
}

// Every response name the reference documents for a charge, every alias
// included, and every one of its nested fields, reads into the Charge:
// decoding an answer with that field alone changes the result.
func TestEveryDocumentedChargeFieldDecodes(t *testing.T) {
	ref := loadReference(t)
	fields := ref.endpoint(t, "create_charge").Response
	require.NotEmpty(t, fields)
	base := func() map[string]any { return map[string]any{"charge_uuid": "c-base"} }
	decode := func(doc map[string]any) Charge {
		b, err := json.Marshal(doc)
		require.NoError(t, err)
		var ch Charge
		require.NoError(t, Codec{}.DecodeSuccess(200, nil, b, &ch), "%s", b)
		ch.raw = nil
		return ch
	}
	empty := decode(base())
	for _, f := range fields {
		cases := []map[string]any{}
		if f.Type == "object" || f.Type == "array" {
			for _, sub := range f.Fields { // each nested field on its own
				one := refField{Name: f.Name, Type: f.Type, Fields: []refField{sub}}
				doc := base()
				doc[f.Name] = sampleValue(one)
				cases = append(cases, doc)
			}
		} else {
			doc := base()
			doc[f.Name] = sampleValue(f)
			if f.Name == "charge_uuid" {
				doc[f.Name] = "c-other"
			}
			cases = append(cases, doc)
		}
		for _, doc := range cases {
			got := decode(doc)
			assert.False(t, reflect.DeepEqual(empty, got), "documented field %s (%v) is not read", f.Name, doc[f.Name])
		}
	}
}

// Both pages' spellings of a field read into one Go field: an alias
// decodes as its documented name.
func TestEveryDocumentedAliasReadsAsItsName(t *testing.T) {
	ref := loadReference(t)
	var aliases int
	var walk func(parent string, fields []refField)
	walk = func(parent string, fields []refField) {
		for _, f := range fields {
			if f.Alias != "" {
				aliases++
				doc := func(name string) []byte {
					m := map[string]any{name: sampleValue(f)}
					if parent != "" {
						m = map[string]any{parent: m}
					}
					m["charge_uuid"] = "c"
					b, err := json.Marshal(m)
					require.NoError(t, err)
					return b
				}
				var a, b Charge
				require.NoError(t, json.Unmarshal(doc(f.Name), &a))
				require.NoError(t, json.Unmarshal(doc(f.Alias), &b))
				a.raw, b.raw = nil, nil
				assert.Equal(t, b, a, "%s reads as %s", f.Name, f.Alias)
			}
			walk(f.Name, f.Fields)
		}
	}
	walk("", ref.endpoint(t, "create_charge").Response)
	assert.Equal(t, 4, aliases, "action_url and the three pix_payload spellings")
}

// The amounts of a charge answer keep their minor units whatever
// currency the answer names.
func TestChargeAmountFieldsAreAmounts(t *testing.T) {
	typ := reflect.TypeFor[Charge]()
	for _, name := range []string{"LocalCurrency", "USDCurrency", "Amount", "AmountRemaining", "InstallmentValue"} {
		f, ok := typ.FieldByName(name)
		require.True(t, ok, name)
		assert.Equal(t, reflect.TypeFor[payonce.Amount](), f.Type, name)
	}
}

// A pending charge's challenge URL is given only when it is an absolute
// http(s) URL: a hostile answer's javascript: URL is never redirected to.
func TestChargeChallengeURL(t *testing.T) {
	for u, ok := range map[string]bool{"https://3ds.example/c1": true, "http://127.0.0.1:9/3ds": true, "javascript:alert(1)": false,
		"": false, "/relative": false, "https://3ds.example/a b": false} {
		got, gotOK := (&Charge{URL3DS: u}).ChallengeURL()
		assert.Equal(t, ok, gotOK, u)
		if ok {
			assert.Equal(t, u, got)
		}
	}
	var ch Charge
	require.NoError(t, json.Unmarshal([]byte(`{"charge_uuid":"c","status":"pending","action_url":"https://3ds.example/c"}`), &ch))
	got, ok := ch.ChallengeURL()
	assert.True(t, ok)
	assert.Equal(t, "https://3ds.example/c", got)
}

// A timestamp A55 writes in another form than RFC 3339 (no zone, as
// Python's isoformat writes, or a space for the T) never fails the
// answer it is in: the charge or wallet is read, the time left zero (it
// cannot be placed in time) and the text kept in Raw. A wallet's one-time
// credentials are not lost to a timestamp. A timestamp of another JSON
// type is still a malformed answer.
func TestTimestampsInAnotherFormNeverFailAnAnswer(t *testing.T) {
	u := setup(t)
	charge := strings.NewReplacer(`"created_at":"2026-12-02T00:13:27.258965821Z"`, `"created_at":"2026-12-02T00:13:27.258965"`,
		`"updated_at":"2026-12-02T00:13:27.258965821Z"`, `"updated_at":"2026-12-02 00:13:27"`).Replace(refAnswer)
	require.NotEqual(t, refAnswer, charge)
	u.mux.HandleFunc("POST "+PathCharges, func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, charge) })
	ch, err := u.client.Charges.Create(context.Background(), refCharge())
	require.NoError(t, err)
	assert.Equal(t, StatusConfirmed, ch.Status)
	assert.True(t, ch.CreatedAt.IsZero())
	assert.True(t, ch.UpdatedAt.IsZero())
	assert.Contains(t, string(ch.Raw()), `"2026-12-02 00:13:27"`)
	var slow chargeWire
	require.NoError(t, json.Unmarshal([]byte(charge), &slow), "encoding/json's path reads it too")

	wallet := strings.Replace(walletAnswer, `"created_at":"2026-12-01T10:00:00Z"`, `"created_at":"2026-12-01T10:00:00"`, 1)
	require.NotEqual(t, walletAnswer, wallet)
	u.mux.HandleFunc("POST "+PathWallets, func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, wallet) })
	w, err := u.client.Wallets.Create(context.Background(), walletReq())
	require.NoError(t, err)
	require.NotNil(t, w.Credentials, "the credentials reach the caller")
	assert.True(t, w.CreatedAt.IsZero())

	var c Charge
	assert.Error(t, json.Unmarshal([]byte(`{"charge_uuid":"c1","status":"confirmed","created_at":5}`), &c))
	var wl Wallet
	assert.Error(t, json.Unmarshal([]byte(`{"wallet_uuid":"w1","created_at":true}`), &wl))
}
