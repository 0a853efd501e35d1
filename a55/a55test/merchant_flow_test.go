package a55test_test

// A merchant's whole payment flow against the fake, the way an integration
// suite would write it: every step survives a lost answer and runs once.

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/internal/testsupport/keytest"
	"github.com/payonce/payonce/journal/sqlitejournal"
	"github.com/payonce/payonce/payoncetest"
)

func flowCharge(amount string, capture bool) *a55.ChargeCreateRequest {
	return a55test.Complete(&a55.ChargeCreateRequest{
		InstallmentValue: payoncetest.Amount(amount), Currency: payonce.BRL, TypeCharge: a55.TypeCreditCard,
		Capture: a55.Bool(capture),
		Card:    &payonce.Card{Number: a55test.CardConfirms, HolderName: "TEST", ExpirationMonth: "12", ExpirationYear: "2099", CVV: "123"},
	})
}

// dropNext makes the next request on path commit and lose its answer.
func dropNext(t *testing.T, srv *a55test.Server, path string) {
	t.Helper()
	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: path, Count: 1}))
}

func TestMerchantFlowEveryStepRunsOnce(t *testing.T) {
	ctx := context.Background()
	srv := a55test.New(t)
	client, err := srv.Client()
	require.NoError(t, err)

	// Pre-authorise order 7 under its own key; the answer is lost.
	key, err := payonce.NewKey(srv.Clock().Now(), "order", "7", "payment")
	require.NoError(t, err)
	dropNext(t, srv, a55test.ChargePath)
	auth, err := client.Charges.Create(ctx, flowCharge("30.00", false), payonce.WithKey(key))
	require.NoError(t, err)
	assert.Equal(t, key, auth.Meta.Key)
	assert.Equal(t, 1, auth.Meta.Attempts, "looked up, not sent again")
	assert.Equal(t, a55.StatusConfirmed, auth.Status, "authorised: confirmed, nothing captured (pending is a 3DS challenge)")
	assert.True(t, srv.Ledger().ExecutedOnce(key.String()), "authorised once")

	// Capture, then refund part of it: each answer lost, each run once.
	dropNext(t, srv, a55test.CapturePath)
	cp, err := client.Charges.Capture(ctx, &a55.CaptureRequest{ChargeUUID: auth.UUID})
	require.NoError(t, err)
	assert.Equal(t, a55.StatusPaid, cp.Status)
	assert.True(t, srv.Ledger().ExecutedOnce(cp.Meta.Key.String()), "captured once")

	dropNext(t, srv, a55.PathCharges+auth.UUID+"/refund/"+srv.WalletUUID()+"/")
	rf, err := client.Charges.Refund(ctx, &a55.RefundRequest{ChargeUUID: auth.UUID, Amount: payoncetest.Amount("10.00")})
	require.NoError(t, err)
	assert.False(t, rf.AmountRemaining.IsZero(), "a partial refund leaves the rest")
	assert.True(t, srv.Ledger().ExecutedOnce(rf.Meta.Key.String()), "refunded once")

	// Refunding more than remains is a final, typed error that keeps its key.
	_, err = client.Charges.Refund(ctx, &a55.RefundRequest{ChargeUUID: auth.UUID, Amount: payoncetest.Amount("25.00")})
	require.ErrorIs(t, err, a55.ErrInvalidState)
	assert.False(t, payonce.IsResumable(err))
	assert.NotEmpty(t, payonce.KeyOf(err).String())

	// Cancel another pre-authorisation; capturing it afterwards is refused.
	other, err := client.Charges.Create(ctx, flowCharge("5.00", false))
	require.NoError(t, err)
	dropNext(t, srv, a55.PathCharges+other.UUID+"/cancel/"+srv.WalletUUID()+"/")
	cn, err := client.Charges.Cancel(ctx, &a55.CancelRequest{ChargeUUID: other.UUID, Reason: "customer"})
	require.NoError(t, err)
	assert.Equal(t, a55.StatusCanceled, cn.Status)
	assert.True(t, srv.Ledger().ExecutedOnce(cn.Meta.Key.String()), "canceled once")
	_, err = client.Charges.Capture(ctx, &a55.CaptureRequest{ChargeUUID: other.UUID})
	require.ErrorIs(t, err, a55.ErrInvalidState)

	// The order key again with another amount: a caller bug, a typed 409.
	_, err = client.Charges.Create(ctx, flowCharge("31.00", false), payonce.WithKey(key))
	require.ErrorIs(t, err, payonce.ErrIdempotencyConflict)
	var apiErr *payonce.APIError
	require.True(t, errors.As(err, &apiErr))
	assert.Equal(t, 409, apiErr.StatusCode)
	assert.Equal(t, key, payonce.KeyOf(err))
	assert.False(t, payonce.IsResumable(err))
	assert.Equal(t, 1, srv.Ledger().Count(key.String()), "nothing ran")

	// Invalid input is refused before sending, typed, and still names the key.
	sent := srv.Stats().Requests
	bad := flowCharge("0.00", true)
	_, err = client.Charges.Create(ctx, bad, payonce.WithKey(keytest.Now(t, "order-8-payment-0001")))
	require.ErrorIs(t, err, payonce.ErrInvalidRequest)
	require.ErrorIs(t, err, payonce.ErrInvalidAmount)
	assert.Equal(t, "order-8-payment-0001", payonce.KeyOf(err).String())
	text, err := payonce.KeyOf(err).MarshalText()
	require.NoError(t, err)
	stored, err := payonce.ParseKey(string(text))
	require.NoError(t, err)
	assert.Equal(t, "order-8-payment-0001", stored.String())
	assert.False(t, stored.Created().IsZero())
	assert.Equal(t, sent, srv.Stats().Requests, "nothing sent")
}

// A job queue delivers "charge order 9" twice, the first time losing the
// answer (the connection reset before the request was read: the lookup
// finds no charge) and giving up: the reference in the journal makes the
// second delivery resume the same operation, and a third one answer from
// the journal without sending anything.
func TestMerchantFlowRedeliveredJobChargesOnce(t *testing.T) {
	ctx := context.Background()
	srv := a55test.New(t)
	j, err := sqlitejournal.Open(ctx, filepath.Join(t.TempDir(), "payonce.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = j.Close() })
	policy := payoncetest.FastRetryPolicy()
	policy.MaxAttempts = 1 // the queue redelivers; the client does not retry
	client, err := srv.Client(payonce.WithJournal(j), payonce.WithRetryPolicy(policy))
	require.NoError(t, err)

	deliver := func() (*a55.Charge, error) {
		return client.Charges.Create(ctx, flowCharge("42.00", true), payonce.WithReference("order-9/charge"))
	}
	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultResetBeforeRead, Path: a55test.ChargePath, Count: 1}))
	_, err = deliver()
	require.Error(t, err)
	require.True(t, payonce.IsResumable(err), "%v", err)
	key := payonce.KeyOf(err).String()

	ch, err := deliver()
	require.NoError(t, err)
	assert.Equal(t, key, ch.Meta.Key.String())
	assert.False(t, ch.Meta.FromJournal)

	sent := srv.Stats().Requests
	again, err := deliver()
	require.NoError(t, err)
	assert.True(t, again.Meta.FromJournal)
	assert.Equal(t, ch.UUID, again.UUID)
	assert.Equal(t, sent, srv.Stats().Requests, "answered from the journal")
	assert.True(t, srv.Ledger().ExecutedOnce(key), "charged once")
	assert.Equal(t, 1, srv.Ledger().CountKind("charge.create"))
}
