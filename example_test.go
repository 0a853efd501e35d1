package payonce_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/payoncetest"
)

// A charge whose first answer is lost is retried with the same key; the
// server (here a tiny stand-in) replays the first result.
func ExampleClient_Do() {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, `{"charge_uuid":"ch_1","status":"confirmed"}`)
	}))
	defer srv.Close()

	policy := payonce.DefaultRetryPolicy()
	policy.InitialInterval, policy.MaxInterval = time.Millisecond, 5*time.Millisecond
	client, err := payonce.NewClient(payonce.WithBaseURL(srv.URL), payonce.WithRetryPolicy(policy),
		payonce.WithProvider(payonce.Provider{Name: "a55", KeyRules: payonce.KeyRules{Provider: "a55", MinLen: 16, MaxLen: 128, Window: payonce.DefaultKeyWindow}}))
	if err != nil {
		fmt.Println(err)
		return
	}
	// The order's key: its number and its creation time, the same on
	// every run of the job.
	orderKey, err := payonce.NewKey(time.Now(), "order-2026-000123")
	if err != nil {
		fmt.Println(err)
		return
	}
	var charge struct {
		ChargeUUID string `json:"charge_uuid"`
		Status     string `json:"status"`
	}
	meta, err := client.Do(context.Background(), &payonce.Request{
		Operation: "charges.create", Method: http.MethodPost, Path: "/api/v1/bank/wallet/charge/",
		Body: map[string]string{"amount": "100.00", "currency": "BRL"}, Keyed: true,
	}, &charge, payonce.WithKey(orderKey))
	fmt.Println(charge.ChargeUUID, charge.Status, meta.Key, meta.Attempts, err)
	// Output: ch_1 confirmed order-2026-000123 2 <nil>
}

// KeyOf lets a job queue resume a failed operation with the very same key
// and its age, so it runs once however often the job is retried; stored by
// its text form, the key resumes it in another process too.
func ExampleKeyOf() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
	}))
	defer srv.Close()
	policy := payonce.DefaultRetryPolicy()
	policy.MaxAttempts, policy.InitialInterval, policy.MaxInterval = 2, time.Millisecond, time.Millisecond
	client, _ := payonce.NewClient(payonce.WithBaseURL(srv.URL), payonce.WithRetryPolicy(policy))

	req := &payonce.Request{Operation: "cards.apply", Method: http.MethodPost, Path: "/apply", Body: map[string]string{"package_id": "p1"}, Keyed: true}
	key, _ := payonce.NewKey(time.Now(), "openapi:apply", "task-42")
	_, err := client.Do(context.Background(), req, nil, payonce.WithKey(key))
	fmt.Println(errors.Is(err, payonce.ErrRetriesExhausted), payonce.IsTemporary(err), payonce.KeyOf(err))

	// Later, maybe in another process: resume with the stored key.
	stored, _ := payonce.KeyOf(err).MarshalText()
	again, _ := payonce.ParseKey(string(stored))
	_, err = client.Do(context.Background(), req, nil, payonce.WithKey(again))
	fmt.Println(payonce.KeyOf(err))
	// Output:
	// true true openapi:apply:task-42
	// openapi:apply:task-42
}

// NewKey names a business operation: the same parts and creation time give
// the same key on every run of the job, in any process, valid for A55 (16
// characters at least) and Coinepay.
func ExampleNewKey() {
	orderCreated := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) // stored with the order
	key, _ := payonce.NewKey(orderCreated, "order", "2026-000123", "payment")
	fmt.Println(key, key.Created().Format(time.RFC3339))

	// Too short for A55, or characters outside Coinepay's set: a readable
	// prefix and a hash of the parts.
	short, _ := payonce.NewKey(orderCreated, "order", "1", "payment")
	fmt.Println(len(short.String()), short.String()[:16])

	_, err := payonce.NewKey(orderCreated, "order", "", "payment")
	fmt.Println(errors.Is(err, payonce.ErrKeyRequired))
	_, err = payonce.NewKey(time.Time{}, "order", "2026-000123", "payment")
	fmt.Println(errors.Is(err, payonce.ErrInvalidRequest))
	// Output:
	// order:2026-000123:payment 2026-03-01T12:00:00Z
	// 48 order:1:payment~
	// true
	// true
}

// Cards print masked; their JSON carries every field.
func ExampleCard() {
	card := payonce.Card{Number: "4111111111111111", HolderName: "TEST", ExpirationMonth: "12", ExpirationYear: "2030", CVV: "123"}
	fmt.Println(card)
	fmt.Printf("%+v\n", card)
	fmt.Println(card.Validate(time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)))
	// Output:
	// card ************1111 exp 12/2030
	// {Number:************1111 HolderName:TEST ExpirationMonth:12 ExpirationYear:2030 CVV:***}
	// <nil>
}

func ExampleParseAmount() {
	a, err := payonce.ParseAmount("100.5")
	fmt.Println(a, a.Minor(), err)
	_, err = payonce.ParseAmount("1.234")
	fmt.Println(errors.Is(err, payonce.ErrInvalidAmount))
	// Output:
	// 100.50 10050 <nil>
	// true
}

// A job whose charge failed with a resumable error is run again later, in
// any process: its key is built from the job and the job's creation time,
// so within the key's window the same operation resumes, and past it
// nothing is sent instead of a second charge under a new key.
func ExampleIsResumable() {
	srv := a55test.NewServer() // in a test: a55test.New(t)
	defer srv.Close()
	policy := payoncetest.FastRetryPolicy()
	policy.MaxAttempts = 1                                                               // the job queue retries, not the client
	client, _ := srv.Client(payonce.WithRetryPolicy(policy), payonce.WithExplicitKeys()) // a job never makes up a key
	ctx := context.Background()
	jobCreated := srv.Clock().Now() // stored with the job by the queue
	req := a55test.Complete(&a55.ChargeCreateRequest{InstallmentValue: payoncetest.Amount("10.00"), Currency: payonce.BRL, TypeCharge: a55.TypeCreditCard,
		Card: &payonce.Card{Number: a55test.CardConfirms, HolderName: "TEST", ExpirationMonth: "12", ExpirationYear: "2099", CVV: "123"}})
	runJob := func() error {
		// Every run names the same key with the same age.
		key, err := payonce.NewKey(jobCreated, "job-7", "charge", "order-42")
		if err != nil {
			return err
		}
		_, err = client.Charges.Create(ctx, req, payonce.WithKey(key))
		return err
	}

	// The connection is reset twice before the request is read: the
	// client's lookup finds no charge, the job is run again.
	_ = srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultResetBeforeRead, Path: a55test.ChargePath, Count: 2})
	err := runJob()
	fmt.Println("first run:", errors.Is(err, payonce.ErrTransport), payonce.IsResumable(err))
	err = runJob()
	fmt.Println("redelivered:", errors.Is(err, payonce.ErrTransport), payonce.IsResumable(err))

	srv.Clock().Advance(25 * time.Hour) // redelivered a day later
	err = runJob()
	fmt.Println("a day later:", errors.Is(err, payonce.ErrKeyExpired))
	fmt.Println("charges executed:", srv.Ledger().Len())
	// Output:
	// first run: true true
	// redelivered: true true
	// a day later: true
	// charges executed: 0
}
