package a55_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/payoncetest"
)

// exampleClient starts the fake A55 API and a client for it (on the fake's
// clock, with millisecond retries). Real code calls a55.NewClient with its
// credentials.
func exampleClient() (*a55test.Server, *a55.Client) {
	srv := a55test.NewServer()
	client, err := srv.Client()
	if err != nil {
		log.Fatal(err)
	}
	return srv, client
}

// exampleCharged is a fake, a client of it and a charge of 100.00 it
// confirmed (capture) or only pre-authorised.
func exampleCharged(capture bool) (*a55test.Server, *a55.Client, *a55.Charge) {
	srv, client := exampleClient()
	ch, err := client.Charges.Create(context.Background(), exampleCharge(a55test.CardConfirms, capture))
	if err != nil {
		log.Fatal(err)
	}
	return srv, client, ch
}

func mustAmount(s string) payonce.Amount {
	a, err := payonce.ParseAmount(s)
	if err != nil {
		log.Fatal(err)
	}
	return a
}

func exampleCharge(number string, capture bool) *a55.ChargeCreateRequest {
	req := &a55.ChargeCreateRequest{
		Amount:     mustAmount("100.00"),
		Currency:   payonce.BRL,
		TypeCharge: a55.TypeCreditCard,
		Card: &payonce.Card{Number: payonce.CardNumber(number), HolderName: "TEST",
			ExpirationMonth: "12", ExpirationYear: "2099", CVV: "123"},
		Payer: &a55.Payer{Name: "张伟", Email: "zhangwei@example.com", Document: "12345678909", DocumentType: "CPF"},
	}
	if !capture {
		req.Capture = a55.Bool(false)
	}
	return req
}

func ExampleNewClient() {
	// Client credentials; the token is fetched on first use, cached, and
	// refreshed a minute before it expires or after a 401.
	client, err := a55.NewClient(a55.ClientCredentials("my-client-id", "my-client-secret"),
		a55.WithRateLimit(), // at most A55's 100 requests a minute
	)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(client) // never shows the secret

	// Or a fixed token, e.g. from A55_ACCESS_TOKEN.
	_, err = a55.NewClient(a55.AccessToken("token-from-env"), payonce.WithBaseURL(a55.ProductionURL))
	fmt.Println(err)
	// Output:
	// a55.Client{baseURL: https://sandbox.api.a55.tech, auth: a55.authorizer{clientID: my-client-id, secret: [REDACTED], token: [REDACTED]}}
	// <nil>
}

func ExampleWalletsService_Create() {
	srv, client := exampleClient()
	defer srv.Close()

	w, err := client.Wallets.Create(context.Background(), &a55.WalletCreateRequest{Name: "store-1"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(w.Name, w.Status, w.UUID != "", len(w.Meta.Key.String()))
	// Output: store-1 active true 36
}

func ExampleChargesService_Create() {
	srv, client := exampleClient()
	defer srv.Close()
	ctx := context.Background()

	// The guide's story: the charge commits on the server, the answer is
	// lost on the way back, the client retries with the same key.
	_ = srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: a55test.ChargePath, Count: 1})

	orderCreated := srv.Clock().Now() // stored with the order
	key, _ := payonce.NewKey(orderCreated, "550e8400-e29b-41d4-a716-446655440000")
	ch, err := client.Charges.Create(ctx, exampleCharge(a55test.CardConfirms, true), payonce.WithKey(key))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ch.Status, ch.Amount, ch.Currency)
	fmt.Println("key:", ch.Meta.Key, "attempts:", ch.Meta.Attempts)
	fmt.Println("charges executed:", srv.Ledger().Count(ch.Meta.Key.String()))
	// Output:
	// confirmed 100.00 BRL
	// key: 550e8400-e29b-41d4-a716-446655440000 attempts: 2
	// charges executed: 1
}

func ExampleChargesService_Create_declined() {
	srv, client := exampleClient()
	defer srv.Close()

	_, err := client.Charges.Create(context.Background(), exampleCharge(a55test.CardDeclined, true))
	if errors.Is(err, a55.ErrCardDeclined) {
		ch, _ := a55.ChargeFromError(err)
		fmt.Println("declined:", ch.Status, ch.Messages.Codes())
		fmt.Println("card number in error:", strings.Contains(err.Error(), a55test.CardDeclined))
	}
	// Output:
	// declined: error [CARD_DECLINED]
	// card number in error: false
}

func ExampleChargesService_Create_resume() {
	srv, client := exampleClient()
	defer srv.Close()
	ctx := context.Background()

	// Every attempt is rate limited: the call gives up, but the error keeps
	// the operation's key.
	_ = srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultRateLimit, Path: a55test.ChargePath, Count: 5})
	_, err := client.Charges.Create(ctx, exampleCharge(a55test.CardConfirms, true))
	fmt.Println(errors.Is(err, payonce.ErrRateLimited), payonce.IsTemporary(err))

	// Later (a job queue retry): resume the same operation, same key.
	ch, err := client.Charges.Create(ctx, exampleCharge(a55test.CardConfirms, true), payonce.WithKey(payonce.KeyOf(err)))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ch.Status, srv.Ledger().Count(ch.Meta.Key.String()))
	// Output:
	// true true
	// confirmed 1
}

func ExampleChargesService_Get() {
	srv, client, created := exampleCharged(true)
	defer srv.Close()
	ctx := context.Background()

	ch, err := client.Charges.Get(ctx, created.UUID, created.WalletUUID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ch.UUID == created.UUID, ch.Status, ch.Card.Last4)
	fmt.Println("rate limit:", ch.Meta.RateLimit.Limit, ch.Meta.RateLimit.Remaining)
	// Output:
	// true confirmed 1111
	// rate limit: 100 98
}

func ExampleChargesService_Capture() {
	// Pre-authorise 100.00, then capture 80.00 of it.
	srv, client, ch := exampleCharged(false)
	defer srv.Close()
	ctx := context.Background()

	fmt.Println(ch.Status)
	ch, err := client.Charges.Capture(ctx, &a55.CaptureRequest{
		ChargeUUID: ch.UUID, WalletUUID: ch.WalletUUID, Amount: mustAmount("80.00"),
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ch.Status, ch.CapturedAmount)

	// Capturing again is an illegal move, not a key conflict.
	_, err = client.Charges.Capture(ctx, &a55.CaptureRequest{ChargeUUID: ch.UUID})
	fmt.Println(errors.Is(err, a55.ErrInvalidState))
	// Output:
	// pending
	// confirmed 80.00
	// true
}

func ExampleChargesService_Refund() {
	srv, client, ch := exampleCharged(true)
	defer srv.Close()
	ctx := context.Background()

	// A 503 on the way: the refund is retried with its key and runs once.
	_ = srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultErrorBeforeCommit, Path: a55test.RefundPath, Count: 1})
	ch, err := client.Charges.Refund(ctx, &a55.RefundRequest{
		ChargeUUID: ch.UUID, WalletUUID: ch.WalletUUID, Amount: mustAmount("30.00"), Reason: "one item returned",
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ch.Status, ch.RefundedAmount, "attempts:", ch.Meta.Attempts)

	// A zero Amount refunds what remains.
	ch, err = client.Charges.Refund(ctx, &a55.RefundRequest{ChargeUUID: ch.UUID, WalletUUID: ch.WalletUUID})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ch.Status, ch.RefundedAmount)
	// Output:
	// confirmed 30.00 attempts: 2
	// refunded 100.00
}

func ExampleChargesService_Cancel() {
	srv, client, ch := exampleCharged(false)
	defer srv.Close()

	ch, err := client.Charges.Cancel(context.Background(), &a55.CancelRequest{ChargeUUID: ch.UUID, Reason: "customer asked"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ch.Status)
	// Output: canceled
}

func ExampleWebhookVerifier_Parse() {
	const secret = "whsec_example"
	v, err := a55.NewWebhookVerifier(secret, nil)
	if err != nil {
		log.Fatal(err)
	}
	processed := map[string]bool{} // use a unique index in real code
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ev, err := v.Parse(r)
		if err != nil {
			http.Error(w, "invalid signature", http.StatusUnauthorized)
			return
		}
		// Deliveries are at least once: deduplicate on charge_uuid (+ status).
		if k := ev.ChargeUUID + "/" + string(ev.Status); !processed[k] {
			processed[k] = true
			fmt.Println("charge", ev.ChargeUUID, ev.Status)
		}
		w.WriteHeader(http.StatusNoContent)
	})

	body := []byte(`{"charge_uuid":"c-1","status":"confirmed","amount":"100.00"}`)
	for range 2 { // the same delivery twice
		req, _ := a55.NewSignedWebhookRequest("https://merchant.example/a55", secret, time.Now(), body)
		handler.ServeHTTP(httptest.NewRecorder(), req)
	}
	forged, _ := a55.NewSignedWebhookRequest("https://merchant.example/a55", "guess", time.Now(), body)
	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, forged)
	fmt.Println(rec.Code)
	// Output:
	// charge c-1 confirmed
	// 401
}
