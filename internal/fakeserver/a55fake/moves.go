package a55fake

import (
	"net/http"

	"github.com/payonce/payonce/internal/fakeserver"
)

// A refused move answers 409 in the charge-level shape (a charge already
// canceled, settled, or not captured), or 400 CANCEL_NOT_ALLOWED for a
// charge in no cancellable state (cancel-charge page).

// moveError is a refused move: its HTTP status, code and description.
type moveError struct {
	status     int
	code, desc string
}

func (e *moveError) Error() string { return e.desc }

func conflict(code, desc string) *moveError {
	return &moveError{status: http.StatusConflict, code: code, desc: desc}
}

// captureLocked captures an authorised card charge, amount (nil: all of
// it); a partial capture releases the rest. The charge becomes paid.
func captureLocked(c *charge, amount *decimal) *moveError {
	switch {
	case c.Status == StatusCanceled:
		return conflict("CAPTURE_NOT_ALLOWED", "the charge was canceled")
	case !c.Captured.isZero():
		return conflict("CAPTURE_NOT_ALLOWED", "the charge was already captured")
	case c.Status != StatusConfirmed || !c.authorised:
		return conflict("CAPTURE_NOT_ALLOWED", "only an authorised charge (capture false) can be captured")
	}
	take := c.Amount
	if amount != nil {
		if c.Amount.less(*amount) {
			return conflict("CAPTURE_NOT_ALLOWED", "the amount is above the authorised "+c.Amount.text(c.places()))
		}
		take = *amount
	}
	c.Captured, c.authorised, c.Status = take, false, StatusPaid
	return nil
}

// refundLocked refunds amount (nil: all that remains) of a captured
// charge; all of it makes the charge refunded, part of it lowers
// amount_remaining and keeps the status. It returns what was refunded.
func refundLocked(c *charge, amount *decimal) (decimal, *moveError) {
	rem := c.remaining()
	switch {
	case c.Status == StatusCanceled:
		return decimal{}, conflict("REFUND_NOT_ALLOWED", "the charge was canceled")
	case c.Status != StatusConfirmed && c.Status != StatusPaid || rem.isZero():
		return decimal{}, conflict("REFUND_NOT_ALLOWED", "only a captured charge (confirmed or paid) with an amount remaining can be refunded")
	}
	take := rem
	if amount != nil {
		if rem.less(*amount) {
			return decimal{}, conflict("REFUND_NOT_ALLOWED", "the amount is above amount_remaining "+rem.text(c.places()))
		}
		take = *amount
	}
	c.Refunded = c.Refunded.add(take)
	if c.remaining().isZero() {
		c.Status = StatusRefunded
	}
	return take, nil
}

// cancelLocked cancels a charge not yet captured or settled: issued,
// pending, or authorised and not captured.
func cancelLocked(c *charge) *moveError {
	switch {
	case c.Status == StatusCanceled:
		return conflict(codeCancelNotAllowed, "the charge was already canceled")
	case !c.Captured.isZero():
		return conflict(codeCancelNotAllowed, "the charge has already been settled and cannot be canceled; use refund instead")
	case c.Status == StatusIssued, c.Status == StatusPending, c.Status == StatusConfirmed && c.authorised:
	default:
		return &moveError{status: http.StatusBadRequest, code: codeCancelNotAllowed, desc: "a " + c.Status + " charge cannot be canceled"}
	}
	c.Status, c.authorised = StatusCanceled, false
	return nil
}

// moveRequest is a capture, refund or cancel as sent.
type moveRequest struct {
	chargeUUID, walletUUID string
	amount                 string // the amount's text, "" when none
}

// The operations that move a charge.
type move int

const (
	moveCapture move = iota
	moveRefund
	moveCancel
)

func (m move) kind() string {
	return [...]string{"charge.capture", "charge.refund", "charge.cancel"}[m]
}

// captureHandler serves POST /api/v1/bank/wallet/charge/capture/
// {charge_uuid, wallet_uuid, amount?}.
func (f *Fake) captureHandler(r *fakeserver.Request) fakeserver.Response {
	obj, bad := f.parseBody(r.Body, false)
	if bad != nil {
		return *bad
	}
	var c checks
	c.walk("", obj, captureFields, false)
	if !c.ok() {
		return c.answer(f)
	}
	return f.doMove(r, moveCapture, moveRequest{chargeUUID: obj.str("charge_uuid"), walletUUID: obj.str("wallet_uuid"), amount: obj.number("amount")})
}

// pathMoveHandler serves the reference's path forms
// .../charge/{charge_uuid}/refund/{wallet_uuid}/ and .../cancel/...,
// whose body is optional ({} or {"amount", "reason"}).
func (f *Fake) pathMoveHandler(m move, chargeUUID, walletUUID string) func(*fakeserver.Request) fakeserver.Response {
	return func(r *fakeserver.Request) fakeserver.Response {
		obj, bad := f.parseBody(r.Body, true)
		if bad != nil {
			return *bad
		}
		fs := cancelFields
		if m == moveRefund {
			fs = refundFields
		}
		var c checks
		c.walk("", obj, fs, false)
		if !c.ok() {
			return c.answer(f)
		}
		return f.doMove(r, m, moveRequest{chargeUUID: chargeUUID, walletUUID: walletUUID, amount: obj.number("amount")})
	}
}

// guideMoveHandler serves the guide's body forms /charge/refund/ and
// /charge/cancel/: the identifiers in the body, wallet_uuid optional, an
// amount as a number or a decimal string.
func (f *Fake) guideMoveHandler(m move) func(*fakeserver.Request) fakeserver.Response {
	return func(r *fakeserver.Request) fakeserver.Response {
		obj, bad := f.parseBody(r.Body, false)
		if bad != nil {
			return *bad
		}
		var c checks
		fs := guideMoveFields
		if m == moveCancel {
			fs = []field{guideMoveFields[0], guideMoveFields[1], guideMoveFields[3]}
		}
		c.walk("", obj, fs, false)
		if !c.ok() {
			return c.answer(f)
		}
		return f.doMove(r, m, moveRequest{chargeUUID: obj.str("charge_uuid"), walletUUID: obj.str("wallet_uuid"), amount: obj.number("amount")})
	}
}

// doMove runs a capture, refund or cancel on the client's charge.
func (f *Fake) doMove(r *fakeserver.Request, m move, in moveRequest) fakeserver.Response {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, resp := f.findLocked(r.Credential, in.chargeUUID, in.walletUUID)
	if resp != nil {
		return *resp
	}
	var amount *decimal
	if in.amount != "" {
		var ch checks
		d, ok := ch.checkAmount("amount", in.amount, c.places(), true)
		if !ok {
			return ch.answer(f)
		}
		amount = &d
	}
	before := c.Status
	var err *moveError
	var moved decimal
	ev := event{}
	switch m {
	case moveCapture:
		err = captureLocked(c, amount)
		moved = c.Captured
	case moveRefund:
		moved, err = refundLocked(c, amount)
		ev = event{refund: &moved}
	case moveCancel:
		err = cancelLocked(c)
		moved = c.Amount
	}
	if err != nil {
		return f.chargeError(err.status, c, err.code, "charge", err.desc)
	}
	c.UpdatedAt = f.e.Clock().Now().UTC()
	c.messageObject = m == moveCancel
	if c.Status != before || m == moveRefund {
		f.hooks.enqueue(c, ev)
	}
	f.e.Record(fakeserver.Operation{Provider: Provider, Kind: m.kind(), IdempotencyKey: r.Key, ID: c.UUID,
		Credential: r.Credential, Amount: moved.text(c.places())})
	return f.chargeAnswer(c)
}
