package a55test

import (
	"github.com/payonce/payonce/internal/fake/a55fake"
)

// Event is a change A55's side makes to a charge outside any call of the
// merchant's: a payer pays a PIX or a boleto, passes, fails or leaves a
// 3DS challenge, a card network opens and settles a chargeback, a refund
// is made on A55's dashboard. Server.Trigger (and the methods named
// after each event) makes one happen now and fires the signed webhook A55
// sends, as Stripe's CLI trigger does; the admin API
// (POST /_fakepay/a55/charges/{charge_uuid}/events) and the console do the
// same.
type Event string

// The events and the statuses they lead to.
const (
	EventPixPaid                 = Event(a55fake.EventPixPaid)                 // issued PIX → paid
	EventPixExpired              = Event(a55fake.EventPixExpired)              // issued PIX → expired
	EventBoletoRegistered        = Event(a55fake.EventBoletoRegistered)        // issued boleto → pending (registered at the bank)
	EventBoletoPaid              = Event(a55fake.EventBoletoPaid)              // issued or pending boleto → paid
	EventBoletoExpired           = Event(a55fake.EventBoletoExpired)           // issued or pending boleto → canceled
	Event3DSCompleted            = Event(a55fake.Event3DSCompleted)            // pending challenge → the card's outcome (confirmed, or error/declined by its last digit)
	Event3DSFailed               = Event(a55fake.Event3DSFailed)               // pending challenge → error, 3DS_FAILED
	Event3DSAbandoned            = Event(a55fake.Event3DSAbandoned)            // pending challenge → canceled
	EventRefund                  = Event(a55fake.EventRefund)                  // captured → refunded, or amount_remaining lowered
	EventChargebackRequested     = Event(a55fake.EventChargebackRequested)     // captured card charge → chargeback_requested
	EventChargebackPreResolution = Event(a55fake.EventChargebackPreResolution) // chargeback_requested → pre_chargeback_resolution
	EventChargebackReversed      = Event(a55fake.EventChargebackReversed)      // disputed → chargeback_reversed
	EventChargebackRefunded      = Event(a55fake.EventChargebackRefunded)      // disputed → chargeback_refunded
	EventChargebackLost          = Event(a55fake.EventChargebackLost)          // disputed or captured card charge → chargeback (the dispute lost)
	EventRefundFailed            = Event(a55fake.EventRefundFailed)            // captured → refund_error, amount_remaining unchanged
	EventCaptureSubmitted        = Event(a55fake.EventCaptureSubmitted)        // authorised card charge → pre_captured (A55 captured it itself)
	EventCaptureConfirmed        = Event(a55fake.EventCaptureConfirmed)        // pre_captured → paid
	EventAcquirerConfirmed       = Event(a55fake.EventAcquirerConfirmed)       // pending at the acquirer after a TIMEOUT → confirmed
	EventAcquirerDeclined        = Event(a55fake.EventAcquirerDeclined)        // pending at the acquirer after a TIMEOUT → declined, CARD_DECLINED
	EventAcquirerFailed          = Event(a55fake.EventAcquirerFailed)          // pending at the acquirer after a TIMEOUT → error, TIMEOUT
)

// Timing of the fake's asynchronous life, on its clock: what waits ends
// by itself (with its webhook) once Clock().Advance passes its time.
const (
	// PixLifetime: a PIX charge made without a due date (the guide's body)
	// expires this long after it was made; with one, at the end of that
	// date (23:59:59 UTC).
	PixLifetime = a55fake.PixLifetime
	// BoletoLifetime: a boleto made without a due date is canceled this
	// long after it was made; with one, at the end of that date.
	BoletoLifetime = a55fake.BoletoLifetime
	// ThreeDSTimeout: a 3DS challenge left this long is abandoned (the
	// charge is canceled).
	ThreeDSTimeout = a55fake.ThreeDSTimeout
)

// Errors of Trigger and the event methods (errors.Is).
var (
	ErrUnknownCharge   = a55fake.ErrUnknownCharge   // no charge has the UUID
	ErrUnknownEvent    = a55fake.ErrUnknownEvent    // not one of the events
	ErrEventNotAllowed = a55fake.ErrEventNotAllowed // the charge's method or status does not take the event
	ErrInvalidAmount   = a55fake.ErrInvalidAmount   // a refund amount that is not a positive amount of the charge's currency
)

// Trigger makes ev happen to the charge now and fires its webhook (when
// the charge has a webhook_url; DeliverDueWebhooks waits for it).
// amount applies to EventRefund and EventRefundFailed (a decimal such as
// "10.50"; "" is all that remains), reason to EventChargebackRequested
// and EventChargebackLost ("" is "fraud", or the open chargeback's). It
// returns the charge's status after the event.
func (s *Server) Trigger(chargeUUID string, ev Event, amount, reason string) (status string, err error) {
	res, err := s.fake.Trigger(chargeUUID, a55fake.Event(ev), a55fake.TriggerOptions{Amount: amount, Reason: reason})
	return res.Status, err
}

func (s *Server) trigger(chargeUUID string, ev Event) error {
	_, err := s.Trigger(chargeUUID, ev, "", "")
	return err
}

// PayPix pays an issued PIX charge, as the payer scanning its QR code:
// paid.
func (s *Server) PayPix(chargeUUID string) error { return s.trigger(chargeUUID, EventPixPaid) }

// ExpirePix lets an issued PIX charge expire now: expired.
func (s *Server) ExpirePix(chargeUUID string) error { return s.trigger(chargeUUID, EventPixExpired) }

// RegisterBoleto marks an issued boleto registered at the bank: pending.
func (s *Server) RegisterBoleto(chargeUUID string) error {
	return s.trigger(chargeUUID, EventBoletoRegistered)
}

// PayBoleto pays a boleto, as the bank confirming it through CIP: paid.
func (s *Server) PayBoleto(chargeUUID string) error { return s.trigger(chargeUUID, EventBoletoPaid) }

// ExpireBoleto lets a boleto reach its due date unpaid now: canceled.
func (s *Server) ExpireBoleto(chargeUUID string) error {
	return s.trigger(chargeUUID, EventBoletoExpired)
}

// Complete3DS passes the charge's 3DS challenge: the card is then
// authorised or refused by its last digit, as on the sandbox
// (confirmed, or error/declined with the card's code).
func (s *Server) Complete3DS(chargeUUID string) error {
	return s.trigger(chargeUUID, Event3DSCompleted)
}

// Fail3DS fails the charge's 3DS challenge: error, code 3DS_FAILED.
func (s *Server) Fail3DS(chargeUUID string) error { return s.trigger(chargeUUID, Event3DSFailed) }

// Abandon3DS leaves the charge's 3DS challenge unanswered: canceled.
func (s *Server) Abandon3DS(chargeUUID string) error {
	return s.trigger(chargeUUID, Event3DSAbandoned)
}

// Refund refunds a captured charge from A55's side (its dashboard), not
// through the API: amount (a decimal; "" for all that remains) leaves
// the status and lowers amount_remaining, or makes the charge refunded.
// Its webhook carries refund_amount.
func (s *Server) Refund(chargeUUID, amount string) error {
	_, err := s.Trigger(chargeUUID, EventRefund, amount, "")
	return err
}

// Chargeback opens a chargeback on a captured card charge:
// chargeback_requested, its webhook carrying reason ("" is "fraud").
// PIX and boleto have no chargebacks.
func (s *Server) Chargeback(chargeUUID, reason string) error {
	_, err := s.Trigger(chargeUUID, EventChargebackRequested, "", reason)
	return err
}

// ChargebackPreResolution moves an open chargeback to
// pre_chargeback_resolution.
func (s *Server) ChargebackPreResolution(chargeUUID string) error {
	return s.trigger(chargeUUID, EventChargebackPreResolution)
}

// ReverseChargeback settles an open chargeback for the merchant:
// chargeback_reversed.
func (s *Server) ReverseChargeback(chargeUUID string) error {
	return s.trigger(chargeUUID, EventChargebackReversed)
}

// RefundChargeback settles an open chargeback for the payer:
// chargeback_refunded, nothing left to refund.
func (s *Server) RefundChargeback(chargeUUID string) error {
	return s.trigger(chargeUUID, EventChargebackRefunded)
}

// ChargeStatus returns a charge's status now and the events it takes.
func (s *Server) ChargeStatus(chargeUUID string) (status string, events []Event, err error) {
	res, err := s.fake.ChargeState(chargeUUID)
	if err != nil {
		return "", nil, err
	}
	for _, e := range res.Events {
		events = append(events, Event(e))
	}
	return res.Status, events, nil
}

// LoseChargeback ends a chargeback lost by the merchant: chargeback
// (status-lifecycle's terminal status), nothing left to refund. It takes
// an open chargeback, or a captured card charge (a dispute opened and
// lost at once, as the signed webhook page shows it); reason ("" keeps
// the open chargeback's, else "fraud") goes in the webhook.
func (s *Server) LoseChargeback(chargeUUID, reason string) error {
	_, err := s.Trigger(chargeUUID, EventChargebackLost, "", reason)
	return err
}

// FailRefund makes a refund of a captured charge fail from A55's side:
// refund_error, amount_remaining unchanged; its webhook carries the
// amount (a decimal; "" for all that remains) as refund_amount. A later
// refund (Refund, or the API's) still takes the charge.
func (s *Server) FailRefund(chargeUUID, amount string) error {
	_, err := s.Trigger(chargeUUID, EventRefundFailed, amount, "")
	return err
}

// SubmitCapture captures an authorised card charge from A55's side (its
// automatic capture): pre_captured until ConfirmCapture.
func (s *Server) SubmitCapture(chargeUUID string) error {
	return s.trigger(chargeUUID, EventCaptureSubmitted)
}

// ConfirmCapture confirms a pre_captured charge's capture, as its
// acquirer does: paid.
func (s *Server) ConfirmCapture(chargeUUID string) error {
	return s.trigger(chargeUUID, EventCaptureConfirmed)
}

// ConfirmAtAcquirer ends a charge left pending by an Answer of TIMEOUT
// (Hold or After): the acquirer authorised it, confirmed.
func (s *Server) ConfirmAtAcquirer(chargeUUID string) error {
	return s.trigger(chargeUUID, EventAcquirerConfirmed)
}

// DeclineAtAcquirer ends a charge left pending by an Answer of TIMEOUT:
// declined, CARD_DECLINED.
func (s *Server) DeclineAtAcquirer(chargeUUID string) error {
	return s.trigger(chargeUUID, EventAcquirerDeclined)
}

// FailAtAcquirer ends a charge left pending by an Answer of TIMEOUT: the
// acquirer never answered, error with code TIMEOUT.
func (s *Server) FailAtAcquirer(chargeUUID string) error {
	return s.trigger(chargeUUID, EventAcquirerFailed)
}
