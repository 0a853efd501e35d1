package payonce_test

import (
	"context"
	"testing"
	"time"

	"github.com/payonce/payonce"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The documented checkout (OperationKey and WithIdempotencyKey, the same
// key on every run) run again 25 h later: the key came without its
// creation time, but the client remembers its first use and refuses it,
// nothing sent, instead of a second charge under one key.
func TestBareKeyCannotPassTheWindow(t *testing.T) {
	clk := newClock()
	s := newStub(t, okCharge)
	c := journalClient(t, s, nil, clk)
	key, err := payonce.OperationKey("order", "1", "payment")
	require.NoError(t, err)
	_, err = c.Do(t.Context(), chargeReq("10.00"), nil, payonce.WithIdempotencyKey(key))
	require.NoError(t, err)

	clk.Advance(25 * time.Hour)
	_, err = c.Do(t.Context(), chargeReq("10.00"), nil, payonce.WithIdempotencyKey(key))
	require.ErrorIs(t, err, payonce.ErrKeyExpired)
	assert.Equal(t, key, payonce.KeyOf(err))
	assert.Equal(t, int32(1), s.calls.Load(), "nothing sent the second time")

	// The same holds for a key bound to the context without its time.
	ctxKey := "order-2-payment-bound"
	_, err = c.Do(payonce.WithKey(context.Background(), ctxKey), chargeReq("10.00"), nil)
	require.NoError(t, err)
	clk.Advance(25 * time.Hour)
	_, err = c.Do(payonce.WithKey(context.Background(), ctxKey), chargeReq("10.00"), nil)
	require.ErrorIs(t, err, payonce.ErrKeyExpired)
	assert.Equal(t, int32(2), s.calls.Load())

	// Within the window the remembered key goes out again (the server
	// replays), with its first use as its age.
	k3 := "order-3-payment-key-1"
	first, err := c.Do(t.Context(), chargeReq("10.00"), nil, payonce.WithIdempotencyKey(k3))
	require.NoError(t, err)
	clk.Advance(time.Hour)
	again, err := c.Do(t.Context(), chargeReq("10.00"), nil, payonce.WithIdempotencyKey(k3))
	require.NoError(t, err)
	assert.True(t, again.KeyCreated.Equal(first.KeyCreated))
}
