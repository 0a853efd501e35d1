package a55test

import (
	"time"

	"github.com/payonce/payonce/internal/fake/a55fake"
)

// The codes of A55's code-response page an Answer gives (Answer.Code).
// The sandbox's test cards give the declines (TestCard).
const (
	// AnswerTimeout: the acquirer did not answer in time. 504 in the
	// charge-level shape; with Answer.Executed the charge was made (or the
	// move made) all the same and the answer names it. Never stored under
	// the key: a blind retry with the same key runs again, and the ledger
	// shows the double charge.
	AnswerTimeout = a55fake.AnswerTimeout
	// AnswerDuplicateRequest: the key was already used. 409 in the
	// charge-level shape naming the charge the key made or moved last;
	// answered whatever the idempotency store holds; nothing runs.
	AnswerDuplicateRequest = a55fake.AnswerDuplicateRequest
	// Answer3DSRequired: a credit card charge without
	// threeds_authentication needs 3DS. The charge is made in status error
	// with the code, its url_3ds leading to the fake's challenge page
	// (Complete3DS, Fail3DS, Abandon3DS then end it). 400.
	Answer3DSRequired = a55fake.Answer3DSRequired
	// Answer3DSUnavailable: 3DS is down for a while. 503, nothing runs.
	Answer3DSUnavailable = a55fake.Answer3DSUnavailable
	// AnswerProcessingError: an internal failure. 500, nothing runs.
	AnswerProcessingError = a55fake.AnswerProcessingError
)

// Charge statuses an Answer names (Answer.Status, Answer.Then).
const (
	StatusConfirmed   = a55fake.StatusConfirmed
	StatusDeclined    = a55fake.StatusDeclined
	StatusError       = a55fake.StatusError
	StatusPreCaptured = a55fake.StatusPreCaptured // a capture answered pre_captured: paid once the acquirer confirms
	StatusRefundError = a55fake.StatusRefundError // a refund answered refund_error: nothing went back
)

// Shapes of a code's answer (Answer.Shape).
const (
	ShapeCharge  = a55fake.ShapeCharge  // {"charge_uuid","status":"error","message":[{code,source,description}]}, the default
	ShapeGeneral = a55fake.ShapeGeneral // {"error":{"code","message","details"},"request_id"}
)

// ErrInvalidAnswer is the error of an Answer the fake cannot apply.
var ErrInvalidAnswer = a55fake.ErrInvalidAnswer

// Answer makes the fake answer the requests it matches with one of A55's
// codes (Code) or a move's status (Status) instead of the operation's
// own, as AddFault does with network faults. It matches a request on
// every field set among Path (a trailing "*" matches a prefix) and
// IdempotencyKey, and only where the answer applies: TIMEOUT,
// DUPLICATE_REQUEST and PROCESSING_ERROR on a charge's create, capture,
// refund and cancel; 3DS_REQUIRED on a credit card charge with card
// fields and no threeds_authentication; 3DS_UNAVAILABLE on a charge with
// card fields; StatusPreCaptured on a capture; StatusRefundError on a
// refund. A request is answered only once it would run: a body the
// reference refuses still gets its 422, a move the charge does not take
// its 409, a key whose answer is stored its replay (DUPLICATE_REQUEST
// alone answers ahead of the store). Nth, Probability and Count work as
// in payoncetest.Rule (Count 0: every matching request); rules are
// tried in the order added.
//
//	// The charge is made and confirmed, the answer lost to the acquirer's timeout:
//	srv.AddAnswer(a55test.Answer{Code: a55test.AnswerTimeout, Executed: true, Path: a55test.ChargePath, Count: 1})
//	// ... a client that sends the key again blindly charges twice:
//	srv.Ledger().Count(key) // 2
type Answer struct {
	// Code is one of the Answer* codes; or
	Code string
	// Status is StatusPreCaptured (a capture) or StatusRefundError (a refund).
	Status string

	Path           string
	IdempotencyKey string
	Nth            int
	Probability    float64
	Count          int

	// HTTPStatus is the answer's status: by default 504 for TIMEOUT, 409
	// for DUPLICATE_REQUEST, 400 for 3DS_REQUIRED, 503 for
	// 3DS_UNAVAILABLE, 500 for PROCESSING_ERROR, 200 for a status. A code
	// takes a 4xx or 5xx (DUPLICATE_REQUEST and 3DS_REQUIRED a 4xx; 400
	// for the documented variant of DUPLICATE_REQUEST); 3DS_REQUIRED also
	// takes 200, which is stored, so the key answers the same for good.
	HTTPStatus int
	// Executed (TIMEOUT): the operation ran all the same: the charge was
	// made and the answer names it, or the move was made. Without it
	// nothing ran and a create's answer names no charge.
	Executed bool
	// Then (TIMEOUT with Executed, a card charge with card fields and no
	// 3DS): where the charge ends: StatusConfirmed (the default),
	// StatusDeclined (CARD_DECLINED) or StatusError (code TIMEOUT).
	Then string
	// After: how long, on the fake's clock, the charge waits in status
	// pending before it ends as Then (TIMEOUT with Executed), or before
	// its capture is confirmed and it is paid (StatusPreCaptured). Zero: a
	// TIMEOUT's charge ends at once; a pre_captured one waits for
	// ConfirmCapture.
	After time.Duration
	// Hold (TIMEOUT with Executed): the charge stays pending until
	// ConfirmAtAcquirer, DeclineAtAcquirer or FailAtAcquirer ends it.
	Hold bool
	// OmitChargeUUID leaves charge_uuid out of the answer of TIMEOUT,
	// DUPLICATE_REQUEST or 3DS_REQUIRED, whatever ran.
	OmitChargeUUID bool
	// NoChallenge (3DS_REQUIRED): no url_3ds; the charge ends in error.
	NoChallenge bool
	// Shape of a code's answer: ShapeCharge (the default) or ShapeGeneral.
	Shape string
	// RetryAfter adds Retry-After: RetryAfter seconds to a code's answer.
	RetryAfter int
}

func (a Answer) rule() a55fake.AnswerRule {
	return a55fake.AnswerRule{Code: a.Code, Status: a.Status, Path: a.Path, IdempotencyKey: a.IdempotencyKey, Nth: a.Nth,
		Probability: a.Probability, Count: a.Count, HTTPStatus: a.HTTPStatus, Executed: a.Executed, Then: a.Then,
		After: a.After, Hold: a.Hold, OmitChargeUUID: a.OmitChargeUUID, NoChallenge: a.NoChallenge, Shape: a.Shape,
		RetryAfter: a.RetryAfter}
}

// AddAnswer makes the fake give an answer on demand; an Answer it cannot
// apply (no Code nor Status, Executed on another code than TIMEOUT, ...)
// is an error wrapping ErrInvalidAnswer. Reset removes the answers, as it
// removes the fault rules; the admin API's /_fakepay/a55/answers lists
// them with their counters.
func (s *Server) AddAnswer(a Answer) error { return s.fake.AddAnswer(a.rule()) }

// ClearAnswers removes every answer AddAnswer added.
func (s *Server) ClearAnswers() { s.fake.ClearAnswers() }
