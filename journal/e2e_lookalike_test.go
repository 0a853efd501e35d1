package journal_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/coinepay"
	"github.com/payonce/payonce/coinepay/coinepaytest"
	"github.com/payonce/payonce/journal"
	"github.com/payonce/payonce/payoncetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// oneTry is a retry policy of attempts attempts.
func oneTry(attempts int) payonce.RetryPolicy {
	p := payoncetest.FastRetryPolicy()
	p.MaxAttempts = attempts
	return p
}

// Order A's charge never ran (each of its attempts got a 503 before
// anything executed); order B, same amount and description, was charged.
// The fake answers as A55 documents, without the key. A's lookup finds
// only B's charge, which the journal holds as B's outcome: A is recorded
// as not executed, never as paid with B's charge. On every backend.
func TestSettleCreateNeverTakesAnotherOrdersCharge(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := t.Context()
			srv := a55test.New(t, payoncetest.WithDocumentedAnswers())
			j, _ := b.open(t)
			c := a55Client(t, srv, j, payonce.WithRetryPolicy(oneTry(2)))
			req := chargeRequest("4111111111111111")
			req.Description = "t-shirt"

			require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultErrorBeforeCommit, Path: a55test.ChargePath, Count: 2}))
			_, err := c.Charges.Create(ctx, req, payonce.WithReference("order-A/attempt-1"))
			require.Error(t, err)
			paid, err := c.Charges.Create(ctx, req, payonce.WithReference("order-B/attempt-1"))
			require.NoError(t, err)
			require.Equal(t, 1, srv.Ledger().Len())
			srv.Clock().Advance(25 * time.Hour)

			s, err := c.Charges.SettleCreate(ctx, "order-A/attempt-1", &a55.SettleOptions{RecordNotExecuted: true})
			require.NoError(t, err)
			assert.Equal(t, "not_executed", s.Entry.SettledOutcome(), "order A never ran: %s", s.Entry.SettleReason)
			assert.Nil(t, s.Charge)
			assert.NotContains(t, string(s.Entry.Result), paid.UUID)
			_, err = c.Charges.Create(ctx, req, payonce.WithReference("order-A/attempt-1"))
			require.ErrorIs(t, err, payonce.ErrNotExecuted, "order A is not told it was paid")

			bEntry, err := j.Get(ctx, c.Core().Scope(), "order-B/attempt-1")
			require.NoError(t, err)
			assert.Equal(t, paid.UUID, bEntry.ResourceID, "the journal holds B's charge as B's outcome")
		})
	}
}

// Order A's charge ran but its answer was lost; order B, same amount and
// description, was charged too. A's lookup finds both charges: B's is
// B's outcome, so A's is the other one.
func TestSettleCreateTellsTwinChargesApartByTheirHolders(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := t.Context()
			srv := a55test.New(t, payoncetest.WithDocumentedAnswers())
			j, _ := b.open(t)
			c := a55Client(t, srv, j, payonce.WithRetryPolicy(oneTry(1)))
			req := chargeRequest("4111111111111111")
			req.Description = "t-shirt"

			require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: a55test.ChargePath, Count: 1}))
			require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultErrorBeforeCommit, Path: a55.PathChargeList, Count: 1}))
			_, err := c.Charges.Create(ctx, req, payonce.WithReference("order-A/attempt-1"))
			require.Error(t, err)
			paid, err := c.Charges.Create(ctx, req, payonce.WithReference("order-B/attempt-1"))
			require.NoError(t, err)
			require.Equal(t, 2, srv.Ledger().Len())
			srv.Clock().Advance(25 * time.Hour)

			s, err := c.Charges.SettleCreate(ctx, "order-A/attempt-1", nil)
			require.NoError(t, err)
			require.Equal(t, "succeeded", s.Entry.SettledOutcome())
			require.NotNil(t, s.Charge)
			assert.NotEqual(t, paid.UUID, s.Charge.UUID)
			assert.Equal(t, s.Charge.UUID, s.Entry.ResourceID)
			ops := srv.Ledger().Operations()
			require.Len(t, ops, 2)
			assert.Equal(t, ops[0].ID, s.Charge.UUID, "A's own charge, the first")
		})
	}
}

// Both orders are in doubt and one charge exists: it may be either's, so
// neither lookup records it.
func TestSettleCreateRefusesWhenAnotherOrderInDoubtCouldHaveMadeTheCharge(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := t.Context()
			srv := a55test.New(t, payoncetest.WithDocumentedAnswers())
			j, _ := b.open(t)
			c := a55Client(t, srv, j, payonce.WithRetryPolicy(oneTry(1)))
			req := chargeRequest("4111111111111111")
			req.Description = "t-shirt"

			require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultErrorBeforeCommit, Path: a55test.ChargePath, Count: 1}))
			_, err := c.Charges.Create(ctx, req, payonce.WithReference("order-A/attempt-1"))
			require.Error(t, err)
			require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: a55test.ChargePath, Count: 1}))
			_, err = c.Charges.Create(ctx, req, payonce.WithReference("order-B/attempt-1"))
			require.Error(t, err)
			srv.Clock().Advance(25 * time.Hour)

			for _, ref := range []string{"order-A/attempt-1", "order-B/attempt-1"} {
				_, err := c.Charges.SettleCreate(ctx, ref, &a55.SettleOptions{RecordNotExecuted: true})
				require.ErrorIs(t, err, payonce.ErrLookupAmbiguous, ref)
				e, err := j.Get(ctx, c.Core().Scope(), ref)
				require.NoError(t, err)
				assert.Equal(t, payonce.JournalPending, e.State, "%s: nothing recorded", ref)
			}
		})
	}
}

// Coinepay: job A's card issue never ran, job B's, same header and
// package, did. A's lookup finds only B's card, B's outcome: A is
// recorded as not executed. On every backend.
func TestSettleApplyNeverTakesAnotherJobsCard(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := t.Context()
			srv := coinepaytest.New(t, payoncetest.WithDocumentedAnswers())
			j, _ := b.open(t)
			c := coinepayClient(t, srv, j)
			apply := &coinepay.ApplyRequest{HeaderID: "hdr_1", PackageID: "pkg_basic"}

			require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultErrorBeforeCommit, Path: coinepay.PathCardApply, Count: 5}))
			_, err := c.Cards.Apply(ctx, apply, payonce.WithReference("job-A/apply"), payonce.WithCallRetryPolicy(oneTry(5)))
			require.Error(t, err)
			issued, err := c.Cards.Apply(ctx, apply, payonce.WithReference("job-B/apply"))
			require.NoError(t, err)
			require.Equal(t, 1, srv.Ledger().CountKind("card.apply"))
			srv.Clock().Advance(25 * time.Hour)

			s, err := c.Cards.SettleApply(ctx, "job-A/apply", apply, &coinepay.SettleOptions{RecordNotExecuted: true})
			require.NoError(t, err)
			assert.Equal(t, "not_executed", s.Entry.SettledOutcome(), "job A never ran: %s", s.Entry.SettleReason)
			assert.Nil(t, s.Card)
			assert.NotContains(t, string(s.Entry.Result), issued.CardID)
		})
	}
}

// The resource an entry holds is found, in the answer the journal
// stores, where the schema's version 6 reads it for older rows: an A55
// charge's charge_uuid, a Coinepay card's data.card_id and a recharge's
// data.recharge_id.
func TestResourceIDIsWhereTheMigrationReadsIt(t *testing.T) {
	ctx := t.Context()
	a := a55test.New(t)
	cp := coinepaytest.New(t, payoncetest.WithClock(a.Clock()))
	j := journal.NewMemory()
	ac, cc := a55Client(t, a, j), coinepayClient(t, cp, j)
	_, err := ac.Charges.Create(ctx, chargeRequest("4111111111111111"), payonce.WithReference("order-1/attempt-1"))
	require.NoError(t, err)
	card, err := cc.Cards.Apply(ctx, &coinepay.ApplyRequest{HeaderID: "h1", PackageID: "p1"}, payonce.WithReference("job-1/apply"))
	require.NoError(t, err)
	_, err = cc.Cards.Recharge(ctx, &coinepay.RechargeRequest{CardID: card.CardID, Amount: payoncetest.Amount("5.00")}, payonce.WithReference("job-1/recharge"))
	require.NoError(t, err)
	for _, tc := range []struct {
		scope, ref string
		path       []string
	}{
		{ac.Core().Scope(), "order-1/attempt-1", []string{"charge_uuid"}},
		{cc.Core().Scope(), "job-1/apply", []string{"data", "card_id"}},
		{cc.Core().Scope(), "job-1/recharge", []string{"data", "recharge_id"}},
	} {
		e, err := j.Get(ctx, tc.scope, tc.ref)
		require.NoError(t, err)
		require.NotEmpty(t, e.ResourceID, tc.ref)
		var v any
		require.NoError(t, json.Unmarshal(e.Result, &v))
		for _, k := range tc.path {
			v = v.(map[string]any)[k]
		}
		assert.Equal(t, e.ResourceID, v, tc.ref)
	}
}
