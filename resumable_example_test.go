package payonce_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/payoncetest"
)

// A job whose charge failed with a resumable error is run again later, in
// any process: its key is built from the job and the job's creation time,
// so within the key's window the same operation resumes, and past it
// nothing is sent instead of a second charge under a new key.
func ExampleIsResumable() {
	srv := a55test.NewServer() // in a test: a55test.New(t)
	defer srv.Close()
	policy := payonce.FastRetryPolicy()
	policy.MaxAttempts = 1                                                               // the job queue retries, not the client
	client, _ := srv.Client(payonce.WithRetryPolicy(policy), payonce.WithExplicitKeys()) // a job never makes up a key
	ctx := context.Background()
	jobCreated := srv.Clock().Now() // stored with the job by the queue
	req := &a55.ChargeCreateRequest{Amount: payonce.MustParseAmount("10.00"), Currency: payonce.BRL, TypeCharge: a55.TypeCreditCard,
		Card: &payonce.Card{Number: a55test.CardConfirms, HolderName: "TEST", ExpirationMonth: "12", ExpirationYear: "2099", CVV: "123"}}
	runJob := func() error {
		// Every run names the same key with the same age.
		key, err := payonce.NewKey(jobCreated, "job-7", "charge", "order-42")
		if err != nil {
			return err
		}
		_, err = client.Charges.Create(ctx, req, payonce.WithKey(key))
		return err
	}

	// The answer is lost twice: the charge ran, the job is run again.
	_ = srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: a55test.ChargePath, Count: 2})
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
	// charges executed: 1
}
