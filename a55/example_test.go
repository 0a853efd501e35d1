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
	"github.com/payonce/payonce/journal"
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

// examplePayer is who pays in the examples.
func examplePayer() a55.Payer {
	return a55.Payer{Name: "João Silva", Email: "joao.silva@example.com", TaxID: "39999999999", CellPhone: "+5511988887777",
		Address: a55.Address{Street: "Av. Paulista", Number: "1000", Neighborhood: "Bela Vista", City: "São Paulo",
			State: "SP", PostalCode: "01310-100", Country: "BR"}}
}

func exampleCharge(number string, capture bool) *a55.ChargeCreateRequest {
	req := &a55.ChargeCreateRequest{
		// No merchant or wallet: the client's account gives them
		// (WithAccount; the fake's client acts for the fake's own).
		TypeCharge: a55.TypeCreditCard, Currency: payonce.BRL,
		InstallmentValue: mustAmount("100.00"), InstallmentCount: 1,
		DueDate: "2099-12-31", Description: "Order 42",
		Payer: examplePayer(),
		Card: &payonce.Card{Number: payonce.CardNumber(number), HolderName: "JOAO SILVA",
			ExpirationMonth: "12", ExpirationYear: "2099", CVV: "123"},
	}
	if !capture {
		req.Capture = a55.Bool(false)
	}
	return req
}

func ExampleNewClient() {
	// Client credentials for the sandbox (the default environment); the
	// token is fetched on first use, cached, and refreshed a minute before
	// it expires or after a 401.
	client, err := a55.NewClient(a55.ClientCredentials("my-client-id", "my-client-secret"),
		a55.WithRateLimit(), // at most A55's 100 requests a minute
	)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(client) // never shows the secret

	// Production is never a default: name the environment A55 gave the
	// credentials for. Its token URL comes with it.
	prod, err := a55.NewClient(a55.ClientCredentials("my-client-id", "my-client-secret"), a55.WithEnvironment(a55.Production))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(prod.Environment())

	// A base URL of another origin needs its token URL.
	_, err = a55.NewClient(a55.ClientCredentials("my-client-id", "my-client-secret"), payonce.WithBaseURL("https://a55-proxy.example"))
	fmt.Println(errors.Is(err, payonce.ErrInvalidConfig))
	// Output:
	// a55.Client{baseURL: https://sandbox.api.a55.tech (sandbox), auth: a55.authorizer{clientID: my-client-id, secret: [REDACTED], token: [REDACTED]}}
	// production true
	// true
}

func ExampleClient_WithAccount() {
	client, err := a55.NewClient(a55.ClientCredentials("my-client-id", "my-client-secret"))
	if err != nil {
		log.Fatal(err)
	}
	// Every charge, capture, refund, cancel, get and list of shop names
	// this merchant and wallet unless the request names its own.
	shop := client.WithAccount(a55.Account{MerchantID: "mer_1", WalletUUID: "wal_1"})
	fmt.Println(shop.Account().WalletUUID, shop.Core() == client.Core())

	// A request that ends up with no wallet is refused, nothing sent.
	_, err = client.Charges.Get(context.Background(), "ch_1", "")
	fmt.Println(err)
	// Output:
	// wal_1 true
	// payonce: a55 charges.get: invalid request: wallet_uuid: required: set it on the request or on the client (WithAccount)
}

func ExampleSplitTotal() {
	// 300.00 BRL in 3 instalments: A55 takes the instalment's value.
	v, err := a55.SplitTotal(mustAmount("300.00"), 3, payonce.BRL)
	fmt.Println(v, err)

	// 100.00 BRL does not split in 3: refused, never rounded.
	_, err = a55.SplitTotal(mustAmount("100.00"), 3, payonce.BRL)
	fmt.Println(err)
	// Output:
	// 100.00 <nil>
	// invalid amount: installment_value: a total of 100.00 BRL does not split into 3 equal instalments (installment_count) in BRL's 2 decimals: 99.99 or 100.02 would
}

func ExampleWalletsService_Create() {
	srv, client := exampleClient()
	defer srv.Close()

	w, err := client.Wallets.Create(context.Background(), &a55.WalletCreateRequest{
		EntityUUID: "550e8400-e29b-41d4-a716-446655440000", CustomerID: "cust_12345", Currency: payonce.BRL,
		Name: "Loja São Paulo", Email: "financeiro@loja-sp.com.br", CreateCredentials: true,
	})
	if err != nil {
		log.Fatal(err)
	}
	// The wallet's own OAuth client: from this live answer only.
	fmt.Println(w.Name, w.UUID != "", w.Credentials != nil, len(w.Meta.Key.String()))
	if w.Credentials != nil {
		printed := fmt.Sprint(w.Credentials) // never shows the secret
		fmt.Println(strings.Contains(printed, w.Credentials.ClientSecret), strings.Contains(printed, "[REDACTED]"))
	}
	// Output:
	// Loja São Paulo true true 36
	// false true
}

func ExampleChargesService_Create() {
	srv, client := exampleClient()
	defer srv.Close()
	ctx := context.Background()

	// The guide's story: the charge commits on the server, the answer is
	// lost on the way back; the client looks the charge up before it
	// sends the key again, and finds it.
	_ = srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: a55test.ChargePath, Count: 1})

	orderCreated := srv.Clock().Now() // stored with the order
	key, _ := payonce.NewKey(orderCreated, "550e8400-e29b-41d4-a716-446655440000")
	ch, err := client.Charges.Create(ctx, exampleCharge(a55test.CardConfirms, true), payonce.WithKey(key))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ch.Status, ch.InstallmentValue, ch.Currency)
	fmt.Println("key:", ch.Meta.Key, "attempts:", ch.Meta.Attempts)
	fmt.Println("charges executed:", srv.Ledger().Count(ch.Meta.Key.String()))
	// Output:
	// confirmed 100.00 BRL
	// key: 550e8400-e29b-41d4-a716-446655440000 attempts: 1
	// charges executed: 1
}

func ExampleChargesService_Create_pix() {
	srv := a55test.NewServer()
	defer srv.Close()
	// A journal, so that the order's reference names the charge.
	client, err := srv.Client(payonce.WithJournal(journal.NewMemory()))
	if err != nil {
		log.Fatal(err)
	}

	// PIX: the same flat body, type_charge pix, no card; the payer scans
	// the QR code or pastes the copy-and-paste text.
	// The merchant and wallet A55 gave with the credentials (here the
	// fake's own).
	shop := client.WithAccount(srv.Account())
	ch, err := shop.Charges.Create(context.Background(), &a55.ChargeCreateRequest{
		TypeCharge: a55.TypePix, Currency: payonce.BRL,
		InstallmentValue: mustAmount("150.00"), InstallmentCount: 1,
		DueDate: "2099-12-31", Description: "Order 43",
		Payer: examplePayer(),
	}, payonce.WithReference("order-43/pix"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ch.Status, ch.Pix.QRCode != "", ch.Pix.Payload != "")
	// Output: issued true true
}

func ExampleChargesService_Create_declined() {
	srv, client := exampleClient()
	defer srv.Close()

	_, err := client.Charges.Create(context.Background(), exampleCharge(a55test.CardDeclined, true))
	if errors.Is(err, a55.ErrCardDeclined) {
		_, ok := a55.ChargeFromError(err)
		fmt.Println("declined, the charge in the error:", ok)
		fmt.Println("card number in error:", strings.Contains(err.Error(), a55test.CardDeclined))
	}
	// Output:
	// declined, the charge in the error: true
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
	fmt.Println(ch.UUID == created.UUID, ch.Status)
	fmt.Println("rate limit:", ch.Meta.RateLimit.Limit, ch.Meta.RateLimit.Remaining)
	// Output:
	// true confirmed
	// rate limit: 100 98
}

func ExampleChargesService_Capture() {
	// Pre-authorise 100.00, then capture 80.00 of it.
	srv, client, ch := exampleCharged(false)
	defer srv.Close()
	ctx := context.Background()

	fmt.Println(ch.Status)
	ch, err := client.Charges.Capture(ctx, &a55.CaptureRequest{
		ChargeUUID: ch.UUID, WalletUUID: ch.WalletUUID, Amount: mustAmount("80.00"), Currency: payonce.BRL,
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ch.Status)

	// Capturing again is an illegal move, not a key conflict.
	_, err = client.Charges.Capture(ctx, &a55.CaptureRequest{ChargeUUID: ch.UUID, WalletUUID: ch.WalletUUID})
	fmt.Println(errors.Is(err, a55.ErrInvalidState))
	// Output:
	// confirmed
	// paid
	// true
}

func ExampleChargesService_Refund() {
	srv, client, ch := exampleCharged(true)
	defer srv.Close()
	ctx := context.Background()

	// A 503 on the way: the refund is retried with its key and runs once.
	_ = srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultErrorBeforeCommit,
		Path: a55.PathCharges + ch.UUID + "/refund/" + ch.WalletUUID + "/", Count: 1})
	ch, err := client.Charges.Refund(ctx, &a55.RefundRequest{
		ChargeUUID: ch.UUID, WalletUUID: ch.WalletUUID, Amount: mustAmount("30.00"), Currency: payonce.BRL, Reason: "one item returned",
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ch.Status, ch.AmountRemaining, "attempts:", ch.Meta.Attempts)

	// A zero Amount refunds what remains.
	ch, err = client.Charges.Refund(ctx, &a55.RefundRequest{ChargeUUID: ch.UUID, WalletUUID: ch.WalletUUID})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ch.Status)
	// Output:
	// confirmed 70.00 attempts: 2
	// refunded
}

func ExampleChargesService_Cancel() {
	srv, client, ch := exampleCharged(false)
	defer srv.Close()

	ch, err := client.Charges.Cancel(context.Background(), &a55.CancelRequest{ChargeUUID: ch.UUID, WalletUUID: ch.WalletUUID, Reason: "customer asked"})
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
