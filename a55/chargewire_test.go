package a55

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/corekit"
	"github.com/payonce/payonce/internal/testsupport/keytest"
)

// wireReference is testdata/a55/reference.json's endpoints: every name
// A55's reference documents, which the client's tests (and the fake's)
// hold their side to.
type wireReference struct {
	Endpoints []refEndpoint `json:"endpoints"`
}

type refEndpoint struct {
	Name       string     `json:"name"`
	Method     string     `json:"method"`
	Path       string     `json:"path"`
	Keyed      bool       `json:"keyed"`
	PathParams []string   `json:"path_params"`
	Request    []refField `json:"request"`
	Query      []refField `json:"query"`
	Response   []refField `json:"response"`
	ResponseAs string     `json:"response_as"`
	OneOf      []string   `json:"one_of"`
	Never      []string   `json:"response_never"`
}

type refField struct {
	Name     string     `json:"name"`
	Type     string     `json:"type"`
	Required bool       `json:"required"`
	Alias    string     `json:"alias"`
	FakeOnly bool       `json:"fake_only"`
	Card     bool       `json:"card"`
	Secret   bool       `json:"secret"`
	Enum     []string   `json:"enum"`
	Fields   []refField `json:"fields"`
}

// loadReference reads the list of documented names.
func loadReference(t *testing.T) *wireReference {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "a55", "reference.json"))
	require.NoError(t, err)
	var r wireReference
	require.NoError(t, json.Unmarshal(b, &r))
	return &r
}

// endpoint is the endpoint named name, its response fields those of the
// endpoint it answers as (response_as).
func (r *wireReference) endpoint(t *testing.T, name string) refEndpoint {
	t.Helper()
	for _, e := range r.Endpoints {
		if e.Name == name {
			if e.ResponseAs != "" {
				e.Response = r.endpoint(t, e.ResponseAs).Response
			}
			return e
		}
	}
	require.FailNow(t, "no endpoint "+name+" in reference.json")
	return refEndpoint{}
}

// field is the documented field of fields named name.
func field(fields []refField, name string) (refField, bool) {
	for _, f := range fields {
		if f.Name == name {
			return f, true
		}
	}
	return refField{}, false
}

// jsonType names the reference's type of a decoded JSON value.
func jsonType(v any) string {
	switch x := v.(type) {
	case string:
		return "string"
	case json.Number:
		if strings.ContainsAny(x.String(), ".eE") {
			return "number"
		}
		return "integer"
	case bool:
		return "boolean"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	}
	return "null"
}

// checkDocumented requires every member of obj to be a documented,
// non-alias name of fields (a name only the fake serves never sent), of
// its documented type, recursively; at is the path for messages.
func checkDocumented(t *testing.T, at string, obj map[string]any, fields []refField) {
	t.Helper()
	for k, v := range obj {
		f, ok := field(fields, k)
		if !assert.True(t, ok, "%s%s is sent but not documented", at, k) {
			continue
		}
		assert.Empty(t, f.Alias, "%s%s: an alias is read, never sent", at, k)
		assert.False(t, f.FakeOnly, "%s%s: a fake extension is never sent", at, k)
		got := jsonType(v)
		if f.Type == "number" && got == "integer" {
			got = "number" // a whole number in a zero-decimal currency
		}
		assert.Equal(t, f.Type, got, "%s%s has the documented JSON type", at, k)
		if len(f.Enum) > 0 {
			assert.Contains(t, f.Enum, v, "%s%s is one of the documented values", at, k)
		}
		switch x := v.(type) {
		case map[string]any:
			checkDocumented(t, at+k+".", x, f.Fields)
		case []any:
			for _, e := range x {
				if m, ok := e.(map[string]any); ok {
					checkDocumented(t, at+k+"[].", m, f.Fields)
				}
			}
		}
	}
}

// checkRequired requires every required name of fields in obj,
// recursively into the objects obj holds.
func checkRequired(t *testing.T, at string, obj map[string]any, fields []refField) {
	t.Helper()
	for _, f := range fields {
		v, ok := obj[f.Name]
		if f.Required {
			assert.True(t, ok, "required %s%s is sent", at, f.Name)
		}
		switch x := v.(type) {
		case map[string]any:
			checkRequired(t, at+f.Name+".", x, f.Fields)
		case []any:
			for _, e := range x {
				if m, ok := e.(map[string]any); ok {
					checkRequired(t, at+f.Name+"[].", m, f.Fields)
				}
			}
		}
	}
}

// decodeWire decodes a wire body with its numbers as json.Number.
func decodeWire(t *testing.T, b []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	require.NoError(t, dec.Decode(&m), "%s", b)
	return m
}

// fullCharges are requests of every payment method with every optional
// field the method takes set, each valid for a client of the Sandbox
// environment.
func fullCharges() map[string]*ChargeCreateRequest {
	item := func() []Item {
		a, _ := payonce.ParseAmount("50.00")
		return []Item{{Name: "Running Shoes", Description: "size 42", Quantity: 2, TotalAmount: a.Add(a), UnitAmount: a, SKU: "SHOE-001", Code: "RS001"}}
	}
	device := &DeviceInfo{IPAddress: "192.168.0.1", UserAgent: "Mozilla/5.0", HTTPAcceptContent: "text/html", HTTPAcceptBrowserValue: "*/*",
		HTTPBrowserLanguage: "pt-BR", HTTPBrowserJavaEnabled: Bool(false), HTTPBrowserJavaScriptEnabled: Bool(true),
		HTTPBrowserColorDepth: "24", HTTPBrowserScreenHeight: "1080", HTTPBrowserScreenWidth: "1920",
		HTTPBrowserTimeDifference: "180", SessionID: "sess-1"}
	out := map[string]*ChargeCreateRequest{}
	credit := refCharge()
	credit.Items, credit.Capture = item(), Bool(false)
	credit.WebhookURL, credit.RedirectURL = "https://shop.example/webhook", "https://shop.example/return"
	credit.InstallmentCount = 3
	credit.Subscription = &Subscription{Cycle: CycleMonthly, EndDate: "2027-12-31"}
	credit.ThreeDSAuthentication, credit.DeviceInfo = true, device
	out["credit_card"] = credit
	debit := refCharge()
	debit.TypeCharge, debit.ThreeDSAuthentication, debit.DeviceInfo, debit.Items = TypeDebitCard, true, device, item()
	debit.WebhookURL, debit.RedirectURL, debit.Capture = "https://shop.example/webhook", "https://shop.example/return", Bool(true)
	debit.Subscription = &Subscription{Cycle: CycleYearly}
	out["debit_card"] = debit
	for _, typ := range []TypeCharge{TypePix, TypeBoleto} {
		r := refCharge()
		r.TypeCharge, r.Card, r.Items = typ, nil, item()
		r.WebhookURL, r.RedirectURL = "https://shop.example/webhook", "https://shop.example/return"
		out[string(typ)] = r
	}
	apple := refCharge()
	apple.TypeCharge, apple.InstallmentCount, apple.Items = TypeApplePay, 2, item()
	apple.ApplePay = &TokenData{ECI: "05", CAVV: "AAABBBCCCDDD", Type: TypeCreditCard}
	out["applepay"] = apple
	google := refCharge()
	google.TypeCharge, google.Items = TypeGooglePay, item()
	google.GooglePay = &TokenData{ECI: "07", CAVV: "AAABBBCCCEEE", Type: TypeDebitCard}
	out["googlepay"] = google
	clp := refCharge()
	clp.Currency, clp.InstallmentValue, clp.Items = payonce.CLP, mustAmount("15000"), nil
	out["credit_card in CLP"] = clp
	return out
}

func mustAmount(s string) payonce.Amount {
	a, err := payonce.ParseAmount(s)
	if err != nil {
		panic(err)
	}
	return a
}

// Every key the client sends to create a charge is a documented request
// name of create-charge, of its documented type, never an alias nor a
// fake extension; every required name is there. Each request is the
// client's own: valid, as Charges.Create would send it.
func TestChargeWireNamesAreTheReference(t *testing.T) {
	ref := loadReference(t)
	create := ref.endpoint(t, "create_charge")
	u := setup(t)
	for name, req := range fullCharges() {
		require.NoError(t, req.validate(u.client, req.WalletUUID, req.MerchantID), name)
		b, err := req.MarshalWire()
		require.NoError(t, err)
		m := decodeWire(t, b)
		checkDocumented(t, name+": ", m, create.Request)
		checkRequired(t, name+": ", m, create.Request)
		minimal := refCharge()
		minimal.TypeCharge, minimal.Card = req.TypeCharge, nil
		b, err = minimal.MarshalWire()
		require.NoError(t, err)
		checkRequired(t, name+" minimal: ", decodeWire(t, b), create.Request)
	}
	// The card fields marked as card data in the reference are the ones
	// the masked form hides.
	b, err := json.Marshal(fullCharges()["credit_card"])
	require.NoError(t, err)
	masked := decodeWire(t, b)
	assert.Equal(t, "************1111", masked["card_number"])
	assert.NotContains(t, masked, "card_cvv")
}

// The wire form writes amounts as JSON numbers in the currency's decimals,
// from their digits: 100.50 BRL, 15000 CLP; items in the same form.
func TestChargeWireWritesNumbersInTheCurrencysDecimals(t *testing.T) {
	for _, tc := range []struct {
		currency payonce.Currency
		value    string
		want     string
	}{
		{payonce.BRL, "100.5", `"installment_value":100.50,`},
		{payonce.BRL, "100", `"installment_value":100.00,`},
		{payonce.USD, "0.01", `"installment_value":0.01,`},
		{payonce.MXN, "123456789012345.99", `"installment_value":123456789012345.99,`},
		{payonce.CLP, "15000", `"installment_value":15000,`},
		{payonce.COP, "7", `"installment_value":7,`},
	} {
		r := refCharge()
		r.Currency, r.InstallmentValue = tc.currency, mustAmount(tc.value)
		r.Items = []Item{{Name: "x", Quantity: 1, UnitAmount: r.InstallmentValue}}
		b, err := r.MarshalWire()
		require.NoError(t, err)
		assert.Contains(t, string(b), tc.want, tc.currency)
		assert.Contains(t, string(b), `"unit_amount":`+strings.TrimSuffix(strings.TrimPrefix(tc.want, `"installment_value":`), ","), tc.currency)
	}
}

func TestChargeCreateRequestWireFormIsWhole(t *testing.T) {
	b, err := corekit.MarshalWire(refCharge())
	require.NoError(t, err)
	assert.Equal(t, refWire, string(b))
	assert.True(t, json.Valid(b))

	var nilReq *ChargeCreateRequest
	b, err = corekit.MarshalWire(nilReq)
	require.NoError(t, err)
	assert.Equal(t, "null", string(b))
}

func assertNoCard(t *testing.T, out string) {
	t.Helper()
	assert.NotContains(t, out, "4111111111111111")
	assert.NotContains(t, out, "411111")
	assert.NotContains(t, out, `"card_cvv":"123"`)
	assert.NotContains(t, out, "123\"")
}

func TestChargeCreateRequestJSONMasksTheCard(t *testing.T) {
	r := fullCharges()["applepay"]
	r.WebhookURL = "https://shop.example/hook?secret=s3cr3t-value"
	b, err := json.Marshal(r)
	require.NoError(t, err)
	assertNoCard(t, string(b))
	assert.Contains(t, string(b), `"card_number":"************1111"`)
	assert.NotContains(t, string(b), "card_cvv")
	assert.NotContains(t, string(b), "AAABBBCCCDDD", "the wallet token's cryptogram")
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
	assert.NotContains(t, string(b), "AAABBBCCCDDD")

	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("job", "job", struct{ Req *ChargeCreateRequest }{r}, "card", r.Card,
		"cards", []payonce.Card{*r.Card}, "token", r.ApplePay)
	assertNoCard(t, logged.String())
	assert.NotContains(t, logged.String(), "AAABBBCCCDDD")
	assert.Contains(t, logged.String(), "1111")
}

// The masked JSON form reads back, with its masked card: a card is never
// charged from a job payload (Charges.Create refuses the masked number).
func TestChargeCreateRequestJSONRoundTrips(t *testing.T) {
	for name, r := range fullCharges() {
		b, err := json.Marshal(r)
		require.NoError(t, err)
		var back ChargeCreateRequest
		require.NoError(t, json.Unmarshal(b, &back), name)
		want := *r
		if r.Card != nil {
			c := *r.Card
			c.Number, c.CVV = "************1111", ""
			want.Card = &c
		}
		for _, tok := range []**TokenData{&want.ApplePay, &want.GooglePay} {
			if *tok != nil {
				d := **tok
				d.CAVV = "[REDACTED]"
				*tok = &d
			}
		}
		assert.Equal(t, want, back, name)
		// The wire form reads back whole.
		b, err = r.MarshalWire()
		require.NoError(t, err)
		var whole ChargeCreateRequest
		require.NoError(t, json.Unmarshal(b, &whole))
		assert.Equal(t, *r, whole, name)
	}
	u := setup(t)
	b, err := json.Marshal(refCharge())
	require.NoError(t, err)
	var fromLog ChargeCreateRequest
	require.NoError(t, json.Unmarshal(b, &fromLog))
	_, err = u.client.Charges.Create(context.Background(), &fromLog)
	require.ErrorIs(t, err, payonce.ErrInvalidCard)
	assert.Contains(t, err.Error(), "card_number")
}

func TestCreateSendsTheWireBytes(t *testing.T) {
	u := setup(t)
	var got []byte
	u.mux.HandleFunc("POST "+PathCharges, func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		writeJSON(w, 200, `{"charge_uuid":"ch_1","status":"confirmed","installment_value":100,"currency":"BRL",`+
			`"card_number":"4111111111111111"}`)
	})
	ch, err := u.client.Charges.Create(context.Background(), refCharge(), payonce.WithKey(keytest.Key(t, "550e8400-e29b-41d4-a716-446655440000", guideTime)))
	require.NoError(t, err)
	assert.Equal(t, refWire, string(got))
	b, err := json.Marshal(ch)
	require.NoError(t, err)
	assertNoCard(t, string(b))
	assertNoCard(t, string(ch.Raw()))
}

// The wire form writes every text as encoding/json writes it, byte for
// byte: HTML characters, line separators, control characters, invalid
// UTF-8.
func TestAppendStringIsEncodingJSON(t *testing.T) {
	for _, s := range appendStringCases {
		want, err := json.Marshal(s)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(appendString(nil, s)), "%q", s)
	}
}

var appendStringCases = []string{"", "ANA SILVA", "<a&b>", "jo\u2028\u00e3o\u2029", "x\xffy", `"q"\`, "\x00\x01\b\f\n\r\t\x1f\x7f",
	"São Paulo — 😀", "\xed\xa0\x80", "a\u00e9b", strings.Repeat("ab\"", 50)}

func FuzzAppendString(f *testing.F) {
	for _, s := range appendStringCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		require.NoError(t, err)
		require.Equal(t, string(want), string(appendString(nil, s)))
	})
}

// The bodies of capture, refund and cancel hold only documented names of
// their endpoints; the identifiers of refund and cancel are in the path
// only, in the documented template.
func TestMoveWireNamesAreTheReference(t *testing.T) {
	ref := loadReference(t)
	u := setup(t)
	account := u.client.WithAccount(Account{MerchantID: "m-1", WalletUUID: "wal_a1b2"})
	bodies := map[string][]byte{}
	paths := map[string]string{}
	u.mux.HandleFunc("POST /api/v1/bank/wallet/charge/", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		key := r.URL.Path
		bodies[key] = b
		paths[key] = r.URL.EscapedPath()
		writeJSON(w, 200, `{"charge_uuid":"ch_1","status":"paid"}`)
	})
	amt := mustAmount("10.5")
	_, err := account.Charges.Capture(context.Background(), &CaptureRequest{ChargeUUID: "ch_1", Amount: amt, Currency: payonce.BRL})
	require.NoError(t, err)
	_, err = account.Charges.Refund(context.Background(), &RefundRequest{ChargeUUID: "ch_1", Amount: amt, Reason: "returned"})
	require.NoError(t, err)
	_, err = account.Charges.Cancel(context.Background(), &CancelRequest{ChargeUUID: "ch_1", Reason: "customer asked"})
	require.NoError(t, err)
	for _, tc := range []struct{ endpoint, path, body string }{
		{"capture_charge", "/api/v1/bank/wallet/charge/capture/", `{"charge_uuid":"ch_1","wallet_uuid":"wal_a1b2","amount":10.50}`},
		{"refund_charge", "/api/v1/bank/wallet/charge/ch_1/refund/wal_a1b2/", `{"amount":10.5,"reason":"returned"}`},
		{"cancel_charge", "/api/v1/bank/wallet/charge/ch_1/cancel/wal_a1b2/", `{"reason":"customer asked"}`},
	} {
		e := ref.endpoint(t, tc.endpoint)
		require.Contains(t, bodies, tc.path, tc.endpoint)
		assert.Equal(t, tc.body, string(bodies[tc.path]), tc.endpoint)
		m := decodeWire(t, bodies[tc.path])
		checkDocumented(t, tc.endpoint+": ", m, e.Request)
		checkRequired(t, tc.endpoint+": ", m, e.Request)
		want := e.Path
		for _, p := range e.PathParams {
			want = strings.Replace(want, "{"+p+"}", map[string]string{"charge_uuid": "ch_1", "wallet_uuid": "wal_a1b2"}[p], 1)
		}
		assert.Equal(t, want, paths[tc.path], tc.endpoint)
	}
	// {} refunds or cancels all that remains.
	_, err = account.Charges.Refund(context.Background(), &RefundRequest{ChargeUUID: "ch_2"})
	require.NoError(t, err)
	assert.Equal(t, `{}`, string(bodies["/api/v1/bank/wallet/charge/ch_2/refund/wal_a1b2/"]))
}

// Get and List send only documented query names (the fake's extensions
// aside, which only a search for them sends), every required one there.
func TestQueryNamesAreTheReference(t *testing.T) {
	ref := loadReference(t)
	u := setup(t)
	c := u.client.WithAccount(Account{MerchantID: "m-1", WalletUUID: "wal_a1b2"})
	queries := map[string][]string{}
	u.mux.HandleFunc("GET "+PathCharges, func(w http.ResponseWriter, r *http.Request) {
		queries["get_charge"] = slices.Sorted(maps.Keys(r.URL.Query()))
		writeJSON(w, 200, `{"charge_uuid":"ch_1","status":"paid"}`)
	})
	u.mux.HandleFunc("GET "+PathChargeList, func(w http.ResponseWriter, r *http.Request) {
		queries["list_charges"] = slices.Sorted(maps.Keys(r.URL.Query()))
		writeJSON(w, 200, `{"charges":[],"page":1,"limit":20,"total":0}`)
	})
	_, err := c.Charges.Get(context.Background(), "ch_1", "")
	require.NoError(t, err)
	_, err = c.Charges.List(context.Background(), &ChargeListOptions{MerchantUUID: "m-1", Page: 2, Limit: 50, Sort: SortCreatedAsc,
		Status: StatusConfirmed, Type: TypeCreditCard, CardBrand: "Visa", AmountGTE: mustAmount("10"), AmountLTE: mustAmount("20.5"),
		DateStart: guideTime, DateEnd: guideTime.Add(24 * 3600e9)})
	require.NoError(t, err)
	for name, got := range queries {
		e := ref.endpoint(t, name)
		for _, q := range got {
			f, ok := field(e.Query, q)
			assert.True(t, ok && !f.FakeOnly, "%s: query %s is documented", name, q)
		}
		for _, f := range e.Query {
			if f.Required {
				assert.Contains(t, got, f.Name, "%s: required %s", name, f.Name)
			}
		}
	}
}
