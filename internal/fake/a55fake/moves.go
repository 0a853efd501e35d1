package a55fake

import (
	"net/http"
	"time"

	"github.com/payonce/payonce/internal/fake/fakeserver"
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

// confirmLocked authorises c at the acquirer: confirmed, captured
// unless the request asked for an authorisation only (capture false).
func confirmLocked(c *charge) {
	c.Status = StatusConfirmed
	if c.capture {
		c.Captured = c.Amount
	} else {
		c.authorised = true
	}
}

// refundTake checks a refund of amount (nil: all that remains) of c and
// returns what it would take.
func refundTake(c *charge, amount *decimal) (decimal, *moveError) {
	rem := c.remaining()
	switch {
	case c.Status == StatusCanceled:
		return decimal{}, conflict("REFUND_NOT_ALLOWED", "the charge was canceled")
	case !settled(c):
		return decimal{}, conflict("REFUND_NOT_ALLOWED", "only a captured charge (confirmed, paid or refund_error) with an amount remaining can be refunded")
	}
	if amount != nil {
		if rem.less(*amount) {
			return decimal{}, conflict("REFUND_NOT_ALLOWED", "the amount is above amount_remaining "+rem.text(c.places()))
		}
		return *amount, nil
	}
	return rem, nil
}

// refundLocked refunds amount (nil: all that remains) of a captured
// charge; all of it makes the charge refunded, part of it lowers
// amount_remaining and keeps the status (after a failed refund, the
// status before it). It returns what was refunded.
func refundLocked(c *charge, amount *decimal) (decimal, *moveError) {
	take, err := refundTake(c, amount)
	if err != nil {
		return decimal{}, err
	}
	c.Refunded = c.Refunded.add(take)
	switch {
	case c.remaining().isZero():
		c.Status = StatusRefunded
	case c.Status == StatusRefundError:
		c.Status = c.beforeRefundError
	}
	return take, nil
}

// failRefundLocked makes a refund of amount (nil: all that remains) of a
// captured charge fail: refund_error, amount_remaining unchanged. It
// returns the amount that did not go back.
func failRefundLocked(c *charge, amount *decimal) (decimal, *moveError) {
	take, err := refundTake(c, amount)
	if err != nil {
		return decimal{}, err
	}
	if c.Status != StatusRefundError {
		c.beforeRefundError = c.Status
	}
	c.Status = StatusRefundError
	return take, nil
}

// cancelLocked cancels a charge not yet captured or settled: issued,
// pending (a 3DS challenge, a boleto registered, an acquirer's answer
// awaited), one whose 3DS challenge waits, or authorised and not
// captured.
func cancelLocked(c *charge) *moveError {
	switch {
	case c.Status == StatusCanceled:
		return conflict(codeCancelNotAllowed, "the charge was already canceled")
	case c.Status == StatusPreCaptured:
		return conflict(codeCancelNotAllowed, "the charge's capture is on its way to the acquirer; refund it once paid")
	case !c.Captured.isZero():
		return conflict(codeCancelNotAllowed, "the charge has already been settled and cannot be canceled; use refund instead")
	case c.Status == StatusIssued, c.Status == StatusPending, challengeWaits(c), c.Status == StatusConfirmed && c.authorised:
	default:
		return &moveError{status: http.StatusBadRequest, code: codeCancelNotAllowed, desc: "a " + c.Status + " charge cannot be canceled"}
	}
	c.Status, c.authorised, c.required3DS, c.acquirerThen = StatusCanceled, false, false, ""
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

// doMove runs a capture, refund or cancel on the client's charge, or
// gives the answer a rule injects (answers.go) once the move is one the
// charge takes.
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
	trial := *c
	if _, err := moveLocked(&trial, m, amount, nil); err != nil {
		return f.chargeError(err.status, c, err.code, "charge", err.desc)
	}
	ans := f.answerFor(r, site{move: m})
	if ans != nil && (ans.Code == AnswerTimeout && !ans.Executed || ans.Code == AnswerProcessingError) {
		return f.transientAnswer(r, ans, c.UUID)
	}
	before := c.Status
	moved, _ := moveLocked(c, m, amount, ans) // as the trial did
	ev := event{}
	if m == moveRefund {
		ev.refund = &moved
	}
	now := f.e.Clock().Now().UTC()
	c.UpdatedAt = now
	c.messageObject = m == moveCancel
	if c.Status == StatusPreCaptured {
		c.ExpiresAt = time.Time{} // waits for capture.confirmed, or until After
		if ans.After > 0 {
			c.ExpiresAt = now.Add(ans.After)
			f.timeLocked(c)
		}
	}
	if c.Status != before || m == moveRefund {
		f.hooks.enqueue(c, ev)
	}
	op := fakeserver.Operation{Provider: Provider, Kind: m.kind(), IdempotencyKey: r.Key, ID: c.UUID,
		Credential: r.Credential, Amount: moved.text(c.places()), Status: c.Status}
	if ans != nil && ans.Code != "" {
		op.Code = ans.Code
	}
	f.e.Record(op)
	if ans != nil && ans.Code == AnswerTimeout {
		id := c.UUID
		if ans.OmitChargeUUID {
			id = ""
		}
		return f.codeAnswer(ans, id, "", "acquirer", "")
	}
	return f.chargeAnswer(c)
}

// moveLocked makes move m of amount on c and returns the amount it
// moved (a refund that failed: the amount that did not go back): a
// capture answered pre_captured when ans says so, a refund that fails
// when ans says refund_error.
func moveLocked(c *charge, m move, amount *decimal, ans *AnswerRule) (decimal, *moveError) {
	switch m {
	case moveCapture:
		if err := captureLocked(c, amount); err != nil {
			return decimal{}, err
		}
		if ans != nil && ans.Status == StatusPreCaptured {
			c.Status = StatusPreCaptured
		}
		return c.Captured, nil
	case moveRefund:
		if ans != nil && ans.Status == StatusRefundError {
			return failRefundLocked(c, amount)
		}
		return refundLocked(c, amount)
	}
	return c.Amount, cancelLocked(c)
}
