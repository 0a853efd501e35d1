package payonce

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// record writes the run's outcome under the precedence rules: a 2xx lands
// whatever the fence and is the caller's answer; a failure final for the
// key is recorded failed, any other leaves the entry pending.
func (op *operation) record(meta Meta, runErr error, out any) (Meta, error) {
	c, jr := op.c, op.jr
	meta.Reference, meta.LeaseOwner = jr.ref, jr.owner
	if jr.settled != nil && runErr != nil {
		// Settled by another run or by Settle before an attempt of ours:
		// its outcome is the answer, nothing more was sent.
		m, err := op.answerFromEntry(*jr.settled, out)
		m.Attempts = op.attempts
		return m, err
	}
	up := JournalEntry{Scope: c.scope, Reference: jr.ref, Fence: jr.fence, Attempts: jr.attempts}
	var apiErr *APIError
	if runErr != nil && !jr.inherited && op.attempts == 0 && errors.As(runErr, &apiErr) && errors.Is(apiErr.Kind, ErrKeyExpired) {
		// Refused before any attempt was ever sent under the entry (the
		// key aged out while the run waited, maybe after marking it
		// sent): recorded as not executed, never as in doubt.
		op.recordNotSent(up, apiErr)
		return meta, apiErr
	}
	up.StatusCode, up.RequestID, up.Replayed = meta.StatusCode, meta.RequestID, meta.Replayed
	switch {
	case runErr == nil:
		up.State = JournalSucceeded
		up.Result = op.c.storedAnswer(op.respBody)
		up.ResourceID = op.c.resourceID(op.req.Operation, op.respBody, up.Result)
	case jr.fenced:
		// Taken over before an attempt: this run records nothing more
		// and sends nothing more; the entry's holder settles it.
		return meta, runErr
	case errors.As(runErr, &apiErr):
		op.failedEntry(&up, apiErr)
	default:
		up.State = JournalPending
		up.LastCause = "unknown error"
	}
	// The outcome is recorded even when the caller's context ended with
	// the operation: an unrecorded success would stay pending.
	uctx, cancel := context.WithTimeout(context.WithoutCancel(op.ctx), journalWriteTimeout)
	defer cancel()
	done, err := op.storePending(uctx, up, apiErr)
	if done {
		return meta, apiErr
	}
	switch {
	case err == nil && apiErr != nil && up.State == JournalPending && op.jr.inherited && op.finalForKey(apiErr):
		// A refusal final for the key, but an earlier run's attempt under
		// it may still execute (its run paused between its check and its
		// bytes leaving): it is not the outcome, and the caller must not
		// read it as "nothing charged". Its text stays; its kind does not.
		stored := up
		stored.Key, stored.KeyCreated = op.key, op.created
		e := op.fail(ErrOutcomeUnknown, &outcomeUnknownError{Entry: stored, Refusal: apiErr.summary()})
		e.withAnswerOf(apiErr)
		return meta, e
	case err == nil:
		return meta, runErr
	case runErr == nil && errors.Is(err, ErrJournalSettled):
		// Another run recorded the success first: the same operation
		// under the same key. This run's answer is the caller's.
		return meta, nil
	case runErr != nil && (errors.Is(err, ErrJournalSettled) || errors.Is(err, ErrJournalFenced)):
		return op.overtaken(uctx, meta, runErr, apiErr, err, out)
	}
	e := op.fail(ErrJournal, &JournalWriteError{Outcome: runErr, Err: err})
	if apiErr != nil {
		e.withAnswerOf(apiErr)
	}
	return meta, e
}

// overtaken answers a failed run whose record another run got ahead of
// (err): it settled the entry, whose outcome is the operation's, or took
// it over, leaving it the holder's to settle.
func (op *operation) overtaken(ctx context.Context, meta Meta, runErr error, apiErr *APIError, err error, out any) (Meta, error) {
	// Another run settled the entry or took it over: a settled
	// outcome is the operation's; a taken-over one is its to settle.
	if got, gerr := op.c.journal.Get(ctx, op.c.scope, op.jr.ref); gerr == nil && got.Settled() {
		m, aerr := op.answerFromEntry(got, out)
		m.Attempts = op.attempts
		return m, aerr
	}
	if errors.Is(err, ErrJournalFenced) {
		// Taken over while the attempt was in flight: the holder may
		// still send the same key, which this failure (kept by
		// neither provider) does not stop, so it is not the outcome.
		// Its text stays for the caller; its kind does not.
		what := runErr.Error()
		if apiErr != nil {
			what = apiErr.summary()
		}
		e := op.fail(ErrJournalFenced, fmt.Errorf("the entry was taken over while the last attempt was in flight (it answered %s); call again with the reference for the outcome", what))
		if apiErr != nil {
			e.withAnswerOf(apiErr)
		}
		return meta, e
	}
	return meta, runErr
}

// failedEntry fills e with a run's failure: failed when the answer is
// final for the key (and no earlier run's attempt may still execute),
// else pending with its cause.
func (op *operation) failedEntry(e *JournalEntry, apiErr *APIError) {
	kind := apiErr.Kind
	if kind == nil {
		kind = KindForStatus(apiErr.StatusCode)
	}
	e.ErrorKind, e.ErrorCode, e.ErrorMessage = KindName(kind), op.c.redactor().Stored(apiErr.Code), op.c.redactor().Stored(apiErr.Message)
	if apiErr.StatusCode != 0 {
		e.StatusCode = apiErr.StatusCode
	}
	if op.finalForKey(apiErr) && !op.jr.inherited {
		e.State = JournalFailed
		e.Result = op.c.storedAnswer(op.respBody) // the codec rebuilds the same error from it
		e.ResourceID = op.c.resourceID(op.req.Operation, op.respBody, e.Result)
	} else {
		e.State = JournalPending
		e.LastCause = op.c.redactor().Stored(kind.Error())
		if op.lastCause != "" {
			e.LastCause += " (" + op.lastCause + ")"
		}
		if op.jr.inherited && op.finalForKey(apiErr) {
			e.LastCause += " (an earlier run's attempt may still execute)"
		}
		if errors.Is(kind, ErrOutcomeUnknown) {
			// Looked up before anything is sent again (LookUpFirst): the
			// answer names what to look up (a charge's ID).
			e.Result = op.c.redactor().JSON(op.respBody)
		}
	}
}

// recordNotSent settles an entry no attempt was ever sent under as not
// executed: nothing moved, which its later callers are told.
func (op *operation) recordNotSent(e JournalEntry, refusal *APIError) {
	up := e
	up.Fence = op.jr.fence
	up.State, up.Result, up.StatusCode, up.RequestID, up.Replayed = JournalFailed, nil, 0, "", false
	up.ErrorKind, up.ErrorCode, up.ErrorMessage = KindName(ErrNotExecuted), "", ""
	up.LastCause = ""
	up.SettleReason = "refused before any attempt was sent: " + KindName(refusal.Kind)
	up.UpdatedAt = time.Time{}
	uctx, cancel := context.WithTimeout(context.WithoutCancel(op.ctx), journalWriteTimeout)
	defer cancel()
	if err := op.c.journal.Update(uctx, up); err != nil {
		refusal.Err = errors.Join(refusal.Err, fmt.Errorf("%w: record not executed: %w", ErrJournal, err))
		return
	}
	refusal.Err = errors.Join(refusal.Err, ErrNotExecuted)
}

// withAnswerOf gives e the answer a's status, code, message and request
// ID: e replaces a as the run's error, a's answer stays.
func (e *APIError) withAnswerOf(a *APIError) {
	e.StatusCode, e.Code, e.Message, e.RequestID, e.Replayed = a.StatusCode, a.Code, a.Message, a.RequestID, a.Replayed
}
