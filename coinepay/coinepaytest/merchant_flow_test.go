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
	"github.com/payonce/payonce/journal/sqlitejournal"
	"github.com/payonce/payonce/payoncetest"
)

func TestMerchantCardFlow(t *testing.T) {
	ctx := context.Background()
	srv := coinepaytest.New(t, coinepaytest.WithBalance(payonce.MustParseAmount("10.00")))
	client, err := srv.Client()
	require.NoError(t, err)

	// Job 1 issues a card; the answer is lost, the client retries.
	job := payonce.WithTaskKey(ctx, "openapi:apply", "job-1", srv.Clock().Now())
	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: coinepay.PathCardApply, Count: 1}))
	card, err := client.Cards.Apply(job, &coinepay.ApplyRequest{HeaderID: "hdr_1", PackageID: "pkg_basic"})
	require.NoError(t, err)
	assert.Equal(t, "openapi:apply:job-1", card.Meta.Key)
	assert.True(t, srv.Ledger().ExecutedOnce(card.Meta.Key))

	// The job is delivered again: the same card, replayed.
	again, err := client.Cards.Apply(job, &coinepay.ApplyRequest{HeaderID: "hdr_1", PackageID: "pkg_basic"})
	require.NoError(t, err)
	assert.Equal(t, card.CardID, again.CardID)
	assert.True(t, again.Meta.Replayed)

	// The job's key with another body: a typed 409 that keeps the key.
	_, err = client.Cards.Apply(job, &coinepay.ApplyRequest{HeaderID: "hdr_2", PackageID: "pkg_basic"})
	require.ErrorIs(t, err, payonce.ErrIdempotencyConflict)
	assert.Equal(t, "openapi:apply:job-1", payonce.KeyOf(err))
	assert.False(t, payonce.IsResumable(err))

	// A recharge larger than the balance: resumable; after a top-up the
	// stored token runs the very same recharge once.
	rechargeKey, err := payonce.OperationKey("card", card.CardID, "recharge", "1")
	require.NoError(t, err)
	recharge := &coinepay.RechargeRequest{CardID: card.CardID, Amount: payonce.MustParseAmount("50.00")}
	_, err = client.Cards.Recharge(ctx, recharge, payonce.WithIdempotencyKey(rechargeKey))
	require.ErrorIs(t, err, payonce.ErrInsufficientBalance)
	require.True(t, payonce.IsResumable(err))
	token := payonce.ResumeTokenOf(err)
	srv.SetBalance(srv.APIKey(), payonce.MustParseAmount("100.00"))
	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: coinepay.PathCardRecharge, Count: 1}))
	rc, err := client.Cards.Recharge(ctx, recharge, payonce.WithResumeToken(token))
	require.NoError(t, err)
	assert.Equal(t, rechargeKey, rc.Meta.Key)
	assert.True(t, srv.Ledger().ExecutedOnce(rechargeKey))
	assert.Equal(t, "50.00", srv.Balance(srv.APIKey()).String())

	// Refused input: typed, nothing sent, the key still named.
	sent := srv.Stats().Requests
	_, err = client.Cards.Recharge(ctx, &coinepay.RechargeRequest{CardID: card.CardID}, payonce.WithIdempotencyKey("card-recharge-2"))
	require.ErrorIs(t, err, payonce.ErrInvalidRequest)
	assert.Equal(t, "card-recharge-2", payonce.KeyOf(err))
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
	policy := payonce.FastRetryPolicy()
	policy.MaxAttempts = 1
	client, err := srv.Client(payonce.WithJournal(j), payonce.WithRetryPolicy(policy))
	require.NoError(t, err)

	deliver := func() (*coinepay.ApplyResult, error) {
		job := payonce.WithTaskKey(ctx, "openapi:apply", "job-7", srv.Clock().Now())
		return client.Cards.Apply(job, &coinepay.ApplyRequest{HeaderID: "hdr_7", PackageID: "pkg_basic"}, payonce.WithReference("job-7/apply"))
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
