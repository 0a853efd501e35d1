package a55

import "time"

// ChargeState is what a webhook event (WebhookEvent.State) or a charge
// read from the API says of a charge at one moment: its status and, when
// known, when that status was reached. A55 delivers webhooks out of
// order; After tells a state that moves the charge on from one that
// arrived late (docs/a55.md, "Event order").
type ChargeState struct {
	Status Status
	// UpdatedAt is when the charge reached Status, zero when unknown.
	UpdatedAt time.Time
}

// StateOf is the state of a charge read from the API.
func StateOf(ch *Charge) ChargeState {
	if ch == nil {
		return ChargeState{}
	}
	return ChargeState{Status: ch.Status, UpdatedAt: ch.UpdatedAt}
}

// After reports whether s moves a charge in state prev on: whether a
// merchant holding prev should take s's status. A charge in a final
// status (refunded, chargeback_refunded, chargeback, canceled, expired,
// error, declined) takes nothing after it; otherwise a status later in
// A55's lifecycle (Status.After) moves it on, and one of the same stage
// moves it on when both say when they were reached and s is the later.
// A prev with no status takes anything. An undocumented status is
// ordered by UpdatedAt alone. refund_error is a step, not a stage: the
// captured status it returns to (confirmed, pre_captured or paid) moves
// it on unless UpdatedAt says it is older.
func (s ChargeState) After(prev ChargeState) bool {
	if prev.Status == "" {
		return s.Status != ""
	}
	later := func() bool {
		return !s.UpdatedAt.IsZero() && !prev.UpdatedAt.IsZero() && s.UpdatedAt.After(prev.UpdatedAt)
	}
	a, b := s.Status.stage(), prev.Status.stage()
	switch {
	case b == stageFinal:
		return false
	case a == 0 || b == 0:
		return later()
	case b == stageRefundError && (a == stageConfirmed || a == stagePreCaptured || a == stagePaid):
		return s.UpdatedAt.IsZero() || prev.UpdatedAt.IsZero() || s.UpdatedAt.After(prev.UpdatedAt)
	case a != b:
		return a > b
	}
	return later()
}

// After reports whether a charge in status prev can move to s: s comes
// later in A55's lifecycle (issued, pending, confirmed, pre_captured,
// paid, refund_error, chargeback_requested, pre_chargeback_resolution,
// chargeback_reversed, then the final statuses) and prev is not final.
// So a late confirmed never undoes refunded, and chargeback_requested →
// chargeback_reversed → refunded is followed. See ChargeState.After for
// two statuses of one stage and for undocumented ones.
func (s Status) After(prev Status) bool {
	return ChargeState{Status: s}.After(ChargeState{Status: prev})
}

// Final reports whether s is a status nothing follows: refunded,
// chargeback_refunded, chargeback (the dispute lost), canceled, expired,
// error or declined.
func (s Status) Final() bool { return s.stage() == stageFinal }

// The stages of a charge's life, in order; 0 is an undocumented status.
const (
	stageIssued = iota + 1
	stagePending
	stageConfirmed
	stagePreCaptured
	stagePaid
	stageRefundError
	stageChargebackRequested
	stagePreChargebackResolution
	stageChargebackReversed
	stageFinal
)

// stage is s's place in the lifecycle, 0 for an undocumented status.
func (s Status) stage() int {
	switch s.canonical() {
	case StatusIssued:
		return stageIssued
	case StatusPending:
		return stagePending
	case StatusConfirmed:
		return stageConfirmed
	case StatusPreCaptured:
		return stagePreCaptured
	case StatusPaid:
		return stagePaid
	case StatusRefundError:
		return stageRefundError
	case StatusChargebackRequested:
		return stageChargebackRequested
	case StatusPreChargebackResolution:
		return stagePreChargebackResolution
	case StatusChargebackReversed:
		return stageChargebackReversed
	case StatusRefunded, StatusChargebackRefunded, StatusChargeback, StatusCanceled, StatusExpired, StatusError, StatusDeclined:
		return stageFinal
	}
	return 0
}
