package a55test_test

// This file is the merchant test quoted in docs/testing.md, kept here so
// that it compiles and passes (readme_test.go checks the quote).

import (
	"context"
	"testing"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/payoncetest"
	"github.com/stretchr/testify/require"
)

// checkout is the merchant code under test: it charges an order once,
// keyed by the order, whatever the network does.
func checkout(ctx context.Context, client *a55.Client, orderID string, orderCreated time.Time, amount payonce.Amount, payer a55.Payer) (*a55.Charge, error) {
	// One key per order payment, the same on every run in any process; it
	// fits A55's 16-character minimum even for order "1". The order's
	// creation time is the key's: a run after the provider forgot the key
	// (24 h) is refused with ErrKeyExpired instead of charging again.
	key, err := payonce.NewKey(orderCreated, "order", orderID, "payment")
	if err != nil {
		return nil, err
	}
	// The merchant and wallet are the client's Account (WithAccount).
	return client.Charges.Create(ctx, &a55.ChargeCreateRequest{
		TypeCharge: a55.TypeCreditCard, Currency: payonce.BRL, InstallmentValue: amount, InstallmentCount: 1,
		DueDate: orderCreated.Format(time.DateOnly), Description: "order " + orderID, Payer: payer,
		Card: &payonce.Card{Number: "4111111111111111", HolderName: "TEST", ExpirationMonth: "12", ExpirationYear: "2099", CVV: "123"},
	}, payonce.WithKey(key))
}

func TestCheckoutChargesOnceWhenTheAnswerIsLost(t *testing.T) {
	srv := a55test.New(t) // closed by t.Cleanup
	// The client reads the fake's clock, retries after milliseconds and
	// acts for the fake's own account (srv.Account()).
	client, err := srv.Client()
	require.NoError(t, err)

	// The charge commits, then the connection drops before the answer.
	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: a55test.ChargePath, Count: 1}))

	amount, _ := payonce.ParseAmount("100.00")
	ch, err := checkout(context.Background(), client, "1", srv.Clock().Now(), amount, a55test.TestPayer())
	require.NoError(t, err)
	require.Equal(t, 1, ch.Meta.Attempts)                            // the SDK looked the charge up...
	require.True(t, srv.Ledger().ExecutedOnce(ch.Meta.Key.String())) // ...and the customer paid once
}
