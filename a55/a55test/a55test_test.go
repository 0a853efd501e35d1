package a55test_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/coinepay/coinepaytest"
	"github.com/payonce/payonce/internal/corekit"
	"github.com/payonce/payonce/payoncetest"
)

// guideCharge is the example payload of A55's idempotency guide, byte for byte.
const guideCharge = `{
"amount": "100.00",
"currency": "BRL",
"type_charge": "credit_card",
"card": { "number": "4111111111111111", "holder_name": "TEST", "expiration_month": "12", "expiration_year": "2030", "cvv": "123" },
"payer": { "name": "张伟", "email": "zhangwei@example.com", "document": "12345678909", "document_type": "CPF" }
}`

// guideTime is before the example card's expiry (12/2030): servers that take
// guideCharge run on a fixed clock set to it, so the suite does not expire.
var guideTime = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// newFake starts a fake on a fixed clock at guideTime (an opts WithClock
// wins).
func newFake(t testing.TB, opts ...payoncetest.Option) *a55test.Server {
	t.Helper()
	return a55test.New(t, append([]payoncetest.Option{payoncetest.WithClock(payoncetest.NewFixedClock(guideTime))}, opts...)...)
}

const key1 = "550e8400-e29b-41d4-a716-446655440000"

type answer struct {
	Status int
	Header http.Header
	Raw    []byte
	JSON   map[string]any
}

func do(t testing.TB, c *http.Client, method, u, key, body string) answer {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, u, rd)
	require.NoError(t, err)
	if key != "" {
		req.Header.Set(corekit.HeaderIdempotencyKey, key)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	a := answer{Status: resp.StatusCode, Header: resp.Header, Raw: raw}
	require.NoError(t, json.Unmarshal(raw, &a.JSON), "%s", raw)
	return a
}

func charge(t testing.TB, s *a55test.Server, key, body string) answer {
	t.Helper()
	return do(t, s.HTTPClient(), http.MethodPost, s.URL+a55test.ChargePath, key, body)
}

func errCode(a answer) string {
	if e, ok := a.JSON["error"].(map[string]any); ok {
		code, _ := e["code"].(string)
		return code
	}
	if m, ok := a.JSON["message"].([]any); ok && len(m) > 0 {
		code, _ := m[0].(map[string]any)["code"].(string)
		return code
	}
	return ""
}

func withCard(number string, extra string) string {
	return `{"amount":"100.00","currency":"BRL","type_charge":"credit_card",` + extra +
		`"card":{"number":"` + number + `","holder_name":"TEST","expiration_month":"12","expiration_year":"2099","cvv":"123"}}`
}

func TestGuideChargeTwiceChargesOnce(t *testing.T) {
	s := newFake(t)
	a := charge(t, s, key1, guideCharge)
	require.Equal(t, 200, a.Status, "%s", a.Raw)
	assert.Equal(t, "confirmed", a.JSON["status"])
	assert.Contains(t, string(a.Raw), `"amount":100.00,`, "a JSON number with BRL's two decimals")
	assert.NotEmpty(t, a.JSON["charge_uuid"])
	assert.NotEmpty(t, a.Header.Get("X-Request-Id"))
	assert.NotContains(t, string(a.Raw), "4111111111111111", "never echo the card number")
	assert.NotContains(t, string(a.Raw), `"cvv"`)
	b := charge(t, s, key1, guideCharge)
	assert.Equal(t, 200, b.Status)
	assert.Equal(t, a.JSON["charge_uuid"], b.JSON["charge_uuid"])
	assert.Empty(t, b.Header.Get(corekit.HeaderReplay), "A55 replays are not marked by default")
	assert.True(t, s.Ledger().ExecutedOnce(key1))
	reqs := s.Requests()
	require.Len(t, reqs, 2)
	assert.True(t, reqs[1].Replayed)
	for _, op := range s.Ledger().Operations() {
		raw, _ := json.Marshal(op)
		assert.NotContains(t, string(raw), "4111111111111111")
	}
}

func TestReplayHeaderOption(t *testing.T) {
	s := newFake(t, a55test.WithReplayHeader(true))
	charge(t, s, key1, guideCharge)
	assert.Equal(t, "true", charge(t, s, key1, guideCharge).Header.Get(corekit.HeaderReplay))
}

func TestNoKeyChargesEveryTime(t *testing.T) {
	s := newFake(t)
	charge(t, s, "", guideCharge)
	charge(t, s, "", guideCharge)
	assert.Equal(t, 2, s.Ledger().CountKind("charge.create"))
}

func TestConflict(t *testing.T) {
	s := newFake(t)
	charge(t, s, key1, guideCharge)
	a := charge(t, s, key1, strings.Replace(guideCharge, "100.00", "200.00", 1))
	assert.Equal(t, 409, a.Status)
	assert.Equal(t, "IDEMPOTENCY_KEY_CONFLICT", errCode(a))
	assert.Contains(t, a.JSON["request_id"], "req_")
	assert.Equal(t, 1, s.Ledger().Count(key1))
}

func TestOnly2xxStored(t *testing.T) {
	s := newFake(t)
	declined := withCard(a55test.CardDeclined, "")
	a := charge(t, s, key1, declined)
	assert.Equal(t, 400, a.Status)
	assert.Equal(t, "CARD_DECLINED", errCode(a))
	assert.Equal(t, "declined", a.JSON["status"], "the quickstart's decline card")
	b := charge(t, s, key1, declined)
	assert.NotEqual(t, a.JSON["charge_uuid"], b.JSON["charge_uuid"], "a 4xx is not stored: executed again")

	require.NoError(t, s.AddFault(payoncetest.Rule{Fault: payoncetest.FaultErrorBeforeCommit, Status: 500, Count: 1}))
	const k = "key-5xx-0123456789"
	c := charge(t, s, k, guideCharge)
	assert.Equal(t, 500, c.Status)
	assert.Equal(t, "INTERNAL_ERROR", errCode(c))
	assert.Equal(t, 200, charge(t, s, k, guideCharge).Status)
	assert.True(t, s.Ledger().ExecutedOnce(k))
}

func TestKeyExpiry(t *testing.T) {
	s := newFake(t)
	a := charge(t, s, key1, guideCharge)
	s.Clock().Advance(24*time.Hour + time.Second)
	b := charge(t, s, key1, guideCharge)
	require.Equal(t, 200, b.Status, "%s", b.Raw)
	assert.NotEqual(t, a.JSON["charge_uuid"], b.JSON["charge_uuid"])
	assert.Equal(t, 2, s.Ledger().Count(key1))
}

func TestKeyRules(t *testing.T) {
	s := newFake(t)
	for key, code := range map[string]string{
		"short":                  "IDEMPOTENCY_KEY_TOO_SHORT",
		strings.Repeat("k", 129): "IDEMPOTENCY_KEY_TOO_LONG",
		"has spaces in the key!": "IDEMPOTENCY_KEY_INVALID",
	} {
		a := charge(t, s, key, guideCharge)
		assert.Equal(t, 400, a.Status)
		assert.Equal(t, code, errCode(a))
	}
	assert.Equal(t, 0, s.Ledger().Len())
}

func TestTestCards(t *testing.T) {
	s := newFake(t)
	a := charge(t, s, "", withCard(a55test.CardProcError, ""))
	assert.Equal(t, 400, a.Status)
	assert.Equal(t, "PROCESSING_ERROR", errCode(a))
	assert.Equal(t, "error", a.JSON["status"])
	assert.Equal(t, "INVALID_CARD", errCode(charge(t, s, "", withCard("41111111111a1111", ""))))
	assert.Equal(t, "EXPIRED_CARD", errCode(charge(t, s, "", strings.Replace(withCard(a55test.CardConfirms, ""), "2099", "2020", 1))))
	d := charge(t, s, "", withCard("4111111111111112", "")) // fails Luhn: the sandbox decides by the last digit
	assert.Equal(t, "05", errCode(d))
	assert.Equal(t, 0, s.Ledger().Len(), "failed charges are not in the ledger")
	// A failed charge can still be fetched.
	g := do(t, s.HTTPClient(), http.MethodGet, s.URL+a55test.ChargePath+a.JSON["charge_uuid"].(string)+"/", "", "")
	assert.Equal(t, "error", g.JSON["status"])
}

func TestValidation(t *testing.T) {
	s := newFake(t)
	c := s.HTTPClient()
	cases := []struct {
		method, path, body string
		status             int
		code               string
	}{
		{http.MethodPost, a55test.ChargePath, `{"amount":`, 400, "INVALID_REQUEST"},
		{http.MethodPost, a55test.ChargePath, `{"amount":"1.234","currency":"BRL","type_charge":"pix"}`, 422, "AMOUNT_INVALID"},
		{http.MethodPost, a55test.ChargePath, `{"amount":"1.00","currency":"reais","type_charge":"pix"}`, 422, "CURRENCY_NOT_SUPPORTED"},
		{http.MethodPost, a55test.ChargePath, `{"amount":"1.00","currency":"BRL","type_charge":"cash"}`, 422, "VALIDATION_ERROR"},
		{http.MethodPost, a55test.ChargePath, `{"amount":"1.00","currency":"BRL","type_charge":"credit_card"}`, 422, "VALIDATION_ERROR"},
		{http.MethodPost, a55test.ChargePath, `{"amount":1.00,"currency":"BRL","type_charge":"pix"}`, 400, "INVALID_REQUEST"},
		{http.MethodPost, a55test.ChargePath, `{"amount":"1.00","currency":"BRL","type_charge":"pix","wallet_uuid":"nope"}`, 404, "NOT_FOUND"},
		{http.MethodGet, "/api/v1/bank/wallet/nope/", "", 404, "NOT_FOUND"},
		{http.MethodPut, a55test.ChargePath, "", 405, "METHOD_NOT_ALLOWED"},
		{http.MethodGet, a55test.ChargePath, "", 422, "VALIDATION_ERROR"},
		{http.MethodPost, a55test.ChargePath, `{"x":"` + strings.Repeat("a", 1<<20) + `"}`, 413, "PAYLOAD_TOO_LARGE"},
	}
	for _, tc := range cases {
		a := do(t, c, tc.method, s.URL+tc.path, "", tc.body)
		assert.Equal(t, tc.status, a.Status, "%s %s", tc.method, tc.path)
		assert.Equal(t, tc.code, errCode(a), "%s %s: %s", tc.method, tc.path, a.Raw)
	}
}

func TestMoves(t *testing.T) {
	s := newFake(t)
	c := s.HTTPClient()
	pre := charge(t, s, "", withCard(a55test.CardConfirms, `"capture":false,`))
	require.Equal(t, "confirmed", pre.JSON["status"], "authorised, not pending")
	assert.EqualValues(t, 0, pre.JSON["amount_remaining"], "nothing captured yet")
	id, wallet := pre.JSON["charge_uuid"].(string), pre.JSON["wallet_uuid"].(string)
	ids := `"charge_uuid":"` + id + `","wallet_uuid":"` + wallet + `"`

	// Refund before capture: illegal.
	r := do(t, c, http.MethodPost, s.URL+a55test.RefundPath, "", `{`+ids+`}`)
	assert.Equal(t, 409, r.Status)
	assert.Equal(t, "REFUND_NOT_ALLOWED", errCode(r))
	assert.Equal(t, id, r.JSON["charge_uuid"])

	// Partial capture: paid, the rest released.
	cap1 := do(t, c, http.MethodPost, s.URL+a55test.CapturePath, "capture-key-0123456", `{`+ids+`,"amount":80.00}`)
	require.Equal(t, 200, cap1.Status, "%s", cap1.Raw)
	assert.Equal(t, "paid", cap1.JSON["status"])
	assert.EqualValues(t, 80, cap1.JSON["amount_remaining"])
	assert.Equal(t, "CAPTURE_NOT_ALLOWED", errCode(do(t, c, http.MethodPost, s.URL+a55test.CapturePath, "", `{`+ids+`}`)))
	assert.Equal(t, "CANCEL_NOT_ALLOWED", errCode(do(t, c, http.MethodPost, s.URL+a55test.CancelPath, "", `{`+ids+`}`)))

	// Refunds: partial by the guide's body form, too much, rest by path form.
	r1 := do(t, c, http.MethodPost, s.URL+a55test.RefundPath, "", `{`+ids+`,"amount":"30.00","reason":"customer"}`)
	require.Equal(t, 200, r1.Status, "%s", r1.Raw)
	assert.EqualValues(t, 50, r1.JSON["amount_remaining"])
	over := do(t, c, http.MethodPost, s.URL+a55test.RefundPath, "", `{`+ids+`,"amount":"60.00"}`)
	assert.Equal(t, 409, over.Status)
	assert.Equal(t, "REFUND_NOT_ALLOWED", errCode(over))
	r2 := do(t, c, http.MethodPost, s.URL+"/api/v1/bank/wallet/charge/"+id+"/refund/"+wallet+"/", "", "")
	require.Equal(t, 200, r2.Status, "%s", r2.Raw)
	assert.Equal(t, "refunded", r2.JSON["status"])
	assert.Equal(t, "REFUND_NOT_ALLOWED", errCode(do(t, c, http.MethodPost, s.URL+a55test.RefundPath, "", `{`+ids+`}`)))

	// Cancel a pre-authorisation by path form; then every move is illegal.
	pre2 := charge(t, s, "", withCard(a55test.CardConfirms, `"capture":false,`))
	id2, w2 := pre2.JSON["charge_uuid"].(string), pre2.JSON["wallet_uuid"].(string)
	cn := do(t, c, http.MethodPost, s.URL+"/api/v1/bank/wallet/charge/"+id2+"/cancel/"+w2+"/", "", `{"reason":"fraud"}`)
	require.Equal(t, 200, cn.Status, "%s", cn.Raw)
	assert.Equal(t, "canceled", cn.JSON["status"])
	ids2 := `{"charge_uuid":"` + id2 + `","wallet_uuid":"` + w2 + `"}`
	again := do(t, c, http.MethodPost, s.URL+a55test.CancelPath, "", ids2)
	assert.Equal(t, 409, again.Status)
	assert.Equal(t, "CANCEL_NOT_ALLOWED", errCode(again))
	assert.Equal(t, "CAPTURE_NOT_ALLOWED", errCode(do(t, c, http.MethodPost, s.URL+a55test.CapturePath, "", ids2)))

	// A PIX is issued: nothing to capture; cancel by body form, GET by both forms.
	pix := charge(t, s, "", `{"amount":"10.00","currency":"BRL","type_charge":"pix"}`)
	assert.Equal(t, "issued", pix.JSON["status"])
	pixIDs := `{"charge_uuid":"` + pix.JSON["charge_uuid"].(string) + `","wallet_uuid":"` + wallet + `"}`
	assert.Equal(t, "CAPTURE_NOT_ALLOWED", errCode(do(t, c, http.MethodPost, s.URL+a55test.CapturePath, "", pixIDs)))
	cb := do(t, c, http.MethodPost, s.URL+a55test.CancelPath, "", `{"charge_uuid":"`+pix.JSON["charge_uuid"].(string)+`"}`)
	assert.Equal(t, "canceled", cb.JSON["status"])
	g1 := do(t, c, http.MethodGet, s.URL+a55test.ChargePath+"?"+url.Values{"charge_uuid": {id}, "wallet_uuid": {wallet}}.Encode(), "", "")
	assert.Equal(t, "refunded", g1.JSON["status"])
	g2 := do(t, c, http.MethodGet, s.URL+a55test.ChargePath+id2+"/", "", "")
	assert.Equal(t, "canceled", g2.JSON["status"])
	assert.Equal(t, 404, do(t, c, http.MethodGet, s.URL+a55test.ChargePath+"?charge_uuid="+id+"&wallet_uuid=other", "", "").Status)

	assert.Equal(t, 1, s.Ledger().CountKind("charge.capture"))
	assert.Equal(t, 2, s.Ledger().CountKind("charge.refund"))
	assert.Equal(t, 2, s.Ledger().CountKind("charge.cancel"))
}

func TestWallet(t *testing.T) {
	s := newFake(t)
	w := do(t, s.HTTPClient(), http.MethodPost, s.URL+a55test.WalletPath, "wallet-key-0123456", `{"name":"shop"}`)
	require.Equal(t, 200, w.Status)
	wid := w.JSON["uuid"].(string) // the quickstart's body answers the quickstart's shape
	ch := charge(t, s, "", `{"amount":"10.00","currency":"BRL","type_charge":"boleto","wallet_uuid":"`+wid+`"}`)
	assert.Equal(t, "issued", ch.JSON["status"])
	assert.Equal(t, wid, ch.JSON["wallet_uuid"])
	assert.True(t, s.Ledger().ExecutedOnce("wallet-key-0123456"))
}

func TestTokenEndpoint(t *testing.T) {
	s := newFake(t, a55test.WithTokenLifetime(10*time.Minute))
	// golang.org/x/oauth2 (Basic auth or form, whichever it picks).
	cc := clientcredentials.Config{ClientID: s.ClientID(), ClientSecret: s.ClientSecret(), TokenURL: s.TokenURL(), Scopes: []string{"api/readwrite"}}
	tok, err := cc.Token(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "Bearer", tok.TokenType)
	assert.WithinDuration(t, time.Now().Add(10*time.Minute), tok.Expiry, 5*time.Second)

	// Form body, as the public reference shows it.
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {s.ClientID()}, "client_secret": {s.ClientSecret()}, "scope": {"api/readwrite"}}
	resp, err := http.PostForm(s.TokenURL(), form)
	require.NoError(t, err)
	var body map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode)
	assert.EqualValues(t, 600, body["expires_in"])
	token := body["access_token"].(string)

	form.Set("client_secret", "wrong")
	bad, err := http.PostForm(s.TokenURL(), form)
	require.NoError(t, err)
	bad.Body.Close()
	assert.Equal(t, 401, bad.StatusCode)
	form.Set("grant_type", "password")
	bad2, err := http.PostForm(s.TokenURL(), form)
	require.NoError(t, err)
	bad2.Body.Close()
	assert.Equal(t, 400, bad2.StatusCode)

	call := func(auth string) answer {
		req, _ := http.NewRequest(http.MethodPost, s.URL+a55test.ChargePath, strings.NewReader(guideCharge))
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		a := answer{Status: resp.StatusCode, Header: resp.Header, Raw: raw}
		require.NoError(t, json.Unmarshal(raw, &a.JSON))
		return a
	}
	assert.Equal(t, 200, call("Bearer "+token).Status)
	assert.Equal(t, "UNAUTHORIZED", errCode(call("")))
	assert.Equal(t, "INVALID_TOKEN", errCode(call("Bearer garbage")))
	assert.Equal(t, 401, call("Basic Zm9vOmJhcg==").Status)
	s.Clock().Advance(10 * time.Minute)
	expired := call("Bearer " + token)
	assert.Equal(t, 401, expired.Status)
	assert.Equal(t, "INVALID_TOKEN", errCode(expired))
	// The HTTPClient renews its token on the fake clock.
	assert.Equal(t, 200, charge(t, s, "", guideCharge).Status)
	assert.Equal(t, 404, do(t, s.HTTPClient(), http.MethodGet, s.URL+a55test.ChargePath+"?charge_uuid=x&wallet_uuid="+s.WalletUUID(), "", "").Status)
}

func TestRateLimit(t *testing.T) {
	s := newFake(t, a55test.WithRateLimit(3, time.Minute))
	for i := range 3 {
		a := charge(t, s, "", guideCharge)
		require.Equal(t, 200, a.Status)
		assert.Equal(t, "3", a.Header.Get("X-RateLimit-Limit"))
		assert.Equal(t, string(rune('2'-i)), a.Header.Get("X-RateLimit-Remaining"))
		assert.NotEmpty(t, a.Header.Get("X-RateLimit-Reset"))
	}
	a := charge(t, s, "", guideCharge)
	assert.Equal(t, 429, a.Status)
	assert.Equal(t, "RATE_LIMIT_EXCEEDED", errCode(a))
	assert.Equal(t, "60", a.Header.Get("Retry-After"))
	assert.Contains(t, a.JSON["request_id"], "req_")
	assert.Equal(t, "0", a.Header.Get("X-RateLimit-Remaining"))
	s.Clock().Advance(61 * time.Second)
	assert.Equal(t, 200, charge(t, s, "", guideCharge).Status, "rolling window")
	s.SetRateLimit(0, 0)
	for range 5 {
		assert.Equal(t, 200, charge(t, s, "", guideCharge).Status)
	}
	assert.Empty(t, charge(t, s, "", guideCharge).Header.Get("X-RateLimit-Limit"))
}

func TestFaultDropAfterCommitAndAdmin(t *testing.T) {
	s := newFake(t)
	resp, err := http.Post(s.URL+"/_fakepay/faults", "application/json",
		strings.NewReader(`{"fault":"drop_after_commit","path":"/api/v1/bank/wallet/charge/","count":1}`))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 201, resp.StatusCode)

	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	send := func() (*http.Response, error) {
		req, _ := http.NewRequest(http.MethodPost, s.URL+a55test.ChargePath, strings.NewReader(guideCharge))
		req.Header.Set("Authorization", "Bearer "+s.IssueToken())
		req.Header.Set(corekit.HeaderIdempotencyKey, key1)
		return fresh.Do(req)
	}
	_, err = send()
	require.Error(t, err, "the answer is lost")
	r2, err := send()
	require.NoError(t, err)
	r2.Body.Close()
	assert.Equal(t, 200, r2.StatusCode)
	assert.True(t, s.Ledger().ExecutedOnce(key1))

	lr, err := http.Get(s.URL + "/_fakepay/ledger")
	require.NoError(t, err)
	defer lr.Body.Close()
	var ledger struct {
		Operations []payoncetest.Operation `json:"operations"`
	}
	require.NoError(t, json.NewDecoder(lr.Body).Decode(&ledger))
	require.Len(t, ledger.Operations, 1)
	assert.Equal(t, "a55", ledger.Operations[0].Provider)
	assert.Equal(t, "charge.create", ledger.Operations[0].Kind)
	assert.Equal(t, key1, ledger.Operations[0].IdempotencyKey)
	assert.Equal(t, "100.00", ledger.Operations[0].Amount)
	b, err := http.Post(s.URL+"/_fakepay/balance", "application/json", strings.NewReader(`{"api_key":"demo-key","amount":"1.00"}`))
	require.NoError(t, err)
	b.Body.Close()
	assert.Equal(t, 404, b.StatusCode, "no Coinepay fake here")
}

// Reset forgets the fake's tokens, and HTTPClient's cached one with them,
// whether a test calls Reset or the console resets the fake
// (POST /_fakepay/reset): the next request gets a new token, not a 401.
func TestResetForgetsTheHTTPClientsToken(t *testing.T) {
	s := newFake(t)
	require.Equal(t, 200, charge(t, s, "", guideCharge).Status)
	s.Reset()
	require.Equal(t, 200, charge(t, s, "", guideCharge).Status, "after Reset")
	resp, err := http.Post(s.URL+"/_fakepay/reset", "application/json", nil)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	a := charge(t, s, "", guideCharge)
	assert.Equal(t, 200, a.Status, "after the admin reset: %s", a.Raw)
	assert.Equal(t, 1, s.Ledger().CountKind("charge.create"))
}

func TestKeyScopePerClient(t *testing.T) {
	// One server, two OAuth2 clients: an Idempotency-Key is scoped per
	// client, so the same key and body under each runs twice.
	s := newFake(t, a55test.WithExtraCredentials("client-2", "secret-2"), a55test.WithExtraCredentials("client-3", "secret-3"))

	// The extra client gets tokens from the token endpoint like the primary.
	cc := clientcredentials.Config{ClientID: "client-2", ClientSecret: "secret-2", TokenURL: s.TokenURL()}
	tok, err := cc.Token(context.Background())
	require.NoError(t, err)
	bad := clientcredentials.Config{ClientID: "client-2", ClientSecret: "secret-3", TokenURL: s.TokenURL()}
	_, err = bad.Token(context.Background())
	require.Error(t, err, "each client has its own secret")

	send := func(token string) answer {
		t.Helper()
		c := &http.Client{Transport: bearer{token}}
		return do(t, c, http.MethodPost, s.URL+a55test.ChargePath, key1, guideCharge)
	}
	a := send(s.IssueToken())
	require.Equal(t, 200, a.Status, "%s", a.Raw)
	b := send(tok.AccessToken)
	require.Equal(t, 200, b.Status, "%s", b.Raw)
	assert.NotEqual(t, a.JSON["charge_uuid"], b.JSON["charge_uuid"], "another client's stored answer is not replayed")
	c := send(s.IssueTokenFor("client-2"))
	require.Equal(t, 200, c.Status)
	assert.Equal(t, b.JSON["charge_uuid"], c.JSON["charge_uuid"], "a retry under client-2 replays client-2's answer")

	ops := s.Ledger().ByKey(key1)
	require.Len(t, ops, 2)
	assert.Equal(t, a55test.DefaultClientID, ops[0].Credential)
	assert.Equal(t, "client-2", ops[1].Credential)
	assert.Equal(t, a.JSON["charge_uuid"], ops[0].ID)
	assert.Equal(t, b.JSON["charge_uuid"], ops[1].ID)
}

// bearer adds a fixed bearer token.
type bearer struct{ token string }

func (b bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	out := req.Clone(req.Context())
	out.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(out)
}

func TestOneClockDrivesBothFakes(t *testing.T) {
	start := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	clk := payoncetest.NewFixedClock(start)
	a55srv := a55test.New(t, payoncetest.WithClock(clk))
	cpsrv := coinepaytest.New(t, payoncetest.WithClock(clk))
	require.Same(t, clk, a55srv.Clock())
	require.Same(t, clk, cpsrv.Clock())

	dates := func() (a55Date, cpDate time.Time) {
		t.Helper()
		a := charge(t, a55srv, "", guideCharge)
		require.Equal(t, 200, a.Status, "%s", a.Raw)
		cp := do(t, cpsrv.HTTPClient(), http.MethodPost, cpsrv.URL+"/api/v1/openapi/card/apply",
			"apply-"+a.JSON["charge_uuid"].(string), `{"header_id":"h1","package_id":"p1"}`)
		require.Equal(t, 200, cp.Status, "%s", cp.Raw)
		a55Date, err := http.ParseTime(a.Header.Get("Date"))
		require.NoError(t, err)
		cpDate, err = http.ParseTime(cp.Header.Get("Date"))
		require.NoError(t, err)
		return a55Date, cpDate
	}
	a, cp := dates()
	assert.Equal(t, start, a.UTC())
	assert.Equal(t, start, cp.UTC())

	clk.Advance(2 * time.Hour)
	a, cp = dates()
	assert.Equal(t, start.Add(2*time.Hour), a.UTC(), "the A55 Date header follows the shared clock")
	assert.Equal(t, start.Add(2*time.Hour), cp.UTC(), "the Coinepay Date header follows the shared clock")
	assert.Equal(t, start.Add(2*time.Hour), a55srv.Ledger().Operations()[1].Time.UTC())
	assert.Equal(t, start.Add(2*time.Hour), cpsrv.Ledger().Operations()[1].Time.UTC())
}
