package payonce_test

import (
	"context"
	"testing"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/testsupport/keytest"
	"github.com/payonce/payonce/journal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// With WithExplicitKeys a keyed write whose key the call would make up
// (a random UUID, no key at all) is refused with ErrKeyRequired before any
// byte is sent; every explicit source runs.
func TestExplicitKeysRefusesAMadeUpKey(t *testing.T) {
	clk := newClock()
	created := clk.Now().Add(-time.Hour)
	refused := map[string][]payonce.CallOption{
		"no key source": nil,
		"without key":   {payonce.WithoutKey()},
	}
	for name, opts := range refused {
		t.Run(name, func(t *testing.T) {
			s := newStub(t, okCharge)
			c := journalClient(t, s, nil, clk, payonce.WithExplicitKeys())
			_, err := c.Do(context.Background(), chargeReq("1.00"), nil, opts...)
			require.ErrorIs(t, err, payonce.ErrKeyRequired)
			var ke *payonce.ValidationError
			require.ErrorAs(t, err, &ke)
			assert.Contains(t, err.Error(), "WithExplicitKeys")
			assert.True(t, payonce.KeyOf(err).IsZero(), "a made-up key is never used")
			assert.Zero(t, s.calls.Load(), "nothing sent")
		})
	}
	task, err := payonce.NewKey(created, "orders:pay", "job-000123")
	require.NoError(t, err)
	text, err := keytest.Key(t, "order-2026-000123-tok", created).MarshalText()
	require.NoError(t, err)
	stored, err := payonce.ParseKey(string(text))
	require.NoError(t, err)
	failed := &payonce.APIError{Kind: payonce.ErrServer, Key: keytest.Key(t, "order-2026-000123-err", created)}
	allowed := map[string]struct {
		opts    []payonce.CallOption
		journal bool
	}{
		"task key":              {opts: []payonce.CallOption{payonce.WithKey(task)}},
		"stored key":            {opts: []payonce.CallOption{payonce.WithKey(stored)}},
		"key of an error":       {opts: []payonce.CallOption{payonce.WithKey(payonce.KeyOf(failed))}},
		"reference and journal": {opts: []payonce.CallOption{payonce.WithReference("order-42/charge")}, journal: true},
	}
	for name, tc := range allowed {
		t.Run(name, func(t *testing.T) {
			s := newStub(t, okCharge)
			var j payonce.Journal
			if tc.journal {
				j = journal.NewMemory()
			}
			c := journalClient(t, s, j, clk, payonce.WithExplicitKeys())
			_, err := c.Do(context.Background(), chargeReq("1.00"), nil, tc.opts...)
			require.NoError(t, err)
			assert.EqualValues(t, 1, s.calls.Load())
		})
	}
}

// An unkeyed read is not a write: the option leaves it alone.
func TestExplicitKeysLeavesReadsAlone(t *testing.T) {
	s := newStub(t, okCharge)
	c := journalClient(t, s, nil, newClock(), payonce.WithExplicitKeys())
	_, err := c.Do(context.Background(), &payonce.Request{Operation: "charges.get", Method: "GET", Path: "/charge/ch_1"}, nil)
	require.NoError(t, err)
	assert.EqualValues(t, 1, s.calls.Load())
}
