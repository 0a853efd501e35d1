package coinepaytest_test

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/payonce/payonce/internal/corekit"

	"github.com/payonce/payonce/coinepay/coinepaytest"
	"github.com/payonce/payonce/payoncetest"
)

// A merchant test: the first answer to card/apply is lost after the card
// was issued; the retry with the same Idempotency-Key gets the stored
// answer, and the ledger shows one card.
func Example() {
	srv := coinepaytest.NewServer() // in a test: coinepaytest.New(t)
	defer srv.Close()
	_ = srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: "/api/v1/openapi/card/apply", Count: 1})

	key := "openapi:apply:order-42"
	send := func() (*http.Response, error) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/v1/openapi/card/apply",
			strings.NewReader(`{"header_id":"h1","package_id":"p1"}`))
		req.Header.Set(corekit.HeaderIdempotencyKey, key)
		// A fresh connection per attempt; HTTPClient signs each attempt anew.
		req.Close = true
		return srv.HTTPClient().Do(req)
	}
	_, err := send()
	fmt.Println("first attempt lost:", err != nil)
	resp, err := send()
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	fmt.Println("retry:", resp.StatusCode, "replay:", resp.Header.Get("X-Idempotent-Replay"))
	fmt.Println("cards issued:", srv.Ledger().Count(key))
	fmt.Println("balance:", srv.Balance(srv.APIKey()))
	// Output:
	// first attempt lost: true
	// retry: 200 replay: true
	// cards issued: 1
	// balance: 999.00
}
