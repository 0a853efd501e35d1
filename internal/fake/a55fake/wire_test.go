package a55fake_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce/internal/fake/a55fake"
)

// The fake is held to the one list of A55's documented names,
// testdata/a55/reference.json, which the client's tests read too.

type refField struct {
	Name     string     `json:"name"`
	Type     string     `json:"type"`
	Required bool       `json:"required"`
	Enum     []string   `json:"enum"`
	Alias    string     `json:"alias"`
	FakeOnly bool       `json:"fake_only"`
	Fields   []refField `json:"fields"`
}

type refEndpoint struct {
	Name       string     `json:"name"`
	Method     string     `json:"method"`
	Path       string     `json:"path"`
	Request    []refField `json:"request"`
	Response   []refField `json:"response"`
	ResponseAs string     `json:"response_as"`
	Query      []refField `json:"query"`
	OneOf      []string   `json:"one_of"`
	Never      []string   `json:"response_never"`
}

type reference struct {
	Endpoints []refEndpoint `json:"endpoints"`
	GuideForm struct {
		Path    string     `json:"path"`
		Request []refField `json:"request"`
	} `json:"guide_form"`
	Statuses []struct {
		Name string `json:"name"`
	} `json:"statuses"`
	Codes []struct {
		Code string `json:"code"`
	} `json:"codes"`
	Webhook struct {
		Headers []string   `json:"headers"`
		Fields  []refField `json:"fields"`
	} `json:"webhook"`
}

func loadReference(t *testing.T) *reference {
	t.Helper()
	b, err := os.ReadFile("../../../testdata/a55/reference.json")
	require.NoError(t, err)
	var ref reference
	require.NoError(t, json.Unmarshal(b, &ref))
	return &ref
}

func (r *reference) endpoint(t *testing.T, name string) refEndpoint {
	t.Helper()
	for _, e := range r.Endpoints {
		if e.Name == name {
			return e
		}
	}
	t.Fatalf("reference.json has no endpoint %s", name)
	return refEndpoint{}
}

// flatNames lists fields as "parent.child".
func flatNames(fs []refField, prefix string) []string {
	var out []string
	for _, f := range fs {
		out = append(out, prefix+f.Name)
		out = append(out, flatNames(f.Fields, prefix+f.Name+".")...)
	}
	return out
}

// The names, nesting included, the fake takes in each body are the
// reference's, no more and no fewer.
func TestRequestNamesAreTheReferences(t *testing.T) {
	ref := loadReference(t)
	got := a55fake.RequestFields()
	for name, fields := range got {
		var want []string
		if name == "guide_form" {
			want = flatNames(ref.GuideForm.Request, "")
		} else {
			want = flatNames(ref.endpoint(t, name).Request, "")
		}
		if name == "guide_form" {
			// The guide's body as earlier payonce versions sent it
			// carries these create-charge members beside it.
			want = append(want, "wallet_uuid", "description", "due_date", "installment_count", "capture", "webhook_url")
		}
		assert.ElementsMatch(t, want, fields, name)
	}
	for _, e := range ref.Endpoints {
		if len(e.Request) > 0 && e.Name != "token" {
			assert.Contains(t, got, e.Name, "the fake has no body list for %s", e.Name)
		}
	}
}

// sample is a valid value for each documented request member, by path;
// a name reference.json gains without a sample here fails the test.
func (h *harness) sample(path string) (any, bool) {
	v, ok := map[string]any{
		"wallet_uuid": h.acct.WalletUUID, "merchant_id": h.acct.MerchantUUID, "payer_name": "João Silva",
		"payer_email": "joao@example.com", "payer_tax_id": "39999999999", "payer_cell_phone": "+5511988887777",
		"installment_value": json.Number("150.00"), "installment_count": 1, "currency": "BRL", "due_date": "2030-12-31",
		"description": "order 42", "amount": json.Number("150.00"), "type_charge": "credit_card",
		"payer_address.street": "Av. Paulista", "payer_address.address_number": "1000", "payer_address.complement": "Apto 42",
		"payer_address.neighborhood": "Bela Vista", "payer_address.city": "São Paulo", "payer_address.state": "SP",
		"payer_address.postal_code": "01310-100", "payer_address.country": "BR",
		"items.name": "Running Shoes", "items.description": "size 42", "items.quantity": 1, "items.total_amount": json.Number("150.00"),
		"items.unit_amount": json.Number("150.00"), "items.sku": "SHOE-001", "items.code": "RS001",
		"capture": true, "webhook_url": "https://shop.example/hooks/a55", "redirect_url": "https://shop.example/return",
		"subscription.cycle": "monthly", "subscription.end_date": "2031-12-31",
		"card_number": "4024007153763191", "card_name": "MARIA SILVA", "card_expiry_month": "12", "card_expiry_year": "2031", "card_cvv": "123",
		"threeds_authentication": true,
		"device_info.ip_address": "192.0.2.10", "device_info.user_agent": "Mozilla/5.0", "device_info.http_accept_content": "text/html",
		"device_info.http_accept_browser_value": "*/*", "device_info.http_browser_language": "pt-BR",
		"device_info.http_browser_java_enabled": false, "device_info.http_browser_javascript_enabled": true,
		"device_info.http_browser_color_depth": "24", "device_info.http_browser_screen_height": "1080",
		"device_info.http_browser_screen_width": "1920", "device_info.http_browser_time_difference": "180",
		"device_info.session_id": "sess-123",
		"applepay.eci":           "05", "applepay.cavv": "AAABBBCCCDDDEEEFFF00", "applepay.type": "credit_card",
		"googlepay.eci": "05", "googlepay.cavv": "AAABBBCCCDDDEEEFFF00", "googlepay.type": "debit_card",
		"entity_uuid": h.acct.EntityUUID, "customer_id": "cust_12345", "name": "Loja São Paulo", "email": "financeiro@loja.example",
		"create_credentials": true, "merchant_uuid": h.acct.MerchantUUID,
	}[path]
	return v, ok
}

// build makes the body of fs from the samples, leaving out the
// top-level names in skip.
func (h *harness) build(t *testing.T, fs []refField, prefix string, skip []string) map[string]any {
	t.Helper()
	out := map[string]any{}
	for _, f := range fs {
		if prefix == "" && slices.Contains(skip, f.Name) {
			continue
		}
		path := prefix + f.Name
		switch f.Type {
		case "object":
			out[f.Name] = h.build(t, f.Fields, path+".", nil)
		case "array":
			out[f.Name] = []any{h.build(t, f.Fields, path+".", nil)}
		default:
			v, ok := h.sample(path)
			require.True(t, ok, "no sample value for %s: add one", path)
			out[f.Name] = v
		}
	}
	return out
}

var cardNames = []string{"card_number", "card_name", "card_expiry_month", "card_expiry_year", "card_cvv"}

// fullBodies are the reference bodies with every member that a method
// takes, by method (and the other bodies the reference documents).
func (h *harness) fullBodies(t *testing.T, ref *reference) map[string]map[string]any {
	cc := ref.endpoint(t, "create_charge").Request
	noCard := append([]string{"threeds_authentication", "device_info", "applepay", "googlepay", "subscription"}, cardNames...)
	bodies := map[string]map[string]any{}
	for typ, skip := range map[string][]string{
		"credit_card": {"applepay", "googlepay"},
		"debit_card":  {"applepay", "googlepay"},
		"pix":         noCard,
		"boleto":      noCard,
		"applepay":    {"googlepay", "subscription", "threeds_authentication"},
		"googlepay":   {"applepay", "subscription", "threeds_authentication"},
	} {
		b := h.build(t, cc, "", skip)
		b["type_charge"] = typ
		bodies["create_charge/"+typ] = b
	}
	bodies["create_pix_charge"] = h.build(t, ref.endpoint(t, "create_pix_charge").Request, "", nil)
	bodies["create_wallet"] = h.build(t, ref.endpoint(t, "create_wallet").Request, "", nil)
	return bodies
}

func pathOf(body string) string {
	switch {
	case strings.HasPrefix(body, "create_charge"):
		return chargePath
	case body == "create_pix_charge":
		return pixPath
	}
	return walletPath
}

// responseNames are the documented names of an answer, nested ones as
// "parent.child"; aliases and the fake's own extension included.
func responseNames(fs []refField) map[string]bool {
	out := map[string]bool{}
	for _, n := range flatNames(fs, "") {
		out[n] = true
	}
	return out
}

// keysOf lists an answer's keys as "parent.child" (array elements' keys
// under the array's name).
func keysOf(v any, prefix string) []string {
	var out []string
	switch x := v.(type) {
	case map[string]any:
		for k, sub := range x {
			out = append(out, prefix+k)
			out = append(out, keysOf(sub, prefix+k+".")...)
		}
	case []any:
		for _, e := range x {
			out = append(out, keysOf(e, prefix)...)
		}
	}
	return out
}

// Every method's full reference body is accepted, and every key of the
// answer is a documented response name (or the fake_only extension).
func TestFullReferenceBodiesAreAccepted(t *testing.T) {
	ref := loadReference(t)
	h := newHarness(t, a55fake.Config{})
	chargeNames := responseNames(ref.endpoint(t, "create_charge").Response)
	walletNames := responseNames(ref.endpoint(t, "create_wallet").Response)
	used := map[string]bool{}
	for name, body := range h.fullBodies(t, ref) {
		r := h.do(t, http.MethodPost, pathOf(name), keyN(name, 0), body)
		require.Equal(t, http.StatusOK, r.status, "%s: %s", name, r.body)
		names := chargeNames
		if name == "create_wallet" {
			names = walletNames
		}
		for _, k := range keysOf(r.obj(t), "") {
			assert.True(t, names[k], "%s answers %s, not a documented name", name, k)
		}
		for k := range body {
			used[k] = true
		}
	}
	for _, f := range ref.endpoint(t, "create_charge").Request {
		assert.True(t, used[f.Name], "no full body holds %s", f.Name)
	}
}

// requiredPaths lists the required members of body as the fake names
// them: "payer_address.street", "items[0].name".
func requiredPaths(fs []refField, body map[string]any, prefix string) []string {
	var out []string
	for _, f := range fs {
		v, present := body[f.Name]
		if f.Required {
			out = append(out, prefix+f.Name)
		}
		if !present {
			continue
		}
		switch x := v.(type) {
		case map[string]any:
			out = append(out, requiredPaths(f.Fields, x, prefix+f.Name+".")...)
		case []any:
			for i, e := range x {
				out = append(out, requiredPaths(f.Fields, e.(map[string]any), prefix+f.Name+"["+strconv.Itoa(i)+"].")...)
			}
		}
	}
	return out
}

// without returns a deep copy of body with the member at path removed
// (path as requiredPaths names it), or replaced by v when replace.
func without(body map[string]any, path string, replace bool, v any) map[string]any {
	b, _ := json.Marshal(body)
	var cp map[string]any
	d := json.NewDecoder(strings.NewReader(string(b)))
	d.UseNumber()
	_ = d.Decode(&cp)
	obj := cp
	parts := strings.Split(path, ".")
	for _, p := range parts[:len(parts)-1] {
		name, idx, isElem := strings.Cut(p, "[")
		next := obj[name]
		if isElem {
			i, _ := strconv.Atoi(strings.TrimSuffix(idx, "]"))
			next = next.([]any)[i]
		}
		obj = next.(map[string]any)
	}
	last := parts[len(parts)-1]
	if name, idx, isElem := strings.Cut(last, "["); isElem {
		i, _ := strconv.Atoi(strings.TrimSuffix(idx, "]"))
		obj[name].([]any)[i] = v
		return cp
	}
	if replace {
		obj[last] = v
	} else {
		delete(obj, last)
	}
	return cp
}

func refFieldsOf(t *testing.T, ref *reference, name string) []refField {
	if strings.HasPrefix(name, "create_charge") {
		return ref.endpoint(t, "create_charge").Request
	}
	return ref.endpoint(t, name).Request
}

// For each required member removed from each full body, the fake answers
// 422 in the general shape with a detail naming that member; nothing is
// created.
func TestRequiredFieldRemovedIs422(t *testing.T) {
	ref := loadReference(t)
	h := newHarness(t, a55fake.Config{})
	n := 0
	for name, body := range h.fullBodies(t, ref) {
		for _, path := range requiredPaths(refFieldsOf(t, ref, name), body, "") {
			n++
			r := h.do(t, http.MethodPost, pathOf(name), "", without(body, path, false, nil))
			if assert.Equal(t, http.StatusUnprocessableEntity, r.status, "%s without %s: %s", name, path, r.body) {
				assert.Contains(t, r.details(t), path, "%s without %s", name, path)
			}
		}
	}
	assert.Greater(t, n, 60)
	assert.Len(t, h.e.Ledger().Operations(), 0, "nothing created")
}

// wrongValue is a value of another JSON type than typ.
func wrongValue(typ string) any {
	switch typ {
	case "string":
		return 12345
	case "number":
		return "150.00" // the guide's string amount where the reference wants a number
	case "integer":
		return "1"
	case "boolean":
		return "true"
	case "object":
		return "x"
	}
	return map[string]any{"not": "an array"}
}

// typedPaths lists every member of body with its documented type.
func typedPaths(fs []refField, body map[string]any, prefix string) map[string]string {
	out := map[string]string{}
	for _, f := range fs {
		v, present := body[f.Name]
		if !present {
			continue
		}
		out[prefix+f.Name] = f.Type
		switch x := v.(type) {
		case map[string]any:
			for k, t := range typedPaths(f.Fields, x, prefix+f.Name+".") {
				out[k] = t
			}
		case []any:
			for i, e := range x {
				out[prefix+f.Name+"["+strconv.Itoa(i)+"]"] = "object"
				for k, t := range typedPaths(f.Fields, e.(map[string]any), prefix+f.Name+"["+strconv.Itoa(i)+"].") {
					out[k] = t
				}
			}
		}
	}
	return out
}

// A member of the wrong JSON type answers 400 naming it.
func TestWrongTypeIs400(t *testing.T) {
	ref := loadReference(t)
	h := newHarness(t, a55fake.Config{})
	n := 0
	for name, body := range h.fullBodies(t, ref) {
		for path, typ := range typedPaths(refFieldsOf(t, ref, name), body, "") {
			n++
			r := h.do(t, http.MethodPost, pathOf(name), "", without(body, path, true, wrongValue(typ)))
			if assert.Equal(t, http.StatusBadRequest, r.status, "%s with %s of the wrong type: %s", name, path, r.body) {
				assert.Equal(t, "INVALID_REQUEST", r.code(t))
				assert.Contains(t, r.details(t), path)
			}
		}
	}
	assert.Greater(t, n, 150)
	assert.Len(t, h.e.Ledger().Operations(), 0, "nothing created")
}

// A member the reference does not list is refused, naming it: the
// guide's amount in a reference body, a misspelt card field.
func TestUnknownMembersAreRefused(t *testing.T) {
	h := newHarness(t, a55fake.Config{})
	for field, v := range map[string]any{"amount": json.Number("150.00"), "card_expiry_mon": "12", "metadata": map[string]any{}} {
		r := h.do(t, http.MethodPost, chargePath, "", h.body("pix", map[string]any{field: v}))
		assert.Equal(t, http.StatusUnprocessableEntity, r.status, "%s: %s", field, r.body)
		assert.Contains(t, r.details(t), field)
	}
	r := h.do(t, http.MethodPost, chargePath, "", h.body("pix", map[string]any{
		"payer_address": with(payerAddress(), map[string]any{"zip": "1"})}))
	assert.Equal(t, http.StatusUnprocessableEntity, r.status)
	assert.Contains(t, r.details(t), "payer_address.zip")
}

// The statuses and codes the fake answers with are the reference's.
func TestStatusesAndCodesAreDocumented(t *testing.T) {
	ref := loadReference(t)
	var statuses, codes []string
	for _, s := range ref.Statuses {
		statuses = append(statuses, s.Name)
	}
	for _, c := range ref.Codes {
		codes = append(codes, c.Code)
	}
	for _, s := range []string{a55fake.StatusIssued, a55fake.StatusPending, a55fake.StatusConfirmed, a55fake.StatusPaid,
		a55fake.StatusCanceled, a55fake.StatusError, a55fake.StatusDeclined, a55fake.StatusExpired, a55fake.StatusRefunded,
		a55fake.StatusChargebackRequested, a55fake.StatusPreChargebackResolution, a55fake.StatusChargebackReversed,
		a55fake.StatusChargebackRefunded, a55fake.StatusPreCaptured, a55fake.StatusRefundError, a55fake.StatusChargeback} {
		assert.Contains(t, statuses, s)
	}
	assert.Len(t, statuses, 16, "every documented status is one the fake can give")
	for _, c := range []string{"CARD_DECLINED", "PROCESSING_ERROR", "3DS_FAILED", "AMOUNT_INVALID", "CURRENCY_NOT_SUPPORTED",
		"INVALID_CARD", "EXPIRED_CARD", "INVALID_CVC", "CANCEL_NOT_ALLOWED", "RATE_LIMIT_EXCEEDED",
		a55fake.AnswerTimeout, a55fake.AnswerDuplicateRequest, a55fake.Answer3DSRequired, a55fake.Answer3DSUnavailable,
		a55fake.AnswerProcessingError} {
		assert.Contains(t, codes, c)
	}
}

// The query parameters the fake takes are the reference's (the list's
// fake_only ones included), and another one is refused naming it.
func TestQueryNamesAreTheReferences(t *testing.T) {
	ref := loadReference(t)
	for name, params := range a55fake.QueryParams() {
		var want []string
		for _, q := range ref.endpoint(t, name).Query {
			want = append(want, q.Name)
		}
		assert.ElementsMatch(t, want, params, name)
	}
	for _, e := range ref.Endpoints {
		if len(e.Query) > 0 {
			assert.Contains(t, a55fake.QueryParams(), e.Name, "the fake lists the parameters of %s", e.Name)
		}
	}
	h := newHarness(t, a55fake.Config{})
	r := h.do(t, http.MethodGet, listPath+"?wallet_uuid="+h.acct.WalletUUID+"&status=confirmed", "", nil)
	assert.Equal(t, http.StatusUnprocessableEntity, r.status, "status is a filter= value, not a parameter")
	assert.Equal(t, []string{"status"}, r.details(t))
	r = h.do(t, http.MethodGet, chargePath+"?charge_uuid=x&wallet_uuid="+h.acct.WalletUUID+"&merchant_id=m", "", nil)
	assert.Equal(t, http.StatusUnprocessableEntity, r.status)
	assert.Equal(t, []string{"merchant_id"}, r.details(t))
}

// get-wallet takes any one of its one_of names alone and refuses a query
// without them, naming each; it answers create-wallet's documented names
// but those it never answers (credentials).
func TestGetWalletNamesAreTheReferences(t *testing.T) {
	ref := loadReference(t)
	e := ref.endpoint(t, "get_wallet")
	require.Equal(t, walletPath, e.Path)
	require.NotEmpty(t, e.OneOf)
	h := newHarness(t, a55fake.Config{})
	body := h.build(t, ref.endpoint(t, "create_wallet").Request, "", nil)
	r := h.do(t, http.MethodPost, walletPath, "", body)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	created := r.obj(t)
	names := responseNames(ref.endpoint(t, "create_wallet").Response)
	for _, n := range e.Never {
		require.True(t, names[n], "response_never names an answer name: %s", n)
		delete(names, n)
	}
	for _, name := range e.OneOf {
		v, ok := created[name].(string)
		if !ok { // email and customer_id are the request's
			v = body[name].(string)
		}
		r := h.do(t, http.MethodGet, walletPath+"?"+name+"="+v, "", nil)
		require.Equal(t, http.StatusOK, r.status, "%s alone: %s", name, r.body)
		for _, k := range keysOf(r.obj(t), "") {
			assert.True(t, names[k], "get_wallet answers %s, not a documented name it may answer", k)
		}
	}
	r = h.do(t, http.MethodGet, walletPath+"?currency=BRL", "", nil)
	require.Equal(t, http.StatusUnprocessableEntity, r.status, "%s", r.body)
	assert.ElementsMatch(t, e.OneOf, r.details(t))
}

// The token endpoint answers the authentication page's names and no
// other, whatever the form asks for (a scope is taken, not echoed).
func TestTokenAnswerNamesAreTheReferences(t *testing.T) {
	ref := loadReference(t)
	names := responseNames(ref.endpoint(t, "token").Response)
	h := newHarness(t, a55fake.Config{})
	for _, form := range []url.Values{
		{"grant_type": {"client_credentials"}, "client_id": {"demo-client"}, "client_secret": {"demo-secret"}},
		{"grant_type": {"client_credentials"}, "client_id": {"demo-client"}, "client_secret": {"demo-secret"}, "scope": {"api/readwrite"}},
	} {
		resp, err := http.PostForm(h.srv.URL+a55fake.TokenPath, form)
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&m))
		_ = resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		for k := range m {
			assert.True(t, names[k], "the token answer's %s is not a documented name", k)
		}
		assert.Len(t, m, len(names))
	}
}
