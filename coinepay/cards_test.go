package coinepay_test

import (
	"context"
	"testing"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/coinepay"
	"github.com/payonce/payonce/coinepay/coinepaytest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A job that forgets its key: without WithExplicitKeys each delivery makes
// up a random key and Coinepay issues a card each time; with it the first
// delivery is refused before anything is sent.
func TestApplyRedeliveredWithoutAKey(t *testing.T) {
	apply := func(client *coinepay.Client) error {
		_, err := client.Cards.Apply(context.Background(), &coinepay.ApplyRequest{HeaderID: "hdr_1", PackageID: "pkg_basic"})
		return err
	}
	t.Run("default", func(t *testing.T) {
		srv := coinepaytest.New(t)
		client, err := srv.Client()
		require.NoError(t, err)
		require.NoError(t, apply(client))
		require.NoError(t, apply(client)) // the queue delivers the job again
		assert.Equal(t, 2, srv.Ledger().CountKind("card.apply"), "two cards for one job")
	})
	t.Run("explicit keys", func(t *testing.T) {
		srv := coinepaytest.New(t)
		client, err := srv.Client(payonce.WithExplicitKeys())
		require.NoError(t, err)
		err = apply(client)
		require.ErrorIs(t, err, payonce.ErrKeyRequired)
		assert.Empty(t, srv.Requests(), "nothing sent")
		assert.Zero(t, srv.Ledger().Len())

		// The same job with its task key runs once however often it comes.
		key, err := payonce.NewKey(srv.Clock().Now(), "openapi:apply", "job-42")
		require.NoError(t, err)
		for range 2 {
			_, err := client.Cards.Apply(context.Background(), &coinepay.ApplyRequest{HeaderID: "hdr_1", PackageID: "pkg_basic"}, payonce.WithKey(key))
			require.NoError(t, err)
		}
		assert.Equal(t, 1, srv.Ledger().Count("openapi:apply:job-42"))
		// Recharge is a keyed write too.
		amount := payonce.MustParseAmount("1.00")
		_, err = client.Cards.Recharge(context.Background(), &coinepay.RechargeRequest{CardID: "c_1", Amount: amount})
		require.ErrorIs(t, err, payonce.ErrKeyRequired)
	})
}
