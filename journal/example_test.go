package journal_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/journal/sqlitejournal"
	"github.com/payonce/payonce/payoncetest"
)

// A charge named "order-42/charge" runs once, whatever runs it again: a
// second call, another process, 25 hours later. The second answer comes
// from the journal and nothing is sent.
func Example() {
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
	client, err := srv.Client(payonce.WithJournal(j), payoncetest.ClientClock(srv.Clock().Now))
	if err != nil {
		fmt.Println(err)
		return
	}
	amount, _ := payonce.ParseAmount("100.00")
	req := a55test.Complete(&a55.ChargeCreateRequest{InstallmentValue: amount, Currency: payonce.BRL, TypeCharge: a55.TypeCreditCard,
		Card: &payonce.Card{Number: "4111111111111111", HolderName: "TEST", ExpirationMonth: "12", ExpirationYear: "2099", CVV: "123"}})

	first, err := client.Charges.Create(ctx, req, payonce.WithReference("order-42/charge"))
	if err != nil {
		fmt.Println(err)
		return
	}
	srv.Clock().Advance(25 * time.Hour) // the provider has forgotten the key
	again, err := client.Charges.Create(ctx, req, payonce.WithReference("order-42/charge"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("same charge:", first.UUID == again.UUID)
	fmt.Println("from the journal:", again.Meta.FromJournal)
	fmt.Println("charges executed:", srv.Ledger().Len())
	// Output:
	// same charge: true
	// from the journal: true
	// charges executed: 1
}
