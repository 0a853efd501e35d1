package a55test_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/payonce/payonce/internal/corekit"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/payoncetest"
)

// A merchant test: the charge succeeds but its answer is lost; the retry
// with the same Idempotency-Key returns the original charge, and the ledger
// shows that the customer was charged exactly once.
func Example() {
	srv := a55test.NewServer() // in a test: a55test.New(t)
	defer srv.Close()
	_ = srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: a55test.ChargePath, Count: 1})

	key := "550e8400-e29b-41d4-a716-446655440000"
	send := func() (*http.Response, error) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+a55test.ChargePath, strings.NewReader(
			`{"amount":"100.00","currency":"BRL","type_charge":"credit_card",`+
				`"card":{"number":"4111111111111111","holder_name":"TEST","expiration_month":"12","expiration_year":"2099","cvv":"123"}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(corekit.HeaderIdempotencyKey, key)
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

// A merchant's webhook receiver under test: it verifies the signature,
// handles each (charge, status) once and answers 2xx to duplicates. The
// fake's first delivery meets a 500, the retry one minute later (on the
// fake clock) gets through, and a resent webhook is recognised as a
// duplicate.
func ExampleServer_DeliverDueWebhooks() {
	srv := a55test.NewServer(payoncetest.WithClock(payoncetest.NewFixedClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))))
	defer srv.Close()                    // in a test: a55test.New(t, ...)
	verifier, _ := srv.WebhookVerifier() // the fake's secret, the fake's clock

	var mu sync.Mutex
	handled := map[string]bool{} // in production: a unique index on (charge_uuid, status)
	calls := 0
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls == 1 {
			http.Error(w, "database down", http.StatusInternalServerError)
			return
		}
		ev, err := verifier.Parse(r)
		if err != nil {
			http.Error(w, "invalid signature", http.StatusUnauthorized)
			return
		}
		id := ev.ChargeUUID + "/" + string(ev.Status)
		if handled[id] {
			fmt.Println("duplicate", ev.Status, "acknowledged")
			w.WriteHeader(http.StatusOK)
			return
		}
		handled[id] = true
		fmt.Println("order paid:", ev.Status)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer receiver.Close()

	client, _ := srv.Client(payonce.WithRetryPolicy(payoncetest.FastRetryPolicy()))
	amount, _ := payonce.ParseAmount("100.00")
	ch, err := client.Charges.Create(context.Background(), a55test.Complete(&a55.ChargeCreateRequest{
		InstallmentValue: amount, Currency: payonce.BRL, TypeCharge: a55.TypeCreditCard, WebhookURL: receiver.URL + "/hooks/a55",
		Card: &payonce.Card{Number: a55test.CardConfirms, HolderName: "TEST", ExpirationMonth: "12", ExpirationYear: "2099", CVV: "123"},
	}))
	if err != nil {
		fmt.Println(err)
		return
	}
	srv.DeliverDueWebhooks() // the first attempt: 500
	d := srv.WebhookDeliveriesFor(ch.UUID)[0]
	fmt.Println(d.State, d.Attempts[0].StatusCode, "next in", d.NextAttempt.Sub(d.Attempts[0].At))

	srv.Clock().Advance(time.Minute)
	srv.DeliverDueWebhooks() // the retry
	d = srv.WebhookDeliveriesFor(ch.UUID)[0]
	fmt.Println(d.State, "after", len(d.Attempts), "attempts")

	_, _ = srv.ResendWebhook(ch.UUID) // at least once: the same event again
	srv.DeliverDueWebhooks()
	// Output:
	// pending 500 next in 1m0s
	// order paid: confirmed
	// delivered after 2 attempts
	// duplicate confirmed acknowledged
}
