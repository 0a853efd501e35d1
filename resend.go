package payonce

import (
	"errors"
	"net"
	"net/http"
)

// lookBeforeResend is asked by decide once a retry is otherwise decided,
// and once the loop would end resumable with the key (exhausted): a
// resumed call sends the key again as a retry would. When the attempt
// that just ended lost its answer (answerLost) and the request has a
// BeforeResend, the operation is looked up first: found nothing, the
// retry goes on, or the call ends resumable; found it, or cannot tell, a
// lookupStop ends the loop, nothing sent, which failure turns into
// ErrOutcomeUnknown.
func (op *operation) lookBeforeResend(resp *http.Response, err error) error {
	if op.req.BeforeResend == nil || op.key == "" || !op.answerLost(resp, err) {
		return nil
	}
	ref := ""
	if op.jr != nil {
		ref = op.jr.ref
	}
	found, lerr := op.req.BeforeResend(op.ctx, op.keyValue(), ref)
	switch {
	case lerr != nil:
		if cerr := op.ctx.Err(); cerr != nil {
			return cerr
		}
		return &stopError{err: &lookupStop{why: "looking the operation up could not tell: " + lerr.Error()}}
	case found:
		return &stopError{err: &lookupStop{found: true, why: "the operation was found at the provider"}}
	}
	op.debug("payonce lookup after a lost answer found nothing: the key may be sent again")
	return nil
}

// answerLost reports whether the attempt that just ended (its answer
// resp, or its failure err) lost its answer, so that the operation may
// have executed under the key and a provider that keeps only 2xx answers
// would execute a re-send again: a failure once the request may have
// left (anything but a connection never made or a signer that could not
// sign), or a 5xx in which the codec read no code of the provider's (a
// gateway's; a provider's own code says what it did, and one that asks
// for a retry ran nothing). op.errAnswer is resp decoded, when the codec
// advises (decide).
func (op *operation) answerLost(resp *http.Response, err error) bool {
	if err != nil {
		var opErr *net.OpError
		return !errors.Is(err, ErrSignerTemporary) && !(errors.As(err, &opErr) && opErr.Op == "dial")
	}
	return resp != nil && resp.StatusCode >= 500 && (op.errAnswer == nil || op.errAnswer.Code == "")
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
