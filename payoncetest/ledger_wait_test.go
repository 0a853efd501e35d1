package payoncetest_test

import (
	"context"
	"testing"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// WaitCount returns once the key's operation committed, and with the
// context's error when it ends first.
func TestLedgerWaitCount(t *testing.T) {
	srv := a55test.New(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	assert.ErrorIs(t, srv.Ledger().WaitCount(ctx, "no-such-key-0001", 1), context.Canceled)
	require.NoError(t, srv.Ledger().WaitCount(t.Context(), "no-such-key-0001", 0), "zero operations are there already")

	client, err := srv.Client()
	require.NoError(t, err)
	done := make(chan error, 1)
	key, err := payonce.NewKey(srv.Clock().Now(), "wallet", "1")
	require.NoError(t, err)
	go func() { done <- srv.Ledger().WaitCount(t.Context(), key.String(), 1) }()
	w, err := client.Wallets.Create(t.Context(), a55test.WalletRequest("shop"), payonce.WithKey(key))
	require.NoError(t, err)
	require.NoError(t, <-done)
	assert.Equal(t, 1, srv.Ledger().Count(w.Meta.Key.String()))
}
