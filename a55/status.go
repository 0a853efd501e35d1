package a55

import "github.com/payonce/payonce/internal/corekit"

// Status is the status of an A55 charge (https://docs.a55.tech). A55's
// pages spell statuses in lower case; an answer may not, so every check
// that decides success or failure compares with Is, never with ==.
type Status string

// Charge statuses A55 documents: the charge webhook page's twelve, the
// status lifecycle page's pre_captured and chargeback, the quickstart's
// declined and the PIX pages' expired (docs/a55.md, "Statuses").
const (
	StatusConfirmed               Status = "confirmed"
	StatusPending                 Status = "pending"
	StatusIssued                  Status = "issued"
	StatusCanceled                Status = "canceled"
	StatusPaid                    Status = "paid"
	StatusError                   Status = "error"
	StatusRefunded                Status = "refunded"
	StatusRefundError             Status = "refund_error"
	StatusChargebackRequested     Status = "chargeback_requested"
	StatusChargebackRefunded      Status = "chargeback_refunded"
	StatusChargebackReversed      Status = "chargeback_reversed"
	StatusPreChargebackResolution Status = "pre_chargeback_resolution"
	StatusPreCaptured             Status = "pre_captured"
	StatusChargeback              Status = "chargeback"
	StatusDeclined                Status = "declined"
	StatusExpired                 Status = "expired"
)

// Statuses lists every documented status.
func Statuses() []Status {
	return []Status{StatusConfirmed, StatusPending, StatusIssued, StatusCanceled, StatusPaid,
		StatusError, StatusRefunded, StatusRefundError, StatusChargebackRequested,
		StatusChargebackRefunded, StatusChargebackReversed, StatusPreChargebackResolution,
		StatusPreCaptured, StatusChargeback, StatusDeclined, StatusExpired}
}

// Is reports whether s is t without regard to case or surrounding spaces
// (corekit.StatusIs): "ERROR", "Error" and " error" are all StatusError.
func (s Status) Is(t Status) bool { return corekit.StatusIs(s, t) }

// Known reports whether s is one of the documented statuses, in any case.
// Answers with another status are still decoded: A55 may add statuses.
func (s Status) Known() bool {
	return s.canonical() != ""
}

// Failed reports whether s says the charge failed: error or declined, in
// any case. A charge created in one of them is a failure of the create
// (*ChargeError); a lookup that finds one settles the create as failed.
func (s Status) Failed() bool { return s.Is(StatusError) || s.Is(StatusDeclined) }

// settled reports whether s says what became of a charge whose create was
// in doubt: a known status that is neither issued nor pending (A55 has
// not heard from the acquirer yet) is an outcome; an unknown one is not.
func (s Status) settled() bool {
	c := s.canonical()
	return c != "" && c != StatusIssued && c != StatusPending
}

// canonical is the documented spelling of s (lower case), or "" when s is
// no documented status.
func (s Status) canonical() Status {
	for _, k := range Statuses() {
		if s.Is(k) {
			return k
		}
	}
	return ""
}
