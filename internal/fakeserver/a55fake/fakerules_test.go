package a55fake_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce/internal/fakeserver"
	"github.com/payonce/payonce/internal/fakeserver/a55fake"
)

type harness struct {
	e   *fakeserver.Engine
	f   *a55fake.Fake
	srv *httptest.Server
	tok string
}

func newHarness(t *testing.T, clk *fakeserver.Clock) *harness {
	e := fakeserver.New(fakeserver.Options{Clock: clk})
	f := a55fake.New(e, a55fake.Config{})
	srv := httptest.NewServer(fakeserver.WithAdmin(e.AdminHandler(fakeserver.AdminConfig{}), f.Handler()))
	t.Cleanup(srv.Close)
	return &harness{e: e, f: f, srv: srv, tok: f.IssueToken("demo-client")}
}

func (h *harness) post(t *testing.T, path, key string, body []byte) *http.Response {
	req, err := http.NewRequest(http.MethodPost, h.srv.URL+path, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+h.tok)
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// A55 documents no cap on stored answers: a charge whose answer is over
// 256 KB is created once however often the same key and body come.
func TestA55LargeAnswerExecutesOnce(t *testing.T) {
	h := newHarness(t, nil)
	body, err := json.Marshal(map[string]any{"amount": "10.00", "currency": "BRL", "type_charge": "pix",
		"description": strings.Repeat("d", 300<<10)})
	require.NoError(t, err)
	const key = "large-answer-key-0001"
	for range 3 {
		assert.Equal(t, 200, h.post(t, "/api/v1/bank/wallet/charge/", key, body).StatusCode)
	}
	assert.Equal(t, 1, h.e.Ledger().Count(key))
	assert.Equal(t, 1, h.e.Stats().Executed)
}

// The fake's own key rules: 16 to 128 printable ASCII characters.
func TestA55KeyRules(t *testing.T) {
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

// The fake checks card numbers with its own Luhn: the sandbox cards pass,
// a changed digit fails.
func TestA55LuhnOwnCheck(t *testing.T) {
	h := newHarness(t, nil)
	charge := func(number string) int {
		body, _ := json.Marshal(map[string]any{"amount": "1.00", "currency": "BRL", "type_charge": "credit_card",
			"card": map[string]string{"number": number, "holder_name": "T", "expiration_month": "12", "expiration_year": "2099", "cvv": "123"}})
		return h.post(t, "/api/v1/bank/wallet/charge/", "", body).StatusCode
	}
	assert.Equal(t, 200, charge(a55fake.CardConfirms))
	assert.Equal(t, 200, charge("5555555555554444"))
	assert.Equal(t, 400, charge("4111111111111112"))
	assert.Equal(t, 400, charge("41111111111a1111"))
}

// Moving the clock back does not leave rate-limit hits in the future.
func TestA55RateLimitAfterClockMovedBack(t *testing.T) {
	clk := fakeserver.NewFixedClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	h := newHarness(t, clk)
	h.f.SetRateLimit(2, time.Minute)
	get := func() *http.Response {
		req, _ := http.NewRequest(http.MethodGet, h.srv.URL+"/api/v1/bank/wallet/charge/none", nil)
		req.Header.Set("Authorization", "Bearer "+h.tok)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp
	}
	get()
	get()
	require.Equal(t, 429, get().StatusCode)
	clk.Advance(-time.Hour)
	resp := get()
	assert.Equal(t, 404, resp.StatusCode, "hits after the new now are forgotten")
	assert.Equal(t, "1", resp.Header.Get("X-RateLimit-Remaining"))
}

// The fake checks currencies on its own: three upper-case letters.
func TestA55CurrencyOwnCheck(t *testing.T) {
	h := newHarness(t, nil)
	for cur, want := range map[string]int{"BRL": 200, "USD": 200, "brl": 400, "BR": 400, "BRLX": 400, "B1L": 400} {
		body, _ := json.Marshal(map[string]any{"amount": "1.00", "currency": cur, "type_charge": "pix"})
		assert.Equal(t, want, h.post(t, "/api/v1/bank/wallet/charge/", "", body).StatusCode, cur)
	}
}
