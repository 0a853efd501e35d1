package coinepay_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/coinepay"
	"github.com/payonce/payonce/coinepay/coinepaytest"
	"github.com/payonce/payonce/payoncetest"
)

// Issue a card, fund it and read it back. The fake stands in for the
// Coinepay OpenAPI; against the real one pass its base URL with
// payonce.WithBaseURL.
func Example() {
	srv := coinepaytest.NewServer()
	defer srv.Close()

	client, err := coinepay.NewClient(srv.APIKey(), srv.Secret(), payonce.WithBaseURL(srv.URL))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()

	card, err := client.Cards.Apply(ctx, &coinepay.ApplyRequest{HeaderID: "hdr_1", PackageID: "pkg_basic"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("fee:", card.Fee, "balance left:", card.AccountBalance)

	amount, _ := payonce.ParseAmount("25.50")
	rc, err := client.Cards.Recharge(ctx, &coinepay.RechargeRequest{CardID: card.CardID, Amount: amount})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("recharged:", rc.Amount, "card balance:", rc.CardBalance)

	info, err := client.Cards.Info(ctx, card.CardID)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("status:", info.Status, "card balance:", info.Balance, "key sent:", !info.Meta.Key.IsZero())
	// Output:
	// fee: 1.00 balance left: 999.00
	// recharged: 25.50 card balance: 25.50
	// status: active card balance: 25.50 key sent: false
}

// The answer of the first attempt is lost after the card was issued. The
// client retries with the same key and a new signature; the server replays
// the stored answer: one card, marked as a replay.
func ExampleCardsService_Apply_lostResponse() {
	srv := coinepaytest.NewServer()
	defer srv.Close()
	_ = srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: coinepay.PathCardApply, Count: 1})

	client, _ := srv.Client()         // the fake's clock, millisecond retries
	orderCreated := srv.Clock().Now() // stored with the order
	key, _ := payonce.NewKey(orderCreated, "order", "1001", "card-apply")
	card, err := client.Cards.Apply(context.Background(), &coinepay.ApplyRequest{HeaderID: "hdr_1", PackageID: "pkg_basic"},
		payonce.WithKey(key))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("key:", card.Meta.Key)
	fmt.Println("attempts:", card.Meta.Attempts, "replayed:", card.Meta.Replayed)
	fmt.Println("cards issued:", srv.Ledger().Count(key.String()))
	// Output:
	// key: order:1001:card-apply
	// attempts: 2 replayed: true
	// cards issued: 1
}

// A task queue runs a job again, in a new process, after a failure. The
// key is built from the task and its creation time, so however many runs there are, Coinepay
// opens the card once; the job's creation time is the key's, so a run
// after Coinepay forgot the key (24 h) is refused with ErrKeyExpired
// instead of opening a second card (a new process cannot know the key's
// age otherwise).
func ExampleCardsService_Apply_taskKey() {
	srv := coinepaytest.NewServer()
	defer srv.Close()
	// The first run's answer is lost.
	_ = srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: coinepay.PathCardApply, Count: 1})
	jobCreated := srv.Clock().Now() // stored with the job by the queue

	openCardTask := func(taskID string) error {
		policy := payonce.DefaultRetryPolicy()
		policy.MaxAttempts = 1 // in this sketch the queue, not the client, retries
		client, err := srv.Client(payonce.WithRetryPolicy(policy), payonce.WithExplicitKeys())
		if err != nil {
			return err
		}
		key, err := payonce.NewKey(jobCreated, "openapi:apply", taskID)
		if err != nil {
			return err
		}
		_, err = client.Cards.Apply(context.Background(), &coinepay.ApplyRequest{HeaderID: "hdr_1", PackageID: "pkg_basic"}, payonce.WithKey(key))
		return err
	}
	for run := 1; run <= 3; run++ {
		err := openCardTask("task-0000000042")
		fmt.Printf("run %d: ok=%v temporary=%v\n", run, err == nil, payonce.IsTemporary(err))
		if err == nil {
			break
		}
	}
	fmt.Println("cards issued:", srv.Ledger().Count("openapi:apply:task-0000000042"))
	// Output:
	// run 1: ok=false temporary=true
	// run 2: ok=true temporary=false
	// cards issued: 1
}

// insufficient_balance is not stored by the server: after a top-up the
// same operation (same key, same body) runs and succeeds.
func ExampleCardsService_Recharge_insufficientBalance() {
	srv := coinepaytest.NewServer()
	defer srv.Close()
	client, _ := srv.Client()
	ctx := context.Background()
	card, _ := client.Cards.Apply(ctx, &coinepay.ApplyRequest{HeaderID: "hdr_1", PackageID: "pkg_basic"})

	amount, _ := payonce.ParseAmount("5000.00")
	req := &coinepay.RechargeRequest{CardID: card.CardID, Amount: amount}
	_, err := client.Cards.Recharge(ctx, req)
	var apiErr *payonce.APIError
	if errors.As(err, &apiErr) {
		fmt.Println(errors.Is(err, coinepay.ErrInsufficientBalance), apiErr.StatusCode, apiErr.Code, apiErr.Message)
	}

	topUp, _ := payonce.ParseAmount("6000.00")
	srv.SetBalance(srv.APIKey(), topUp)
	rc, err := client.Cards.Recharge(ctx, req, payonce.WithKey(payonce.KeyOf(err)))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("same key:", rc.Meta.Key == apiErr.Key, "card balance:", rc.CardBalance)
	// Output:
	// true 400 insufficient_balance 余额不足
	// same key: true card balance: 5000.00
}

// All pages through every card.
func ExampleCardsService_All() {
	srv := coinepaytest.NewServer()
	defer srv.Close()
	client, _ := srv.Client()
	ctx := context.Background()
	for range 5 {
		_, _ = client.Cards.Apply(ctx, &coinepay.ApplyRequest{HeaderID: "hdr_1", PackageID: "pkg_basic"})
	}
	n := 0
	for _, err := range client.Cards.All(ctx, &coinepay.ListOptions{PageSize: 2}) {
		if err != nil {
			fmt.Println(err)
			return
		}
		n++
	}
	fmt.Println("cards:", n)
	// Output:
	// cards: 5
}

// A job that forgets its key would issue a new card on every redelivery
// (each run would make up a random key). With payonce.WithExplicitKeys the
// client refuses it on the first delivery, nothing sent; the key built
// from the job makes every redelivery the same operation.
func Example_explicitKeys() {
	srv := coinepaytest.NewServer()
	defer srv.Close()
	client, _ := srv.Client(payonce.WithExplicitKeys())
	req := &coinepay.ApplyRequest{HeaderID: "hdr_1", PackageID: "pkg_basic"}

	_, err := client.Cards.Apply(context.Background(), req) // the key is forgotten
	fmt.Println("refused:", errors.Is(err, payonce.ErrKeyRequired), "requests sent:", len(srv.Requests()))

	jobCreated := srv.Clock().Now() // stored with the job by the queue
	key, _ := payonce.NewKey(jobCreated, "openapi:apply", "job-42")
	for range 2 { // delivered twice
		if _, err := client.Cards.Apply(context.Background(), req, payonce.WithKey(key)); err != nil {
			fmt.Println(err)
			return
		}
	}
	fmt.Println("cards issued:", srv.Ledger().Count("openapi:apply:job-42"))
	// Output:
	// refused: true requests sent: 0
	// cards issued: 1
}
