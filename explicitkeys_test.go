package payonce_test

import (
	"context"
	"testing"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/journal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// With WithExplicitKeys a keyed write whose key the call would make up
// (a random UUID, a bare key with no age, no key at all) is refused with
// ErrKeyRequired before any byte is sent; every explicit source runs.
func TestExplicitKeysRefusesAMadeUpKey(t *testing.T) {
	clk := newClock()
	created := clk.Now().Add(-time.Hour)
	bg := context.Background()
	refused := map[string]struct {
		ctx  context.Context
		opts []payonce.CallOption
	}{
		"no key source":           {bg, nil},
		"key without its age":     {bg, []payonce.CallOption{payonce.WithIdempotencyKey("order-2026-000123-pay")}},
		"context key without age": {payonce.WithKey(bg, "order-2026-000123-pay"), nil},
		"without key":             {bg, []payonce.CallOption{payonce.WithoutKey()}},
	}
	for name, tc := range refused {
		t.Run(name, func(t *testing.T) {
			s := newStub(t, okCharge)
			c := journalClient(t, s, nil, clk, payonce.WithExplicitKeys())
			_, err := c.Do(tc.ctx, chargeReq("1.00"), nil, tc.opts...)
			require.ErrorIs(t, err, payonce.ErrKeyRequired)
			var ke *payonce.KeyError
			require.ErrorAs(t, err, &ke)
			assert.Contains(t, err.Error(), "WithExplicitKeys")
			assert.Zero(t, s.calls.Load(), "nothing sent")
		})
	}
	tok := payonce.ResumeToken{Key: "order-2026-000123-tok", Created: created}.String()
	allowed := map[string]struct {
		ctx     context.Context
		opts    []payonce.CallOption
		journal bool
	}{
		"task key":              {ctx: payonce.WithTaskKey(bg, "orders:pay", "job-000123", created)},
		"resume token":          {ctx: bg, opts: []payonce.CallOption{payonce.WithResumeToken(tok)}},
		"key with its age":      {ctx: bg, opts: []payonce.CallOption{payonce.WithIdempotencyKey("order-2026-000123-pay"), payonce.WithKeyCreated(created)}},
		"context key with age":  {ctx: payonce.WithKeyCreatedAt(bg, "order-2026-000123-pay", created)},
		"reference and journal": {ctx: bg, opts: []payonce.CallOption{payonce.WithReference("order-42/charge")}, journal: true},
	}
	for name, tc := range allowed {
		t.Run(name, func(t *testing.T) {
			s := newStub(t, okCharge)
			var j payonce.Journal
			if tc.journal {
				j = journal.NewMemory()
			}
			c := journalClient(t, s, j, clk, payonce.WithExplicitKeys())
			_, err := c.Do(tc.ctx, chargeReq("1.00"), nil, tc.opts...)
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
