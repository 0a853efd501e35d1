package a55_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/payonce/payonce/a55"
)

// Events arrive out of order: a status behind the charge's never undoes
// it, and the documented lifecycles are followed forwards.
func TestChargeStatusOrder(t *testing.T) {
	forward := [][]a55.Status{
		{a55.StatusIssued, a55.StatusPaid},                                         // PIX paid
		{a55.StatusIssued, a55.StatusExpired},                                      // PIX expired
		{a55.StatusIssued, a55.StatusPending, a55.StatusPaid},                      // boleto registered, paid
		{a55.StatusIssued, a55.StatusPending, a55.StatusCanceled},                  // boleto expired
		{a55.StatusPending, a55.StatusConfirmed, a55.StatusRefunded},               // 3DS passed, refunded
		{a55.StatusPending, a55.StatusCanceled},                                    // 3DS abandoned
		{a55.StatusPending, a55.StatusError},                                       // 3DS failed
		{a55.StatusConfirmed, a55.StatusPreCaptured, a55.StatusPaid},               // captured by A55
		{a55.StatusRefundError, a55.StatusChargebackRequested, a55.StatusRefunded}, // a refund failed, a dispute, then refunded
		{a55.StatusConfirmed, a55.StatusChargebackRequested, a55.StatusChargebackReversed, a55.StatusRefunded},
		{a55.StatusPaid, a55.StatusChargebackRequested, a55.StatusPreChargebackResolution, a55.StatusChargebackRefunded},
		{a55.StatusConfirmed, a55.StatusChargebackRequested, a55.StatusChargeback},
	}
	for _, life := range forward {
		for i := range life {
			for j := range life {
				switch {
				case j > i:
					assert.True(t, life[j].After(life[i]), "%s then %s", life[i], life[j])
				case j < i:
					assert.False(t, life[j].After(life[i]), "a late %s never undoes %s", life[j], life[i])
				}
			}
		}
	}
	assert.False(t, a55.Status("CONFIRMED").After(a55.StatusRefunded), "a late confirmed, in any case, never undoes refunded")
	assert.False(t, a55.StatusChargebackRequested.After(a55.StatusChargebackReversed), "a late chargeback_requested never reopens a reversed dispute")
	for _, s := range a55.Statuses() {
		assert.False(t, s.After(s), "%s is not after itself", s)
		if s.Final() {
			for _, t2 := range a55.Statuses() {
				assert.False(t, t2.After(s), "nothing follows the final %s (%s)", s, t2)
			}
		}
	}
	assert.True(t, a55.StatusRefundError.After(a55.StatusPaid), "a refund failed")
	assert.True(t, a55.StatusPaid.After(a55.StatusRefundError), "refund_error is a step: the charge is captured still (times decide: TestChargeStateOrderByTime)")
	assert.True(t, a55.StatusConfirmed.After(""), "anything moves an unknown charge on")
	assert.False(t, a55.Status("on_hold").After(a55.StatusConfirmed), "an undocumented status is not ordered without times")
}

// Of one stage, and for undocumented statuses, the times decide; a
// captured status after refund_error moves the charge back unless it is
// older.
func TestChargeStateOrderByTime(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s a55.Status, d time.Duration) a55.ChargeState {
		return a55.ChargeState{Status: s, UpdatedAt: t0.Add(d)}
	}
	assert.True(t, at(a55.StatusConfirmed, time.Minute).After(at(a55.StatusConfirmed, 0)))
	assert.False(t, at(a55.StatusConfirmed, 0).After(at(a55.StatusConfirmed, time.Minute)))
	assert.False(t, at(a55.StatusConfirmed, time.Hour).After(at(a55.StatusRefunded, 0)), "a final status stands whatever the times")
	assert.True(t, at("on_hold", time.Minute).After(at(a55.StatusConfirmed, 0)), "an undocumented status by its time")
	assert.False(t, at("on_hold", 0).After(at(a55.StatusConfirmed, time.Minute)))
	assert.True(t, at(a55.StatusConfirmed, time.Minute).After(at(a55.StatusRefundError, 0)), "a refund failed, a later partial refund went through")
	assert.False(t, at(a55.StatusConfirmed, 0).After(at(a55.StatusRefundError, time.Minute)), "the confirmation from before the failed refund")
	assert.Equal(t, a55.ChargeState{Status: a55.StatusPaid, UpdatedAt: t0}, a55.StateOf(&a55.Charge{Status: a55.StatusPaid, UpdatedAt: t0}))
}
