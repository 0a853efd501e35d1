package payonce

import (
	"errors"
	"net"
	"net/http"
)

// lostAnswer says how an attempt's answer was lost, if it was: the
// operation may have executed under the key, and a provider that keeps
// only 2xx answers would execute a re-send again (Request.BeforeResend).
type lostAnswer uint8

const (
	answerKept      lostAnswer = iota // an answer came, or nothing was sent
	answerLostOnWay                   // a transport failure once the request may have left
	answerLost5xx                     // a 5xx answer: lost unless it carries a code of the provider's
)

// noteLost records how the attempt that just ended lost its answer: err
// is its transport or read failure, resp its answer (when err is nil).
func (op *operation) noteLost(resp *http.Response, err error) {
	switch {
	case err != nil && mayHaveLeft(err):
		op.lost = answerLostOnWay
	case err == nil && resp != nil && resp.StatusCode >= 500:
		op.lost = answerLost5xx
	}
}

// mayHaveLeft reports whether a request that failed with err may have
// reached the server: anything but a connection never made.
func mayHaveLeft(err error) bool {
	var opErr *net.OpError
	return !(errors.As(err, &opErr) && opErr.Op == "dial")
}

// lookBeforeResend is asked before an attempt (not a redirect hop): when
// the last attempt's answer was lost and the request has a BeforeResend,
// the operation is looked up first. A refusal stops the loop, nothing
// sent: a lookupStop, which failure turns into ErrOutcomeUnknown.
func (op *operation) lookBeforeResend() error {
	lost := op.lost
	op.lost = answerKept
	if lost == answerKept || op.req.BeforeResend == nil || op.key == "" {
		return nil
	}
	// A 5xx carrying a code of the provider's is its own answer: it says
	// what it did (a code that asks for a retry ran nothing). errAnswer is
	// the last answer, decoded by checkRetry when the codec advises.
	if lost == answerLost5xx && op.errAnswer != nil && op.errAnswer.Code != "" {
		return nil
	}
	found, err := op.req.BeforeResend(op.ctx, op.keyValue())
	switch {
	case err != nil:
		if cerr := op.ctx.Err(); cerr != nil {
			return cerr
		}
		return &stopError{err: &lookupStop{why: "looking the operation up failed: " + err.Error()}}
	case found:
		return &stopError{err: &lookupStop{found: true, why: "the operation was found at the provider"}}
	}
	op.debug("payonce lookup found nothing: sending again")
	return nil
}

// lookupStop ends the attempt loop after a lost answer: the lookup found
// the operation, or could not tell. Nothing more is sent under the key;
// it is ErrOutcomeUnknown, never resumable. Its text is the lookup's
// alone: a lookup's own failure (a 401, say) is no kind of the call's.
type lookupStop struct {
	found bool
	why   string
}

func (e *lookupStop) Error() string {
	return "an attempt's answer was lost and " + e.why + ": nothing sent again under the key"
}

// Is reports ErrOutcomeUnknown.
func (e *lookupStop) Is(target error) bool { return target == ErrOutcomeUnknown }
