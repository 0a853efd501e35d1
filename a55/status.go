package a55

// Status is the status of an A55 charge (https://docs.a55.tech).
type Status string

// Charge statuses A55 documents.
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
)

// Statuses lists every documented status.
func Statuses() []Status {
	return []Status{StatusConfirmed, StatusPending, StatusIssued, StatusCanceled, StatusPaid,
		StatusError, StatusRefunded, StatusRefundError, StatusChargebackRequested,
		StatusChargebackRefunded, StatusChargebackReversed, StatusPreChargebackResolution}
}

// Known reports whether s is one of the documented statuses. Answers with
// another status are still decoded: A55 may add statuses.
func (s Status) Known() bool {
	for _, k := range Statuses() {
		if s == k {
			return true
		}
	}
	return false
}
