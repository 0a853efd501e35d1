package payoncetest_test

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/payonce/payonce/internal/corekit"

	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/coinepay"
	"github.com/payonce/payonce/coinepay/coinepaytest"
	"github.com/payonce/payonce/payoncetest"
)

// One vocabulary for both fakes: a clock that drives both, the same fault
// rule on each, and their ledgers and totals read the same way.
func Example() {
	clk := payoncetest.NewFixedClock(time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC))
	a55srv := a55test.NewServer(payoncetest.WithClock(clk)) // in a test: a55test.New(t, ...)
	defer a55srv.Close()
	cpsrv := coinepaytest.NewServer(payoncetest.WithClock(clk))
	defer cpsrv.Close()

	send := func(c *http.Client, url, key, body string) int {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(corekit.HeaderIdempotencyKey, key)
		resp, err := c.Do(req)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	fakes := []struct {
		fake      *payoncetest.Fake
		http      *http.Client
		url, body string
	}{
		{a55srv.Fake, a55srv.HTTPClient(), a55srv.URL + a55test.ChargePath, `{"amount":"10.00","currency":"BRL","type_charge":"pix"}`},
		{cpsrv.Fake, cpsrv.HTTPClient(), cpsrv.URL + coinepay.PathCardApply, `{"header_id":"h1","package_id":"p1"}`},
	}
	for _, f := range fakes {
		_ = f.fake.AddFault(payoncetest.Rule{Fault: payoncetest.FaultErrorBeforeCommit, Status: 503, Count: 1})
		const key = "order-42-payment-0001"
		first, retry := send(f.http, f.url, key, f.body), send(f.http, f.url, key, f.body)
		fmt.Println(first, retry, f.fake.Ledger().ExecutedOnce(key), f.fake.Stats().Faults)
	}
	clk.Advance(time.Hour)
	fmt.Println(a55srv.Clock().Now().Equal(cpsrv.Clock().Now()), cpsrv.Clock())
	// Output:
	// 503 200 true 1
	// 503 200 true 1
	// true payoncetest.Clock{2030-01-01T13:00:00Z}
}
