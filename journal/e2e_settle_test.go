package journal_test

import (
	"testing"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/coinepay"
	"github.com/payonce/payonce/coinepay/coinepaytest"
	"github.com/payonce/payonce/payoncetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// On every backend: a charge and a card issue whose answers were lost are
// in doubt after 25 h; the lookups find them and record them, a reopened
// journal answers both, and each ran once. A charge that never ran is
// recorded as not executed.
func TestSettleLookupsOnEveryBackend(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := t.Context()
			a := a55test.New(t)
			cp := coinepaytest.New(t, payoncetest.WithClock(a.Clock()))
			j, reopen := b.open(t)
			one := payoncetest.FastRetryPolicy()
			one.MaxAttempts = 1
			ac := a55Client(t, a, j, payonce.WithRetryPolicy(one))
			cc := coinepayClient(t, cp, j)
			charge := chargeRequest("4111111111111111")
			charge.Description = "order-5"
			lost := chargeRequest("4111111111111111")
			lost.InstallmentValue, lost.Description = payoncetest.Amount("7.00"), "order-6"
			apply := &coinepay.ApplyRequest{HeaderID: "h1", PackageID: "p1"}

			require.NoError(t, a.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: a55test.ChargePath, Count: 1}))
			require.NoError(t, a.AddFault(payoncetest.Rule{Fault: payoncetest.FaultErrorBeforeCommit, Path: a55.PathChargeList, Count: 1}))
			_, err := ac.Charges.Create(ctx, charge, payonce.WithReference("order-5/charge"))
			require.Error(t, err)
			require.NoError(t, a.AddFault(payoncetest.Rule{Fault: payoncetest.FaultErrorBeforeCommit, Path: a55test.ChargePath, Count: 1}))
			_, err = ac.Charges.Create(ctx, lost, payonce.WithReference("order-6/charge"))
			require.Error(t, err)
			require.NoError(t, cp.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: coinepay.PathCardApply, Count: 5}))
			_, err = cc.Cards.Apply(ctx, apply, payonce.WithReference("job-5/apply"))
			require.Error(t, err)
			a.Clock().Advance(25 * time.Hour)

			ch, err := ac.Charges.SettleCreate(ctx, "order-5/charge", nil)
			require.NoError(t, err)
			assert.Equal(t, "succeeded", ch.Entry.SettledOutcome())
			none, err := ac.Charges.SettleCreate(ctx, "order-6/charge", &a55.SettleOptions{RecordNotExecuted: true})
			require.NoError(t, err)
			assert.Equal(t, "not_executed", none.Entry.SettledOutcome())
			card, err := cc.Cards.SettleApply(ctx, "job-5/apply", apply, nil)
			require.NoError(t, err)
			assert.Equal(t, "succeeded", card.Entry.SettledOutcome())

			j2 := reopen(t)
			again, err := a55Client(t, a, j2).Charges.Create(ctx, charge, payonce.WithReference("order-5/charge"))
			require.NoError(t, err)
			assert.True(t, again.Meta.FromJournal)
			assert.Equal(t, ch.Charge.UUID, again.UUID)
			_, err = a55Client(t, a, j2).Charges.Create(ctx, lost, payonce.WithReference("order-6/charge"))
			require.ErrorIs(t, err, payonce.ErrNotExecuted)
			res, err := coinepayClient(t, cp, j2).Cards.Apply(ctx, apply, payonce.WithReference("job-5/apply"))
			require.NoError(t, err)
			assert.True(t, res.Meta.FromJournal)
			assert.Equal(t, card.Card.CardID, res.CardID)
			assert.Equal(t, 1, a.Ledger().Len(), "one charge")
			assert.Equal(t, 1, cp.Ledger().CountKind("card.apply"), "one card")
		})
	}
}
