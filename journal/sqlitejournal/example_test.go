package sqlitejournal_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/journal"
	"github.com/payonce/payonce/journal/sqlitejournal"
	"github.com/payonce/payonce/payoncetest"
)

// A worker's charge for order 42 loses its answer and the worker gives up.
// After a restart, Pending lists the operation and the worker resumes it by
// its reference: the same key goes out, and the customer pays once. Any
// later delivery of the job is answered from the journal, nothing sent.
func ExampleOpen() {
	srv := a55test.NewServer() // in a test: a55test.New(t)
	defer srv.Close()
	dir, _ := os.MkdirTemp("", "journal")
	defer os.RemoveAll(dir)
	ctx := context.Background()

	j, err := sqlitejournal.Open(ctx, filepath.Join(dir, "payonce.db"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer j.Close()
	policy := payoncetest.FastRetryPolicy()
	policy.MaxAttempts = 1
	client, _ := srv.Client(payonce.WithJournal(j), payonce.WithRetryPolicy(policy), payonce.WithExplicitKeys())
	req := a55test.Complete(&a55.ChargeCreateRequest{InstallmentValue: payoncetest.Amount("42.00"), Currency: payonce.BRL, TypeCharge: a55.TypeCreditCard,
		Card: &payonce.Card{Number: a55test.CardConfirms, HolderName: "TEST", ExpirationMonth: "12", ExpirationYear: "2099", CVV: "123"}})

	_ = srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultResetBeforeRead, Path: a55test.ChargePath, Count: 1}) // nothing ran
	_, err = client.Charges.Create(ctx, req, payonce.WithReference("order-42/charge"))
	fmt.Println("resumable:", payonce.IsResumable(err))

	// After the restart.
	pending, _ := j.Pending(ctx, journal.PendingQuery{Scope: client.Core().Scope()})
	for _, e := range pending {
		ch, err := client.Charges.Create(ctx, req, payonce.WithReference(e.Reference))
		fmt.Println("resumed:", e.Reference, ch.Status, err)
	}
	again, _ := client.Charges.Create(ctx, req, payonce.WithReference("order-42/charge"))
	fmt.Println("from the journal:", again.Meta.FromJournal)
	fmt.Println("charges executed:", srv.Ledger().Len())
	// Output:
	// resumable: true
	// resumed: order-42/charge confirmed <nil>
	// from the journal: true
	// charges executed: 1
}
