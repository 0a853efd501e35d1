package a55fake

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/payonce/payonce/internal/fake/fakeserver"
)

// An unknown member's name is shown bounded, printable, a card number in
// it masked.
func TestMemberName(t *testing.T) {
	for in, want := range map[string]string{
		"metadata":                    "metadata",
		"4111111111111111":            "************1111",
		"card 4111111111111111 x":     "card ************1111 x",
		"12345678901":                 "12345678901",
		"a\x00b":                      "(a name with control characters)",
		strings.Repeat("n", 70):       strings.Repeat("n", 64) + "...",
		"x" + strings.Repeat("9", 12): "x********9999",
	} {
		if got := memberName(in); got != want {
			t.Errorf("memberName(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzCreateCharge sends arbitrary bodies to both create endpoints and
// the moves: the fake never panics, answers JSON with a status of the
// reference, never a card number it was sent, and at most maxDetails
// details.
func FuzzCreateCharge(f *testing.F) {
	e := fakeserver.New(fakeserver.Options{Clock: fakeserver.NewFixedClock(time.Date(2030, 3, 14, 12, 0, 0, 0, time.UTC))})
	defer e.Close()
	fk := New(e, Config{RateLimit: -1})
	h := fk.Handler()
	tok := fk.IssueToken("demo-client")
	acct, _ := fk.AccountOf("demo-client")
	ref := `{"wallet_uuid":"` + acct.WalletUUID + `","merchant_id":"` + acct.MerchantUUID + `","payer_name":"J","payer_email":"j@x.io",` +
		`"payer_tax_id":"1","payer_cell_phone":"+55","installment_value":150.00,"installment_count":1,"currency":"BRL",` +
		`"due_date":"2030-12-31","description":"d","type_charge":"credit_card","payer_address":{"street":"s","city":"c","state":"SP","postal_code":"1"},` +
		`"card_number":"4024007153763191","card_name":"M","card_expiry_month":"12","card_expiry_year":"2031","card_cvv":"123"}`
	for _, seed := range []string{ref, strings.Replace(ref, `"credit_card"`, `"pix"`, 1),
		`{"amount":"100.00","currency":"BRL","type_charge":"credit_card","card":{"number":"4111111111111111","holder_name":"T","expiration_month":"12","expiration_year":"2099","cvv":"123"}}`,
		`{"items":[{"name":1},{"quantity":"x"}],"subscription":{"cycle":"daily"},"4111111111111111":1}`, `[]`, `{"a":`} {
		f.Add(0, []byte(seed))
		f.Add(1, []byte(seed))
	}
	paths := []string{"/api/v1/bank/wallet/charge/", "/api/v1/bank/wallet/charge/pix/", "/api/v1/bank/wallet/",
		"/api/v1/bank/wallet/charge/capture/", "/api/v1/bank/wallet/charge/refund/"}
	f.Fuzz(func(t *testing.T, which int, body []byte) {
		if which < 0 {
			which = -which
		}
		req := httptest.NewRequest(http.MethodPost, paths[which%len(paths)], bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		switch rec.Code {
		case 200, 400, 403, 404, 409, 422:
		default:
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
		if !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("not JSON: %q", rec.Body)
		}
		if bytes.Contains(body, []byte("4111111111111111")) && bytes.Contains(rec.Body.Bytes(), []byte("4111111111111111")) {
			t.Fatalf("the card number came back: %s", rec.Body)
		}
		var out struct {
			Error struct {
				Details []Detail `json:"details"`
			} `json:"error"`
		}
		_ = json.Unmarshal(rec.Body.Bytes(), &out)
		if len(out.Error.Details) > maxDetails {
			t.Fatalf("%d details", len(out.Error.Details))
		}
	})
}
