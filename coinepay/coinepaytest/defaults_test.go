package coinepaytest_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/coinepay"
	"github.com/payonce/payonce/coinepay/coinepaytest"
	"github.com/payonce/payonce/internal/keytest"
	"github.com/payonce/payonce/internal/logtest"
)

// The recipe "advance 25 h and resume" of docs/testing.md: the test client reads the
// fake's clock, so its key-age guard sees the 25 hours too and refuses to
// send a key the server has forgotten (which would issue a second card).
func TestClientKeyAgesWithTheFakeClock(t *testing.T) {
	srv := coinepaytest.New(t)
	client, err := srv.Client()
	require.NoError(t, err)
	require.NoError(t, srv.AddFault(coinepaytest.Rule{Fault: coinepaytest.FaultDropAfterCommit, Path: coinepay.PathCardApply}))
	key, err := payonce.NewKey(srv.Clock().Now(), "openapi:apply", "job-77")
	require.NoError(t, err)
	req := &coinepay.ApplyRequest{HeaderID: "hdr_1", PackageID: "pkg_basic"}
	_, err = client.Cards.Apply(context.Background(), req, payonce.WithKey(key))
	require.Error(t, err)
	require.True(t, payonce.IsTemporary(err))
	require.Equal(t, 1, srv.Ledger().Count(key.ID()))
	srv.ClearFaults()

	srv.Clock().Advance(25 * time.Hour)
	sent := len(srv.Requests())
	_, err = client.Cards.Apply(context.Background(), req, payonce.WithKey(payonce.KeyOf(err)))
	require.ErrorIs(t, err, payonce.ErrKeyExpired)
	assert.Equal(t, key, payonce.KeyOf(err))
	assert.Len(t, srv.Requests(), sent, "nothing sent")
	assert.Equal(t, 1, srv.Ledger().Count(key.ID()), "one card")
}

// The test client signs on the fake's clock: a moved fake clock costs no
// stale first attempt. A client on the local clock (the caller's option
// wins) learns the offset as a merchant's would.
func TestClientSignsOnTheFakeClock(t *testing.T) {
	srv := coinepaytest.New(t)
	srv.Clock().Advance(10 * time.Minute)
	client, err := srv.Client()
	require.NoError(t, err)
	res, err := client.Cards.Apply(context.Background(), &coinepay.ApplyRequest{HeaderID: "h", PackageID: "p"})
	require.NoError(t, err)
	assert.Equal(t, 1, res.Meta.Attempts)
	assert.Zero(t, client.ClockOffset())

	local, err := srv.Client(payonce.WithClock(time.Now))
	require.NoError(t, err)
	res, err = local.Cards.Apply(context.Background(), &coinepay.ApplyRequest{HeaderID: "h", PackageID: "p"})
	require.NoError(t, err)
	assert.Equal(t, 2, res.Meta.Attempts, "stale first attempt, corrected second")
	assert.InDelta(t, 600, local.ClockOffset().Seconds(), 2)
}

// The test client retries on millisecond waits by default: a 429 asking for
// a second is retried after FastRetryPolicy's 20 ms cap; the caller's
// policy still wins. The wait is read from the client's debug record of
// the retry, so nothing depends on the machine's speed.
func TestClientRetriesFastByDefault(t *testing.T) {
	wait := func(t *testing.T, opts ...payonce.Option) time.Duration {
		srv := coinepaytest.New(t)
		log, logger := logtest.New()
		client, err := srv.Client(append([]payonce.Option{payonce.WithLogger(logger)}, opts...)...)
		require.NoError(t, err)
		require.NoError(t, srv.AddFault(coinepaytest.Rule{Fault: coinepaytest.FaultRateLimit, Path: coinepay.PathCardApply, RetryAfter: 1, Count: 1}))
		res, err := client.Cards.Apply(context.Background(), &coinepay.ApplyRequest{HeaderID: "h", PackageID: "p"})
		require.NoError(t, err)
		require.Equal(t, 2, res.Meta.Attempts)
		waits := log.RetryWaits(t)
		require.Len(t, waits, 1, "one retry logged")
		return waits[0]
	}
	assert.Equal(t, 20*time.Millisecond, wait(t), "Retry-After capped by FastRetryPolicy")
	assert.Equal(t, time.Second, wait(t, payonce.WithRetryPolicy(payonce.DefaultRetryPolicy())), "the caller's policy wins")
}

// payonce.OperationKey fits Coinepay's charset where a hand-made key does
// not: "order 42/x" is refused before sending.
func TestOperationKeyFitsCoinepay(t *testing.T) {
	srv := coinepaytest.New(t)
	client, err := srv.Client()
	require.NoError(t, err)
	req := &coinepay.ApplyRequest{HeaderID: "hdr_1", PackageID: "pkg_basic"}
	_, err = client.Cards.Apply(context.Background(), req, payonce.WithKey(keytest.Now(t, "order 42/x")))
	require.ErrorIs(t, err, payonce.ErrKeyInvalidChars)
	assert.Empty(t, srv.Requests())

	for _, id := range []string{"1", "42/x", "pedido ação", "~tilde"} {
		key, err := payonce.NewKey(srv.Clock().Now(), "openapi:apply", id)
		require.NoError(t, err)
		card, err := client.Cards.Apply(context.Background(), req, payonce.WithKey(key))
		require.NoError(t, err, id)
		assert.Equal(t, key, card.Meta.Key)
		again, err := client.Cards.Apply(context.Background(), req, payonce.WithKey(key))
		require.NoError(t, err)
		assert.True(t, again.Meta.Replayed)
		assert.Equal(t, card.CardID, again.CardID)
		assert.True(t, srv.Ledger().ExecutedOnce(key.ID()), id)
	}
}

// Fakes created with default settings draw their IDs at random: the first
// card of two servers never has the same ID. WithSeed makes a run
// reproducible.
func TestServersDrawDistinctIDsUnlessSeeded(t *testing.T) {
	first := func(opts ...coinepaytest.Option) string {
		srv := coinepaytest.New(t, opts...)
		client, err := srv.Client()
		require.NoError(t, err)
		res, err := client.Cards.Apply(t.Context(), &coinepay.ApplyRequest{HeaderID: "hdr_1", PackageID: "pkg_basic"})
		require.NoError(t, err)
		return res.CardID
	}
	assert.NotEqual(t, first(), first(), "default fakes share their first card ID")
	assert.Equal(t, first(coinepaytest.WithSeed(11)), first(coinepaytest.WithSeed(11)))
}
