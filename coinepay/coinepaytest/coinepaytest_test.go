package coinepaytest_test

import (
	"github.com/payonce/payonce/coinepay"
	"github.com/payonce/payonce/internal/corekit"

	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/coinepay/coinepaytest"
	"github.com/payonce/payonce/payoncetest"
)

type envelope struct {
	Code       int             `json:"code"`
	Message    string          `json:"message"`
	MessageKey string          `json:"message_key"`
	Data       json.RawMessage `json:"data"`
}

type answer struct {
	Status int
	Header http.Header
	Env    envelope
	Raw    []byte
}

func do(t testing.TB, c *http.Client, method, url, key, body string) answer {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	require.NoError(t, err)
	if key != "" {
		req.Header.Set(corekit.HeaderIdempotencyKey, key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	return send(t, c, req)
}

// send sends req with c and reads the answer, whose body must be JSON.
func send(t testing.TB, c *http.Client, req *http.Request) answer {
	t.Helper()
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	a := answer{Status: resp.StatusCode, Header: resp.Header, Raw: raw}
	require.NoError(t, json.Unmarshal(raw, &a.Env), "body %s", raw)
	return a
}

func apply(t testing.TB, s *coinepaytest.Server, key, body string) answer {
	t.Helper()
	return do(t, s.HTTPClient(), http.MethodPost, s.URL+"/api/v1/openapi/card/apply", key, body)
}

const applyBody = `{"header_id":"h1","package_id":"p1"}`

func cardID(t testing.TB, a answer) string {
	t.Helper()
	var d struct {
		CardID string `json:"card_id"`
	}
	require.NoError(t, json.Unmarshal(a.Env.Data, &d))
	require.NotEmpty(t, d.CardID)
	return d.CardID
}

func amt(s string) payonce.Amount {
	a, err := payonce.ParseAmount(s)
	if err != nil {
		panic(err)
	}
	return a
}

func TestApplyAndReplay(t *testing.T) {
	s := coinepaytest.New(t)
	a := apply(t, s, "key-1", applyBody)
	require.Equal(t, 200, a.Status, "%s", a.Raw)
	assert.Equal(t, 200, a.Env.Code)
	assert.Equal(t, "success", a.Env.MessageKey)
	id := cardID(t, a)
	assert.Empty(t, a.Header.Get(corekit.HeaderReplay))
	assert.Equal(t, "999.00", s.Balance("demo-key").String())

	// Same key, same body with other key order and whitespace: replay.
	b := apply(t, s, "key-1", "{ \"package_id\": \"p1\",\n \"header_id\": \"h1\" }")
	require.Equal(t, 200, b.Status)
	assert.Equal(t, "true", b.Header.Get(corekit.HeaderReplay))
	assert.Equal(t, id, cardID(t, b))
	assert.JSONEq(t, string(a.Raw), string(b.Raw))
	assert.True(t, s.Ledger().ExecutedOnce("key-1"))
	assert.Equal(t, "999.00", s.Balance("demo-key").String())

	reqs := s.Requests()
	require.Len(t, reqs, 2)
	assert.False(t, reqs[0].Replayed)
	assert.True(t, reqs[1].Replayed)
	require.True(t, reqs[1].SignatureChecked)
	assert.True(t, reqs[1].SignatureValid)
	assert.NotEqual(t, reqs[0].Nonce, reqs[1].Nonce, "every attempt has a fresh nonce")
}

func TestConflictSameKeyDifferentBody(t *testing.T) {
	s := coinepaytest.New(t)
	require.Equal(t, 200, apply(t, s, "key-c", applyBody).Status)
	a := apply(t, s, "key-c", `{"header_id":"h1","package_id":"p2"}`)
	assert.Equal(t, 409, a.Status)
	assert.Equal(t, 409, a.Env.Code)
	assert.Equal(t, "openapi_idempotency_key_conflict", a.Env.MessageKey)
	assert.Equal(t, "Idempotency-Key 冲突", a.Env.Message)
	assert.Equal(t, "null", string(a.Env.Data))
	assert.Equal(t, 1, s.Ledger().Count("key-c"))
}

func TestInsufficientBalanceNotStored(t *testing.T) {
	s := coinepaytest.New(t, coinepaytest.WithBalance(amt("0.50")))
	a := apply(t, s, "key-ib", applyBody)
	assert.Equal(t, 400, a.Status)
	assert.Equal(t, "insufficient_balance", a.Env.MessageKey)
	assert.Equal(t, 0, s.Ledger().Count("key-ib"))

	s.SetBalance("demo-key", amt("10.00"))
	b := apply(t, s, "key-ib", applyBody)
	assert.Equal(t, 200, b.Status, "4xx is not stored: the same key and body execute again")
	assert.Empty(t, b.Header.Get(corekit.HeaderReplay))
	assert.True(t, s.Ledger().ExecutedOnce("key-ib"))
	assert.Equal(t, "9.00", s.Balance("demo-key").String())
}

func TestServerErrorNotStored(t *testing.T) {
	s := coinepaytest.New(t)
	require.NoError(t, s.AddFault(payoncetest.Rule{Fault: payoncetest.FaultErrorBeforeCommit, Status: 502, Count: 1}))
	a := apply(t, s, "key-5xx", applyBody)
	assert.Equal(t, 502, a.Status)
	assert.Equal(t, 502, a.Env.Code)
	assert.Equal(t, "openapi_internal_error", a.Env.MessageKey)
	assert.Equal(t, 0, s.Ledger().Count("key-5xx"))
	b := apply(t, s, "key-5xx", applyBody)
	assert.Equal(t, 200, b.Status)
	assert.Empty(t, b.Header.Get(corekit.HeaderReplay))
	assert.True(t, s.Ledger().ExecutedOnce("key-5xx"))
}

func TestLargeResponseNotStored(t *testing.T) {
	// A cap below the apply answer's size stands in for a 256 KB answer.
	s := coinepaytest.New(t, coinepaytest.WithMaxStoredResponse(64))
	require.Equal(t, 200, apply(t, s, "key-big", applyBody).Status)
	b := apply(t, s, "key-big", applyBody)
	assert.Equal(t, 409, b.Status, "not stored, so not replayed, but never executed again")
	assert.Equal(t, "openapi_idempotency_answer_not_kept", b.Env.MessageKey)
	assert.Equal(t, 1, s.Ledger().Count("key-big"))
}

func TestKeyExpiresAfter24h(t *testing.T) {
	s := coinepaytest.New(t)
	require.Equal(t, 200, apply(t, s, "key-exp", applyBody).Status)
	s.Clock().Advance(23 * time.Hour)
	assert.Equal(t, "true", apply(t, s, "key-exp", applyBody).Header.Get(corekit.HeaderReplay))
	s.Clock().Advance(time.Hour + time.Second)
	before := s.Clock().Now().Truncate(time.Second) // the Date header has whole seconds
	b := apply(t, s, "key-exp", applyBody)
	after := s.Clock().Now()
	assert.Equal(t, 200, b.Status)
	assert.Empty(t, b.Header.Get(corekit.HeaderReplay))
	assert.Equal(t, 2, s.Ledger().Count("key-exp"), "after 24 h the key counts as new")
	// The Date header follows the fake clock, so a client can sign against it.
	d, err := http.ParseTime(b.Header.Get("Date"))
	require.NoError(t, err)
	assert.False(t, d.Before(before) || d.After(after), "Date %v not within the request's span on the fake clock [%v, %v]", d, before, after)
}

func TestKeyRules(t *testing.T) {
	s := coinepaytest.New(t)
	cases := []struct {
		key, msgKey, msg string
	}{
		{"", "openapi_idempotency_key_required", "缺少 Idempotency-Key 请求头"},
		{strings.Repeat("k", 129), "openapi_idempotency_key_too_long", ""},
		{"bad key!", "openapi_idempotency_key_invalid_chars", ""},
	}
	for _, c := range cases {
		a := apply(t, s, c.key, applyBody)
		assert.Equal(t, 400, a.Status, c.msgKey)
		assert.Equal(t, 400, a.Env.Code)
		assert.Equal(t, c.msgKey, a.Env.MessageKey)
		if c.msg != "" {
			assert.Equal(t, c.msg, a.Env.Message)
		}
	}
	// The document's task-queue key form is accepted, and 128 chars is fine.
	assert.Equal(t, 200, apply(t, s, "openapi:apply:42", applyBody).Status)
	assert.Equal(t, 200, apply(t, s, strings.Repeat("k", 128), applyBody).Status)
	assert.Equal(t, 2, s.Ledger().Len())
}

// applyAs sends a card/apply signed for apiKey (a key the server knows).
func applyAs(t testing.TB, s *coinepaytest.Server, apiKey, key, body string) answer {
	t.Helper()
	signer, ok := s.SignerFor(apiKey)
	require.True(t, ok, "unknown API key %q", apiKey)
	req, err := http.NewRequest(http.MethodPost, s.URL+"/api/v1/openapi/card/apply", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(corekit.HeaderIdempotencyKey, key)
	require.NoError(t, signer.Sign(req, []byte(body)))
	return send(t, http.DefaultClient, req)
}

func TestKeyScopePerAPIKey(t *testing.T) {
	// One server, two API keys: an Idempotency-Key is scoped per key, so
	// the same key and body under each runs twice, and each pays from its
	// own balance.
	s := coinepaytest.New(t, coinepaytest.WithBalance(amt("50.00")),
		coinepaytest.WithExtraCredentials("key-2", "secret-2"),
		coinepaytest.WithExtraCredentials("key-3", "secret-3"))
	_, ok := s.SignerFor("nope")
	assert.False(t, ok)

	a := applyAs(t, s, coinepaytest.DefaultAPIKey, "shared-key", applyBody)
	require.Equal(t, 200, a.Status, "%s", a.Raw)
	b := applyAs(t, s, "key-2", "shared-key", applyBody)
	require.Equal(t, 200, b.Status, "%s", b.Raw)
	assert.Empty(t, b.Header.Get(corekit.HeaderReplay), "another key's stored answer is not replayed")
	assert.NotEqual(t, cardID(t, a), cardID(t, b))

	// A retry under key-2 is a replay of key-2's answer, not of the first.
	c := applyAs(t, s, "key-2", "shared-key", applyBody)
	require.Equal(t, 200, c.Status)
	assert.Equal(t, "true", c.Header.Get(corekit.HeaderReplay))
	assert.Equal(t, cardID(t, b), cardID(t, c))

	ops := s.Ledger().ByKey("shared-key")
	require.Len(t, ops, 2)
	assert.Equal(t, coinepaytest.DefaultAPIKey, ops[0].Credential)
	assert.Equal(t, "key-2", ops[1].Credential)

	// Balances are per API key: each paid its own fee, key-3 paid nothing.
	assert.Equal(t, "49.00", s.Balance(coinepaytest.DefaultAPIKey).String())
	assert.Equal(t, "49.00", s.Balance("key-2").String())
	assert.Equal(t, "50.00", s.Balance("key-3").String())
	s.SetBalance("key-3", amt("0.50"))
	assert.Equal(t, "49.00", s.Balance("key-2").String())
	d := applyAs(t, s, "key-3", "shared-key", applyBody)
	assert.Equal(t, 400, d.Status, "%s", d.Raw)
	assert.Equal(t, "insufficient_balance", d.Env.MessageKey, "key-3 pays from its own balance")
	assert.Equal(t, "49.00", s.Balance(coinepaytest.DefaultAPIKey).String())
	assert.Equal(t, 2, s.Ledger().Count("shared-key"))
}

func signed(t *testing.T, s *coinepaytest.Server, method, path string, body []byte, mutate func(*http.Request)) answer {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+path, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set(corekit.HeaderIdempotencyKey, "sig-"+fmt.Sprint(time.Now().UnixNano()))
	require.NoError(t, s.Signer().Sign(req, body))
	if mutate != nil {
		mutate(req)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	a := answer{Status: resp.StatusCode, Header: resp.Header, Raw: raw}
	require.NoError(t, json.Unmarshal(raw, &a.Env), "%s", raw)
	return a
}

func TestSignatureChecks(t *testing.T) {
	s := coinepaytest.New(t)
	body := []byte(applyBody)
	ok := signed(t, s, http.MethodPost, "/api/v1/openapi/card/apply", body, nil)
	require.Equal(t, 200, ok.Status, "%s", ok.Raw)

	var replayReq *http.Request
	cases := []struct {
		name, key string
		mutate    func(*http.Request)
	}{
		{"missing", coinepay.CodeSignatureRequired, func(r *http.Request) { r.Header.Del(coinepay.HeaderSignature) }},
		{"unknown key", coinepay.CodeAPIKeyInvalid, func(r *http.Request) { r.Header.Set(coinepay.HeaderAPIKey, "nope") }},
		{"wrong signature", coinepay.CodeSignatureInvalid, func(r *http.Request) { r.Header.Set(coinepay.HeaderSignature, strings.Repeat("0", 64)) }},
		{"garbled timestamp", coinepay.CodeSignatureInvalid, func(r *http.Request) { r.Header.Set(coinepay.HeaderTimestamp, "abc") }},
		{"idempotency key is not signed", "success", func(r *http.Request) { r.Header.Set(corekit.HeaderIdempotencyKey, "changed-after-signing") }},
		{"nonce replayed", coinepay.CodeNonceReplayed, func(r *http.Request) {
			if replayReq == nil {
				replayReq = r
				return
			}
			for _, h := range []string{coinepay.HeaderTimestamp, coinepay.HeaderNonce, coinepay.HeaderSignature} {
				r.Header.Set(h, replayReq.Header.Get(h))
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.key == coinepay.CodeNonceReplayed {
				first := signed(t, s, http.MethodPost, "/api/v1/openapi/card/apply", body, c.mutate)
				require.Equal(t, 200, first.Status)
			}
			a := signed(t, s, http.MethodPost, "/api/v1/openapi/card/apply", body, c.mutate)
			assert.Equal(t, c.key, a.Env.MessageKey, "%s", a.Raw)
			if c.key != "success" {
				assert.Equal(t, 401, a.Status)
				assert.Equal(t, 401, a.Env.Code)
			}
		})
	}

	// A stale timestamp: the fake clock moved, the signer did not.
	t.Run("timestamp expired", func(t *testing.T) {
		req, err := http.NewRequest(http.MethodPost, s.URL+"/api/v1/openapi/card/apply", bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set(corekit.HeaderIdempotencyKey, "stale-ts")
		signer, _ := coinepay.NewHMACSigner(s.APIKey(), s.Secret())
		require.NoError(t, signer.Sign(req, body))
		s.Clock().Advance(10 * time.Minute)
		defer s.Clock().Advance(-10 * time.Minute)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var env envelope
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&env))
		assert.Equal(t, 401, resp.StatusCode)
		assert.Equal(t, coinepay.CodeTimestampExpired, env.MessageKey)
		assert.Equal(t, "时间戳已过期", env.Message)
	})
	for _, a := range s.Requests() {
		require.True(t, a.SignatureChecked)
	}
}

func TestRechargeInfoList(t *testing.T) {
	s := coinepaytest.New(t)
	id := cardID(t, apply(t, s, "k-apply", applyBody))
	c := s.HTTPClient()
	r := do(t, c, http.MethodPost, s.URL+"/api/v1/openapi/card/recharge", "k-rch", `{"card_id":"`+id+`","amount":"25.50"}`)
	require.Equal(t, 200, r.Status, "%s", r.Raw)
	assert.JSONEq(t, `"25.50"`, string(mustField(t, r.Env.Data, "card_balance")))
	assert.Equal(t, "973.50", s.Balance("demo-key").String())
	r2 := do(t, c, http.MethodPost, s.URL+"/api/v1/openapi/card/recharge", "k-rch", `{"amount":"25.50","card_id":"`+id+`"}`)
	assert.Equal(t, "true", r2.Header.Get(corekit.HeaderReplay))
	assert.Equal(t, "973.50", s.Balance("demo-key").String())

	info := do(t, c, http.MethodGet, s.URL+"/api/v1/openapi/card/info?card_id="+id, "", "")
	require.Equal(t, 200, info.Status)
	assert.JSONEq(t, `"25.50"`, string(mustField(t, info.Env.Data, "balance")))

	missing := do(t, c, http.MethodGet, s.URL+"/api/v1/openapi/card/info?card_id=card_nope", "", "")
	assert.Equal(t, 404, missing.Status)
	assert.Equal(t, "openapi_not_found", missing.Env.MessageKey)
	rmissing := do(t, c, http.MethodPost, s.URL+"/api/v1/openapi/card/recharge", "k-rch-2", `{"card_id":"card_nope","amount":"1.00"}`)
	assert.Equal(t, 404, rmissing.Status)

	poor := do(t, c, http.MethodPost, s.URL+"/api/v1/openapi/card/recharge", "k-rch-3", `{"card_id":"`+id+`","amount":"5000.00"}`)
	assert.Equal(t, 400, poor.Status)
	assert.Equal(t, "insufficient_balance", poor.Env.MessageKey)

	for i := range 4 {
		require.Equal(t, 200, apply(t, s, fmt.Sprintf("k-more-%d", i), applyBody).Status)
	}
	l := do(t, c, http.MethodGet, s.URL+"/api/v1/openapi/card/list?page=2&page_size=2", "", "")
	require.Equal(t, 200, l.Status)
	var page struct {
		Items    []map[string]any `json:"items"`
		Page     int              `json:"page"`
		PageSize int              `json:"page_size"`
		Total    int              `json:"total"`
	}
	require.NoError(t, json.Unmarshal(l.Env.Data, &page))
	assert.Len(t, page.Items, 2)
	assert.Equal(t, 2, page.Page)
	assert.Equal(t, 2, page.PageSize)
	assert.Equal(t, 5, page.Total)
	bad := do(t, c, http.MethodGet, s.URL+"/api/v1/openapi/card/list?page_size=1000", "", "")
	assert.Equal(t, 400, bad.Status)
}

func mustField(t *testing.T, data json.RawMessage, name string) json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(data, &m))
	return m[name]
}

func TestCatalogAndFee(t *testing.T) {
	s := coinepaytest.New(t, coinepaytest.WithCatalog(coinepaytest.Package{HeaderID: "h1", PackageID: "gold", Fee: amt("5.00")}))
	a := apply(t, s, "cat-1", `{"header_id":"h1","package_id":"gold"}`)
	require.Equal(t, 200, a.Status)
	assert.Equal(t, "995.00", s.Balance("demo-key").String())
	b := apply(t, s, "cat-2", `{"header_id":"h1","package_id":"silver"}`)
	assert.Equal(t, 400, b.Status)
	assert.Equal(t, "openapi_package_not_found", b.Env.MessageKey)
	c := apply(t, s, "cat-3", `{"header_id":"","package_id":"gold"}`)
	assert.Equal(t, "openapi_invalid_request", c.Env.MessageKey)

	f := coinepaytest.New(t, coinepaytest.WithFee(amt("2.50")))
	require.Equal(t, 200, apply(t, f, "fee-1", applyBody).Status)
	assert.Equal(t, "997.50", f.Balance("demo-key").String())
}

func TestBadInput(t *testing.T) {
	s := coinepaytest.New(t)
	c := s.HTTPClient()
	cases := []struct {
		name, method, path, body string
		status                   int
		key                      string
	}{
		{"malformed JSON", http.MethodPost, "/api/v1/openapi/card/apply", `{"header_id":`, 400, "openapi_invalid_json"},
		{"bad amount", http.MethodPost, "/api/v1/openapi/card/recharge", `{"card_id":"x","amount":"1.234"}`, 400, "openapi_invalid_request"},
		{"unknown path", http.MethodGet, "/api/v1/openapi/card/nope", "", 404, "openapi_not_found"},
		{"wrong method", http.MethodGet, "/api/v1/openapi/card/apply", "", 405, "openapi_method_not_allowed"},
		{"too large", http.MethodPost, "/api/v1/openapi/card/apply", `{"x":"` + strings.Repeat("a", 1<<20) + `"}`, 413, "openapi_body_too_large"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := do(t, c, tc.method, s.URL+tc.path, "bad-"+strings.ReplaceAll(tc.name, " ", "-"), tc.body)
			assert.Equal(t, tc.status, a.Status)
			assert.Equal(t, tc.status, a.Env.Code)
			assert.Equal(t, tc.key, a.Env.MessageKey)
			assert.NotEmpty(t, a.Header.Get("Date"))
		})
	}
	assert.Equal(t, 0, s.Ledger().Len())
}

func TestReset(t *testing.T) {
	s := coinepaytest.New(t)
	require.Equal(t, 200, apply(t, s, "r-1", applyBody).Status)
	require.NoError(t, s.AddFault(payoncetest.Rule{Fault: payoncetest.FaultHang, Path: "/never"}))
	s.Reset()
	assert.Equal(t, 0, s.Ledger().Len())
	assert.Empty(t, s.Requests())
	assert.Equal(t, "1000.00", s.Balance("demo-key").String())
	a := apply(t, s, "r-1", applyBody)
	assert.Empty(t, a.Header.Get(corekit.HeaderReplay), "stored keys are gone")
}

// SetCardStatus moves a card's status as card/info and card/list report
// it, and refuses a card the fake does not keep.
func TestSetCardStatus(t *testing.T) {
	srv := coinepaytest.New(t)
	c, err := srv.Client()
	require.NoError(t, err)
	card, err := c.Cards.Apply(t.Context(), &coinepay.ApplyRequest{HeaderID: "h1", PackageID: "p1"})
	require.NoError(t, err)
	require.Equal(t, "active", card.Status)

	require.NoError(t, srv.SetCardStatus(card.CardID, "frozen"))
	info, err := c.Cards.Info(t.Context(), card.CardID)
	require.NoError(t, err)
	assert.Equal(t, "frozen", info.Status)
	page, err := c.Cards.List(t.Context(), nil)
	require.NoError(t, err)
	require.Len(t, page.Cards, 1)
	assert.Equal(t, "frozen", page.Cards[0].Status)

	assert.ErrorContains(t, srv.SetCardStatus("card_nope", "frozen"), "no such card")
}
