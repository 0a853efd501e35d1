package fakeserver_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/coinepay/coinepaytest"
	"github.com/payonce/payonce/payoncetest"
)

// FuzzFakeRequest sends arbitrary requests to both fakes' handlers: they
// must never panic, and every answer is JSON with a status a real server
// could send.
func FuzzFakeRequest(f *testing.F) {
	// A fixed clock before 12/2030: the seed corpus's card (seed-curl-charge)
	// does not expire, and neither does the token during a long run.
	a := a55test.NewServer(payoncetest.WithClock(payoncetest.NewFixedClock(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))))
	defer a.Close()
	c := coinepaytest.NewServer()
	defer c.Close()
	token := a.IssueToken()
	f.Add("POST", "/api/v1/bank/wallet/charge/", "k-1234567890abcdef", true, []byte(`{"amount":"100.00","currency":"BRL","type_charge":"credit_card","card":{"number":"4111111111111111","holder_name":"T","expiration_month":"12","expiration_year":"2099","cvv":"123"}}`))
	f.Add("POST", "/api/v1/bank/wallet/charge/refund/", "k-1234567890abcdef", true, []byte(`{"charge_uuid":"x"`))
	f.Add("GET", "/api/v1/bank/wallet/charge/?charge_uuid=%zz", "", true, []byte(nil))
	f.Add("POST", "/api/v1/openapi/card/apply", "openapi:apply:1", false, []byte(`{"header_id":"h","package_id":"p"}`))
	f.Add("PUT", "/api/v1/openapi/card/recharge", "bad key!", false, []byte(`{"card_id":1,"amount":-1}`))
	f.Add("POST", "/oauth2/token", "", true, []byte("grant_type=client_credentials&client_id=demo-client&client_secret=demo-secret"))
	f.Fuzz(func(t *testing.T, method, path, key string, useA55 bool, body []byte) {
		if !strings.HasPrefix(path, "/") || strings.ContainsAny(path, " \r\n\t#") || strings.HasPrefix(path, "/_fakepay") {
			return
		}
		if !validMethod(method) {
			return
		}
		req, err := http.NewRequest(method, "http://fake.test"+path, bytes.NewReader(body))
		if err != nil {
			return // not a request a client could send
		}
		req.RequestURI = path
		if key != "" && !strings.ContainsAny(key, "\r\n\x00") {
			req.Header.Set("Idempotency-Key", key)
		}
		h := c.Handler()
		if useA55 {
			h = a.Handler()
			req.Header.Set("Authorization", "Bearer "+token)
		} else {
			_ = c.Signer().Sign(req, body)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code < 200 || rec.Code > 599 {
			t.Fatalf("status %d", rec.Code)
		}
		if rec.Body.Len() > 0 && !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("%d answer is not JSON: %q", rec.Code, rec.Body.String())
		}
	})
}

func validMethod(m string) bool {
	switch m {
	case http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch, http.MethodHead:
		return true
	}
	return false
}
