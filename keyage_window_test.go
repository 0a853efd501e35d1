package payonce_test

import (
	"testing"
	"time"

	"github.com/payonce/payonce"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The documented checkout (NewKey from the order and its creation time,
// the same key on every run) run again 25 h later: the key carries its
// age, so the client refuses it, nothing sent, instead of a second charge
// under one key.
func TestOrderKeyCannotPassTheWindow(t *testing.T) {
	clk := newClock()
	s := newStub(t, okCharge)
	c := journalClient(t, s, nil, clk)
	orderCreated := clk.Now()
	key, err := payonce.NewKey(orderCreated, "order", "1", "payment")
	require.NoError(t, err)
	_, err = c.Do(t.Context(), chargeReq("10.00"), nil, payonce.WithKey(key))
	require.NoError(t, err)

	clk.Advance(25 * time.Hour)
	again, err := payonce.NewKey(orderCreated, "order", "1", "payment") // the job rebuilds it
	require.NoError(t, err)
	_, err = c.Do(t.Context(), chargeReq("10.00"), nil, payonce.WithKey(again))
	require.ErrorIs(t, err, payonce.ErrKeyExpired)
	assert.Equal(t, key.ID(), payonce.KeyOf(err).ID())
	assert.Equal(t, int32(1), s.calls.Load(), "nothing sent the second time")

	// Within the window the key goes out again (the server replays), with
	// the order's creation time as its age.
	k3, err := payonce.NewKey(clk.Now(), "order", "3", "payment")
	require.NoError(t, err)
	first, err := c.Do(t.Context(), chargeReq("10.00"), nil, payonce.WithKey(k3))
	require.NoError(t, err)
	clk.Advance(time.Hour)
	second, err := c.Do(t.Context(), chargeReq("10.00"), nil, payonce.WithKey(k3))
	require.NoError(t, err)
	assert.True(t, second.Key.Created().Equal(first.Key.Created()))
	assert.Equal(t, first.Key, second.Key)
}
