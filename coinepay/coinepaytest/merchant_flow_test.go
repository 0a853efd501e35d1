package coinepaytest_test

// A merchant's card flow against the fake: issue a card per job, fund it,
// and survive lost answers, a short balance and a redelivered job.

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/coinepay"
	"github.com/payonce/payonce/coinepay/coinepaytest"
	"github.com/payonce/payonce/internal/testsupport/keytest"
	"github.com/payonce/payonce/journal/sqlitejournal"
	"github.com/payonce/payonce/payoncetest"
)

func TestMerchantCardFlow(t *testing.T) {
	ctx := context.Background()
	srv := coinepaytest.New(t, coinepaytest.WithBalance(payoncetest.Amount("10.00")))
	client, err := srv.Client()
	require.NoError(t, err)

	// Job 1 issues a card; the answer is lost, the client retries.
	jobKey, err := payonce.NewKey(srv.Clock().Now(), "openapi:apply", "job-1")
	require.NoError(t, err)
	job := payonce.WithKey(jobKey)
	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: coinepay.PathCardApply, Count: 1}))
	card, err := client.Cards.Apply(ctx, &coinepay.ApplyRequest{HeaderID: "hdr_1", PackageID: "pkg_basic"}, job)
	require.NoError(t, err)
	assert.Equal(t, "openapi:apply:job-1", card.Meta.Key.String())
	assert.True(t, srv.Ledger().ExecutedOnce(card.Meta.Key.String()))

	// The job is delivered again: the same card, replayed.
	again, err := client.Cards.Apply(ctx, &coinepay.ApplyRequest{HeaderID: "hdr_1", PackageID: "pkg_basic"}, job)
	require.NoError(t, err)
	assert.Equal(t, card.CardID, again.CardID)
	assert.True(t, again.Meta.Replayed)

	// The job's key with another body: a typed 409 that keeps the key.
	_, err = client.Cards.Apply(ctx, &coinepay.ApplyRequest{HeaderID: "hdr_2", PackageID: "pkg_basic"}, job)
	require.ErrorIs(t, err, payonce.ErrIdempotencyConflict)
	assert.Equal(t, "openapi:apply:job-1", payonce.KeyOf(err).String())
	assert.False(t, payonce.IsResumable(err))

	// A recharge larger than the balance: resumable; after a top-up the
	// stored key runs the very same recharge once.
	rechargeKey, err := payonce.NewKey(srv.Clock().Now(), "card", card.CardID, "recharge", "1")
	require.NoError(t, err)
	recharge := &coinepay.RechargeRequest{CardID: card.CardID, Amount: payoncetest.Amount("50.00")}
	_, err = client.Cards.Recharge(ctx, recharge, payonce.WithKey(rechargeKey))
	require.ErrorIs(t, err, coinepay.ErrInsufficientBalance)
	require.True(t, payonce.IsResumable(err))
	stored, err := payonce.KeyOf(err).MarshalText()
	require.NoError(t, err)
	srv.SetBalance(srv.APIKey(), payoncetest.Amount("100.00"))
	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: coinepay.PathCardRecharge, Count: 1}))
	resumed, err := payonce.ParseKey(string(stored))
	require.NoError(t, err)
	rc, err := client.Cards.Recharge(ctx, recharge, payonce.WithKey(resumed))
	require.NoError(t, err)
	assert.Equal(t, rechargeKey, rc.Meta.Key)
	assert.True(t, srv.Ledger().ExecutedOnce(rechargeKey.String()))
	assert.Equal(t, "50.00", srv.Balance(srv.APIKey()).String())

	// Refused input: typed, nothing sent, the key still named.
	sent := srv.Stats().Requests
	_, err = client.Cards.Recharge(ctx, &coinepay.RechargeRequest{CardID: card.CardID}, payonce.WithKey(keytest.Now(t, "card-recharge-2")))
	require.ErrorIs(t, err, payonce.ErrInvalidRequest)
	assert.Equal(t, "card-recharge-2", payonce.KeyOf(err).String())
	assert.Equal(t, sent, srv.Stats().Requests)
}

// A job runs on a journal, loses its answer and gives up; its redelivery,
// with the same reference, issues no second card.
func TestMerchantCardJobOnAJournal(t *testing.T) {
	ctx := context.Background()
	srv := coinepaytest.New(t)
	j, err := sqlitejournal.Open(ctx, filepath.Join(t.TempDir(), "payonce.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = j.Close() })
	policy := payoncetest.FastRetryPolicy()
	policy.MaxAttempts = 1
	client, err := srv.Client(payonce.WithJournal(j), payonce.WithRetryPolicy(policy))
	require.NoError(t, err)

	deliver := func() (*coinepay.ApplyResult, error) {
		key, err := payonce.NewKey(srv.Clock().Now(), "openapi:apply", "job-7")
		if err != nil {
			return nil, err
		}
		return client.Cards.Apply(ctx, &coinepay.ApplyRequest{HeaderID: "hdr_7", PackageID: "pkg_basic"}, payonce.WithKey(key), payonce.WithReference("job-7/apply"))
	}
	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: coinepay.PathCardApply, Count: 1}))
	_, err = deliver()
	require.True(t, payonce.IsResumable(err), "%v", err)
	card, err := deliver()
	require.NoError(t, err)
	again, err := deliver()
	require.NoError(t, err)
	assert.True(t, again.Meta.FromJournal)
	assert.Equal(t, card.CardID, again.CardID)
	assert.Equal(t, 1, srv.Ledger().CountKind("card.apply"))
}
