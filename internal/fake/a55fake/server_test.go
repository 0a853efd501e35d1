package a55fake_test

import (
	"bytes"
	"encoding/json"
	"go/parser"
	"go/token"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce/internal/fake/a55fake"
	"github.com/payonce/payonce/internal/fake/fakeserver"
)

// The fake verifies the SDK, so it shares none of its code: no file of
// the package, its tests included, imports a payonce package other than
// the fake engine (internal/fake/fakeserver) and, in the external tests, the
// package itself.
func TestFakeImportsNothingOfTheSDK(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, name := range files {
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		require.NoError(t, err)
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(p, "github.com/payonce/payonce") {
				assert.Contains(t, []string{"github.com/payonce/payonce/internal/fake/fakeserver", "github.com/payonce/payonce/internal/fake/a55fake"},
					p, "%s imports %s", name, p)
			}
		}
	}
}

// start is the time the harness's fixed clock starts at.
var start = time.Date(2030, 3, 14, 12, 0, 0, 0, time.UTC)

// harness is the fake on a fixed clock behind a loopback server, with its
// admin API, and the account of demo-client.
type harness struct {
	e    *fakeserver.Engine
	f    *a55fake.Fake
	srv  *httptest.Server
	acct a55fake.Account
}

func newHarness(t *testing.T, cfg a55fake.Config) *harness {
	t.Helper()
	e := fakeserver.New(fakeserver.Options{Clock: fakeserver.NewFixedClock(start)})
	if cfg.RateLimit == 0 {
		cfg.RateLimit = -1
	}
	f := a55fake.New(e, cfg)
	srv := httptest.NewServer(fakeserver.WithAdmin(e.AdminHandler(fakeserver.AdminConfig{Provider: f.AdminHandler}), f.Handler()))
	t.Cleanup(func() { e.Close(); srv.Close() })
	acct, ok := f.AccountOf("demo-client")
	require.True(t, ok)
	return &harness{e: e, f: f, srv: srv, acct: acct}
}

// reply is an answer: its status and JSON body.
type reply struct {
	status int
	body   []byte
	header http.Header
}

// obj decodes the body as a JSON object, numbers as json.Number.
func (r reply) obj(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(r.body))
	d.UseNumber() // amounts as written: 150.00, not 150
	require.NoError(t, d.Decode(&m), "%d %s", r.status, r.body)
	return m
}

// details returns the fields a general error's details name.
func (r reply) details(t *testing.T) []string {
	t.Helper()
	var e struct {
		Error struct {
			Code    string `json:"code"`
			Details []struct {
				Field string `json:"field"`
			} `json:"details"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal(r.body, &e), "%s", r.body)
	var out []string
	for _, d := range e.Error.Details {
		out = append(out, d.Field)
	}
	return out
}

// code returns a general error's code.
func (r reply) code(t *testing.T) string {
	t.Helper()
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal(r.body, &e), "%s", r.body)
	return e.Error.Code
}

// do sends a request with a fresh bearer token; body is JSON-encoded unless
// it is a string or []byte.
func (h *harness) do(t *testing.T, method, path, key string, body any) reply {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		enc, err := json.Marshal(b)
		require.NoError(t, err)
		rd = bytes.NewReader(enc)
	}
	req, err := http.NewRequest(method, h.srv.URL+path, rd)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+h.f.IssueToken("demo-client")) // valid however far the clock moved
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := h.srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return reply{status: resp.StatusCode, body: b, header: resp.Header}
}

// admin calls the admin API.
func (h *harness) admin(t *testing.T, method, path string, body any) reply {
	t.Helper()
	var rd io.Reader
	if body != nil {
		enc, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(enc)
	}
	req, err := http.NewRequest(method, h.srv.URL+path, rd)
	require.NoError(t, err)
	resp, err := h.srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return reply{status: resp.StatusCode, body: b, header: resp.Header}
}

const (
	chargePath  = "/api/v1/bank/wallet/charge/"
	pixPath     = "/api/v1/bank/wallet/charge/pix/"
	capturePath = "/api/v1/bank/wallet/charge/capture/"
	listPath    = "/api/v1/bank/wallet/charges/"
	walletPath  = "/api/v1/bank/wallet/"
)

// keyN is an Idempotency-Key of 16 characters or more.
func keyN(name string, i int) string { return name + "-key-" + strconv.Itoa(i) + "-padding" }

// payerAddress is a full payer_address.
func payerAddress() map[string]any {
	return map[string]any{"street": "Av. Paulista", "address_number": "1000", "complement": "Apto 42", "neighborhood": "Bela Vista",
		"city": "São Paulo", "state": "SP", "postal_code": "01310-100", "country": "BR"}
}

// body builds a reference-form create-charge body for the harness's
// account: the required fields, then extra.
func (h *harness) body(typ string, extra map[string]any) map[string]any {
	b := map[string]any{
		"wallet_uuid": h.acct.WalletUUID, "merchant_id": h.acct.MerchantUUID, "payer_name": "João Silva",
		"payer_email": "joao@example.com", "payer_tax_id": "39999999999", "payer_cell_phone": "+5511988887777",
		"installment_value": json.Number("150.00"), "installment_count": 1, "currency": "BRL", "due_date": "2030-12-31",
		"description": "order 42", "type_charge": typ, "payer_address": payerAddress(),
	}
	for k, v := range extra {
		if v == nil {
			delete(b, k)
			continue
		}
		b[k] = v
	}
	return b
}

// card returns the five card fields for number.
func card(number string) map[string]any {
	return map[string]any{"card_number": number, "card_name": "MARIA SILVA", "card_expiry_month": "12", "card_expiry_year": "2031", "card_cvv": "123"}
}

// with merges maps, later ones winning.
func with(ms ...map[string]any) map[string]any {
	out := map[string]any{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// create creates a charge and returns its answer.
func (h *harness) create(t *testing.T, path string, body any) map[string]any {
	t.Helper()
	r := h.do(t, http.MethodPost, path, "", body)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	return r.obj(t)
}

// Every documented spelling of the token endpoint's answer, the rate
// limit headers and a 429 in the general shape stay as they were.
func TestRateLimitAfterClockMovedBack(t *testing.T) {
	h := newHarness(t, a55fake.Config{RateLimit: 2})
	get := func() reply {
		return h.do(t, http.MethodGet, chargePath+"none/", "", nil)
	}
	get()
	get()
	r := get()
	require.Equal(t, 429, r.status)
	assert.Equal(t, "RATE_LIMIT_EXCEEDED", r.code(t))
	h.e.Clock().Advance(-time.Hour)
	r = get()
	assert.Equal(t, 404, r.status, "hits after the new now are forgotten")
	assert.Equal(t, "1", r.header.Get("X-RateLimit-Remaining"))
}

// The fake's own key rules: 16 to 128 printable ASCII characters.
func TestKeyRules(t *testing.T) {
	r := a55fake.KeyRules()
	for _, tc := range []struct {
		key  string
		want fakeserver.Problem
	}{
		{"", fakeserver.ProblemNone},
		{strings.Repeat("k", 15), fakeserver.ProblemKeyTooShort},
		{strings.Repeat("k", 16), fakeserver.ProblemNone},
		{strings.Repeat("k", 128), fakeserver.ProblemNone},
		{strings.Repeat("k", 129), fakeserver.ProblemKeyTooLong},
		{"sixteen chars!!! with space", fakeserver.ProblemKeyInvalidChars},
		{"sixteen-chars-\x7f-del", fakeserver.ProblemKeyInvalidChars},
		{"550e8400-e29b-41d4-a716-446655440000", fakeserver.ProblemNone},
	} {
		got, _ := r.Check(tc.key)
		assert.Equal(t, tc.want, got, "%q", tc.key)
	}
	assert.Equal(t, 24*time.Hour, r.Window)
}

// Malformed JSON and a body that is no object answer 400 in the general
// shape; nothing is created.
func TestMalformedBodies(t *testing.T) {
	h := newHarness(t, a55fake.Config{})
	for _, b := range []string{`{"wallet_uuid":`, `not json`, `[]`, `"x"`, `42`, ``} {
		r := h.do(t, http.MethodPost, chargePath, "malformed-body-key-000", b)
		assert.Equal(t, http.StatusBadRequest, r.status, "%q: %s", b, r.body)
		assert.Equal(t, "INVALID_REQUEST", r.code(t), "%q", b)
	}
	assert.Empty(t, h.e.Ledger().Operations())
}
