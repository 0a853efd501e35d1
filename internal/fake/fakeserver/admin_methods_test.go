package fakeserver

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestAdminAnswersEachPathAndMethod pins the status and body of every
// admin path under the methods it takes and the ones it refuses.
func TestAdminAnswersEachPathAndMethod(t *testing.T) {
	big := strings.Repeat("x", MaxRequestBody+1)
	cases := []struct {
		method, path, body string
		balance            bool // a SetBalance hook is wired
		status             int
		want               string
	}{
		{"PUT", "operations", "", false, 405, `{"error":{"code":"method_not_allowed","message":"method not allowed"}}`},
		{"POST", "operations/1", "", false, 405, `{"error":{"code":"method_not_allowed","message":"method not allowed"}}`},
		{"GET", "operations/x", "", false, 404, `{"error":{"code":"not_found","message":"unknown operation"}}`},
		{"POST", "ledger", "", false, 405, `{"error":{"code":"method_not_allowed","message":"method not allowed"}}`},
		{"POST", "stats", "", false, 405, `{"error":{"code":"method_not_allowed","message":"method not allowed"}}`},
		{"DELETE", "requests", "", false, 405, `{"error":{"code":"method_not_allowed","message":"method not allowed"}}`},
		{"GET", "requests?provider=nope", "", false, 400, `{"error":{"code":"invalid_request","message":"provider: not a provider this server serves"}}`},
		{"PUT", "faults", "", false, 405, `{"error":{"code":"method_not_allowed","message":"method not allowed"}}`},
		{"POST", "faults", "{", false, 400, `{"error":{"code":"invalid_json","message":"malformed JSON: unexpected EOF"}}`},
		{"POST", "faults", `{"provider":"nope"}`, false, 400, `{"error":{"code":"invalid_rule","message":"provider: not a provider this server serves"}}`},
		{"DELETE", "faults?index=3", "", false, 404, `{"error":{"code":"not_found","message":"index: no rule at that position"}}`},
		{"DELETE", "faults", "", false, 200, `{"rules":[]}`},
		{"GET", "faults", "", false, 200, `{"rules":[]}`},
		{"DELETE", "clock", "", false, 405, `{"error":{"code":"method_not_allowed","message":"method not allowed"}}`},
		{"GET", "clock", "", false, 200, `{"now":"2030-01-01T00:00:00Z"}`},
		{"POST", "clock", `{}`, false, 400, `{"error":{"code":"invalid_request","message":"want advance or set"}}`},
		{"POST", "clock", `{"advance":"soon"}`, false, 400, `{"error":{"code":"invalid_duration","message":"advance: want a duration such as \"25h\""}}`},
		{"POST", "clock", `{"advance":"1h","x":1}`, false, 400, `{"error":{"code":"invalid_json","message":"malformed JSON: json: unknown field \"x\""}}`},
		{"GET", "balance", "", false, 404, `{"error":{"code":"not_found","message":"no Coinepay fake on this server"}}`},
		{"GET", "balance", "", true, 405, `{"error":{"code":"method_not_allowed","message":"method not allowed"}}`},
		{"POST", "balance", `{}`, true, 400, `{"error":{"code":"invalid_request","message":"api_key and amount are required"}}`},
		{"POST", "balance", `{"api_key":"k","amount":"-5"}`, true, 400, ""},
		{"POST", "balance", `{"api_key":"nope","amount":"5.00"}`, true, 404, `{"error":{"code":"not_found","message":"unknown api key"}}`},
		{"POST", "balance", `{"api_key":"k","amount":"5.00"}`, true, 200, `{"amount":"5.00","api_key":"k"}`},
		{"GET", "reset", "", false, 405, `{"error":{"code":"method_not_allowed","message":"method not allowed"}}`},
		{"POST", "reset/", "", false, 200, `{"reset":true}`},
		{"GET", "nope", "", false, 404, `{"error":{"code":"not_found","message":"unknown admin path"}}`},
		{"POST", "nope", big, false, 413, `{"error":{"code":"body_too_large","message":"request body over 1 MiB"}}`},
		{"GET", "operations/1", big, false, 413, `{"error":{"code":"body_too_large","message":"request body over 1 MiB"}}`},
	}
	for _, c := range cases {
		e := New(Options{Clock: NewFixedClock(testStart)})
		cfg := AdminConfig{}
		if c.balance {
			cfg.SetBalance = func(key string, _ Decimal) error {
				if key != "k" {
					return ErrUnknownAPIKey
				}
				return nil
			}
		}
		h := &adminHandler{e: e, cfg: cfg}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(c.method, AdminPrefix+c.path, strings.NewReader(c.body)))
		name := c.method + " " + c.path
		assert.Equal(t, c.status, w.Code, name)
		if c.want != "" {
			assert.Equal(t, c.want, w.Body.String(), name)
		}
		assert.Equal(t, "application/json; charset=utf-8", w.Header().Get("Content-Type"), name)
	}
}

var testStart = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
