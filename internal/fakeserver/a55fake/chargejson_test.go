package a55fake

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/payonce/payonce"
)

// TestChargeJSONIsEncodingJSON checks appendJSON against json.Marshal on
// charges of every shape: optional fields set or not, strings that
// encoding/json escapes (HTML, controls, U+2028, bad UTF-8), payers with
// white space and escapes, times in other zones.
func TestChargeJSONIsEncodingJSON(t *testing.T) {
	strs := []string{"", "plain", "100.00", "a<b>&c", "quote\"back\\slash", "tab\tnl\n\x01\x7f", "张伟", "line\u2028para\u2029",
		"bad\xffutf8", "é", "https://example.com/hook?a=1&b=2"}
	payers := []string{"", `{"name":"TEST"}`, "{ \"name\" : \"张伟\",\n\t\"email\":\"a<b>@example.com\" }", `null`,
		`{"x":"\u003c\"\\ \u2028","y":[1, 2.5e3, true, null, {"z" : "line` + "\u2028" + `"}]}`, ` "s & t" `, `[ ]`}
	zones := []*time.Location{time.UTC, time.FixedZone("x", 2*3600+30*60), time.FixedZone("y", -5*3600)}
	r := rand.New(rand.NewPCG(7, 8))
	pick := func() string { return strs[r.IntN(len(strs))] }
	amount := func() payonce.Amount {
		a, _ := payonce.AmountFromMinor([]int64{0, 1, 9, 10, 99, 100, 10000, 123456789, 1<<53 + 7}[r.IntN(9)])
		return a
	}
	for range 5000 {
		at := time.Unix(r.Int64N(1<<33), r.Int64N(1e9)*int64(r.IntN(2))).In(zones[r.IntN(len(zones))])
		c := &charge{UUID: pick(), WalletUUID: pick(), Status: pick(), Amount: amount(), CapturedAmount: amount(), RefundedAmount: amount(),
			Currency: pick(), TypeCharge: pick(), Capture: r.IntN(2) == 0, Description: pick(), DueDate: pick(),
			InstallmentCount: r.IntN(3) - 1, WebhookURL: pick(), CreatedAt: at, UpdatedAt: at.Add(time.Duration(r.Int64N(1e12))),
			IdempotencyKey: pick(), client: "c"}
		if p := payers[r.IntN(len(payers))]; p != "" {
			c.Payer = json.RawMessage(p)
		}
		if r.IntN(2) == 0 {
			c.Card = &cardView{Last4: pick(), HolderName: pick(), ExpirationMonth: pick(), ExpirationYear: pick()}
		}
		switch r.IntN(3) {
		case 0:
			c.Message = []ChargeMessage{}
		case 1:
			c.Message = []ChargeMessage{{Code: pick(), Source: pick(), Description: pick()}, {Code: pick()}}
		}
		if got, want := amountString(c.Amount), c.Amount.String(); got != want {
			t.Fatalf("amountString: %q, want %q", got, want)
		}
		want, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := c.appendJSON(nil)
		if !ok || string(got) != string(want) {
			t.Fatalf("appendJSON (ok %v):\n%s\njson.Marshal:\n%s", ok, got, want)
		}
		if resp := chargeAnswer(c); string(resp.Body) != string(want) || resp.Status != 200 {
			t.Fatalf("chargeAnswer: %d %s", resp.Status, resp.Body)
		}
	}
}

// TestChargeJSONFallsBack checks that what appendJSON cannot write (a
// time encoding/json refuses, a payer that is not JSON) is answered as
// encoding/json answers it.
func TestChargeJSONFallsBack(t *testing.T) {
	for _, c := range []*charge{
		{Message: []ChargeMessage{}, CreatedAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
		{Message: []ChargeMessage{}, Payer: json.RawMessage(`{"a":`)},
	} {
		if _, ok := c.appendJSON(nil); ok {
			t.Errorf("appendJSON wrote %+v", c)
		}
		resp := chargeAnswer(c)
		if resp.Status != 500 {
			t.Errorf("chargeAnswer: %d %s, want encoding/json's refusal", resp.Status, resp.Body)
		}
	}
}
