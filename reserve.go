package payonce

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/payonce/payonce/internal/corekit"
	"github.com/payonce/payonce/redact"
)

// reserve is a journaled run's first stage: it reserves (or takes) the
// entry of the call's reference before the first byte is sent. done
// means the journal answered the call (a settled entry, a conflict, a
// refusal): nothing is sent. Every attempt then checks the fence
// (beginAttempt) and record writes the outcome.
func (op *operation) reserve(out any) (m Meta, done bool, err error) {
	c, ref := op.c, op.opts.reference
	owner := op.opts.leaseOwner
	if owner == "" {
		owner = c.leaseOwner
	}
	op.jr = &journalRun{ref: ref, owner: owner, lease: op.runLease()}
	if err := c.placeScopes(op.ctx); err != nil {
		return op.journalMeta(ref), true, op.fail(placementKind(err), err)
	}
	jnow, own, err := c.journalNow(op.ctx)
	if err != nil {
		return op.journalMeta(ref), true, op.fail(op.journalKind(), fmt.Errorf("journal clock: %w", err))
	}
	now := c.now()
	if own {
		now = jnow
		if op.createdNow {
			op.created = jnow // a key made now: its age on the journal's clock
		}
	}
	if err := op.checkCreated(now); err != nil {
		return op.journalMeta(ref), true, err
	}
	// A run reserves right before its first attempt: the entry is created
	// "may have been sent", and that attempt's check is the reservation
	// itself (beginAttempt).
	summary, err := op.summary()
	if err != nil {
		return op.journalMeta(ref), true, op.fail(ErrInvalidRequest, err)
	}
	e := JournalEntry{
		Scope: c.scope, Reference: ref, Summary: summary,
		Operation: op.req.Operation, Method: op.req.Method, Path: c.redactor().Stored(op.req.Path),
		Key: op.key, KeyCreated: op.created,
		Fingerprint: c.Fingerprint(op.req.Method, op.req.Path, op.body),
		State:       JournalPending, LeaseOwner: owner, Sent: true, Attempts: 1, Lease: op.jr.lease,
	}
	hk := heldKey{c.scope, ref}
	reservedAt := time.Now()
	stored, created, err := c.journal.Reserve(op.ctx, e)
	if err != nil {
		return op.journalMeta(ref), true, op.fail(op.journalKind(), fmt.Errorf("reserve: %w", err))
	}
	if created {
		op.jr.fence, op.jr.reserved, op.jr.reservedAt, op.jr.attempts = stored.Fence, true, reservedAt, stored.Attempts
		op.jr.marked = stored.Sent
		c.held.set(hk, stored.Fence)
		if own {
			c.observeJournalTime(stored.UpdatedAt)
		}
		return Meta{}, false, nil
	}
	return op.take(stored, e, own, out)
}

// take takes over an entry another run reserved: the same request under
// the stored key, neither settled nor past its window, and no other owner
// holding its lease. done as for reserve.
func (op *operation) take(stored, e JournalEntry, own bool, out any) (m Meta, done bool, err error) {
	c, ref, owner := op.c, op.jr.ref, op.jr.owner
	hk := heldKey{c.scope, ref}
	op.key, op.created = stored.Key, stored.KeyCreated
	if err := validateKey(c.rules, stored.Key); err != nil {
		return op.journalMeta(ref), true, op.fail(keyKind(err), err)
	}
	mine := e.Fingerprint // the client's own form, as reserve computed it
	e.Fingerprint = c.fingerprintLike(stored.Fingerprint, op.req.Method, op.req.Path, op.body)
	if !sameRequest(stored, e) {
		return op.journalMeta(ref), true, op.conflict(ref)
	}
	if isPlainFingerprint(stored.Fingerprint) {
		// An earlier payonce's plain fingerprint, verified: the entry
		// takes the client's own form before anything else happens.
		replaced, err := c.upgradeFingerprint(op.ctx, stored, mine)
		if err != nil {
			return op.journalMeta(ref), true, op.fail(op.journalKind(), err)
		}
		if replaced {
			stored.Fingerprint, e.Fingerprint = mine, mine
		}
	}
	if stored.Settled() {
		m, err := op.answerFromEntry(stored, out)
		return m, true, err
	}
	if stored.LookUpFirst() {
		// The last answer left the outcome unknown: a lookup settles the
		// entry; no run sends under its key again, nothing is taken.
		return op.journalMeta(ref), true, op.fail(ErrOutcomeUnknown, &outcomeUnknownError{Entry: stored, LookUp: true})
	}
	if stored.Sent {
		// In doubt and past its window: answered without taking the
		// entry, nothing sent (a never-sent entry is taken, below, to
		// be recorded as not executed).
		if refusal := op.storedAgeRefusal(); refusal != nil {
			return op.journalMeta(ref), true, op.fail(ErrOutcomeUnknown, &outcomeUnknownError{Entry: stored, Cause: refusal.Kind})
		}
	}
	taken, err := c.journal.Take(op.ctx, JournalEntry{Scope: stored.Scope, Reference: ref, LeaseOwner: owner, Lease: op.jr.lease, Fingerprint: e.Fingerprint})
	switch {
	case errors.Is(err, corekit.ErrJournalSettled) && taken.Settled():
		m, err := op.answerFromEntry(taken, out)
		return m, true, err
	case errors.Is(err, ErrIdempotencyConflict):
		return op.journalMeta(ref), true, op.conflict(ref)
	case errors.Is(err, ErrJournalLeased):
		return op.journalMeta(ref), true, op.fail(ErrJournalLeased, fmt.Errorf("reference %q: %w", ref, err))
	case err != nil:
		return op.journalMeta(ref), true, op.fail(op.journalKind(), fmt.Errorf("take: %w", err))
	}
	op.jr.fence, op.jr.everSent, op.jr.inherited, op.jr.attempts = taken.Fence, taken.Sent, taken.Sent, taken.Attempts
	c.held.set(hk, taken.Fence)
	if own {
		c.observeJournalTime(taken.UpdatedAt)
	}
	if err := op.checkStoredAge(taken); err != nil {
		return op.journalMeta(ref), true, err
	}
	return Meta{}, false, nil
}

// journalKind is the kind of a journal failure before anything was sent:
// the caller's context error when it ended, else ErrJournal.
func (op *operation) journalKind() error {
	if cerr := op.ctx.Err(); cerr != nil {
		return cerr
	}
	return ErrJournal
}

func (op *operation) conflict(ref string) *APIError {
	return op.fail(ErrIdempotencyConflict, fmt.Errorf("reference %q was recorded with another request", ref))
}

// answerFromEntry answers a settled entry from the journal: nothing sent.
func (op *operation) answerFromEntry(e JournalEntry, out any) (Meta, error) {
	if e.State == JournalSucceeded {
		return op.fromJournal(e, out)
	}
	return op.journalMeta(e.Reference), op.storedError(e, out)
}

// checkStoredAge decides whether a taken entry may be sent again: its key
// creation time must not lie in the future and the key must be inside its
// window on every clock. An entry that may have been sent and cannot be
// sent again is in doubt (ErrOutcomeUnknown); one never sent is recorded
// as not executed, with the refusal's kind returned.
func (op *operation) checkStoredAge(e JournalEntry) *APIError {
	refusal := op.storedAgeRefusal()
	if refusal == nil {
		return nil
	}
	if e.Sent {
		return op.fail(ErrOutcomeUnknown, &outcomeUnknownError{Entry: e, Cause: refusal.Kind})
	}
	op.recordNotSent(e, refusal)
	return refusal
}

// storedAgeRefusal is why the stored key may not be sent (its creation
// time in the future, or past its window on any clock), or nil.
func (op *operation) storedAgeRefusal() *APIError {
	now := op.c.now()
	if jnow, ok := op.c.journalPresent(); ok {
		now = jnow
	}
	switch {
	case op.created.After(now.Add(corekit.KeyClockTolerance)):
		return op.checkCreated(now)
	case op.keyFresh(0) != nil:
		return op.fail(ErrKeyExpired, fmt.Errorf("key created %s is past its window", op.created.UTC().Format(time.RFC3339)))
	}
	return nil
}

// sameRequest reports whether a stored entry was recorded for the request
// e describes: the same fingerprint or, for an entry reserved without one
// (ReserveTx) that no run has bound yet, the same method and path, so
// that a reference never runs another operation under its key.
func sameRequest(stored, e JournalEntry) bool {
	if stored.Fingerprint != "" {
		return stored.Fingerprint == e.Fingerprint
	}
	return (stored.Method == "" || strings.EqualFold(stored.Method, e.Method)) && (stored.Path == "" || redact.Stored(stored.Path) == e.Path)
}
