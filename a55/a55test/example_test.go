package a55test_test

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55/a55test"
)

// A merchant test: the charge succeeds but its answer is lost; the retry
// with the same Idempotency-Key returns the original charge, and the ledger
// shows that the customer was charged exactly once.
func Example() {
	srv := a55test.NewServer() // in a test: a55test.New(t)
	defer srv.Close()
	_ = srv.AddFault(a55test.Rule{Fault: a55test.FaultDropAfterCommit, Path: a55test.ChargePath, Count: 1})

	key := "550e8400-e29b-41d4-a716-446655440000"
	send := func() (*http.Response, error) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+a55test.ChargePath, strings.NewReader(
			`{"amount":"100.00","currency":"BRL","type_charge":"credit_card",`+
				`"card":{"number":"4111111111111111","holder_name":"TEST","expiration_month":"12","expiration_year":"2099","cvv":"123"}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(payonce.HeaderIdempotencyKey, key)
		req.Close = true                // a fresh connection per attempt
		return srv.HTTPClient().Do(req) // adds a bearer token
	}
	_, err := send()
	fmt.Println("first attempt lost:", err != nil)
	resp, err := send()
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	fmt.Println("retry:", resp.StatusCode)
	fmt.Println("charged exactly once:", srv.Ledger().ExecutedOnce(key))
	// Output:
	// first attempt lost: true
	// retry: 200
	// charged exactly once: true
}
