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
	"github.com/payonce/payonce/internal/testsupport/keytest"
	"github.com/payonce/payonce/payoncetest"
)

// The recipe "advance 25 h and resume" of docs/testing.md: the test client reads the
// fake's clock, so its key-age guard sees the 25 hours too and refuses to
// send a key the server has forgotten (which would issue a second card).
func TestClientKeyAgesWithTheFakeClock(t *testing.T) {
	srv := coinepaytest.New(t)
	client, err := srv.Client()
	require.NoError(t, err)
	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: coinepay.PathCardApply}))
	key, err := payonce.NewKey(srv.Clock().Now(), "openapi:apply", "job-77")
	require.NoError(t, err)
	req := &coinepay.ApplyRequest{HeaderID: "hdr_1", PackageID: "pkg_basic"}
	_, err = client.Cards.Apply(context.Background(), req, payonce.WithKey(key))
	require.Error(t, err)
	require.True(t, payonce.IsTemporary(err))
	require.Equal(t, 1, srv.Ledger().Count(key.String()))
	srv.ClearFaults()

	srv.Clock().Advance(25 * time.Hour)
	sent := len(srv.Requests())
	_, err = client.Cards.Apply(context.Background(), req, payonce.WithKey(payonce.KeyOf(err)))
	require.ErrorIs(t, err, payonce.ErrKeyExpired)
	assert.Equal(t, key, payonce.KeyOf(err))
	assert.Len(t, srv.Requests(), sent, "nothing sent")
	assert.Equal(t, 1, srv.Ledger().Count(key.String()), "one card")
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

	local, err := srv.Client(payoncetest.ClientClock(time.Now))
	require.NoError(t, err)
	res, err = local.Cards.Apply(context.Background(), &coinepay.ApplyRequest{HeaderID: "h", PackageID: "p"})
	require.NoError(t, err)
	assert.Equal(t, 2, res.Meta.Attempts, "stale first attempt, corrected second")
	assert.InDelta(t, 600, local.ClockOffset().Seconds(), 2)
}

// payonce.NewKey fits Coinepay's charset where a hand-made key does
// not: "order 42/x" is refused before sending.
func TestNewKeyFitsCoinepay(t *testing.T) {
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
		assert.True(t, srv.Ledger().ExecutedOnce(key.String()), id)
	}
}
