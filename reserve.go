package payonce

import (
	"context"
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
	return op.reserveEntry(e, own, out, true)
}

// reserveEntry reserves e, the entry of the call's reference, or takes
// the entry the reference holds. A new reservation stands before the
// earlier forms of the client's scope are read for its reference (one
// read by primary key each), so that an earlier process's reservation of
// it made before that read is seen, and nothing is sent under a new key
// while an earlier form holds the reference: the run takes its
// reservation back and answers as earlierHeld does. again: the run may
// reserve once more, after moving an earlier entry in. done as for
// reserve.
func (op *operation) reserveEntry(e JournalEntry, own bool, out any, again bool) (m Meta, done bool, err error) {
	c, ref := op.c, e.Reference
	reservedAt := time.Now()
	stored, created, err := c.journal.Reserve(op.ctx, e)
	if err != nil {
		return op.journalMeta(ref), true, op.fail(op.journalKind(), fmt.Errorf("reserve: %w", err))
	}
	if !created {
		return op.take(stored, e, own, out, again)
	}
	if held, found, err := c.earlierHolder(op.ctx, ref); err != nil || found {
		if berr := op.takeBack(stored); berr != nil {
			// Left marked "may have been sent", as after a crash: a
			// later run finds both entries and is refused.
			err = errors.Join(err, fmt.Errorf("%w: take back the reservation: %w", ErrJournal, berr))
		}
		if err != nil {
			return op.journalMeta(ref), true, op.fail(op.journalKind(), err)
		}
		return op.earlierHeld(held, e, own, out, again)
	}
	op.jr.fence, op.jr.reserved, op.jr.reservedAt, op.jr.attempts = stored.Fence, true, reservedAt, stored.Attempts
	op.jr.marked = stored.Sent
	c.held.set(heldKey{c.scope, ref}, stored.Fence)
	if own {
		c.observeJournalTime(stored.UpdatedAt)
	}
	return Meta{}, false, nil
}

// takeBack takes back the reservation stored the run just made, before
// any byte left under it: the entry stays pending and never sent
// (JournalUnsender), so that an earlier form's entry of its reference
// can move over it (JournalUpgrader.MoveScope).
func (op *operation) takeBack(stored JournalEntry) error {
	up := JournalEntry{Scope: stored.Scope, Reference: stored.Reference, State: JournalPending, Fence: stored.Fence,
		LastCause: "nothing sent: the reference is held under an earlier form of the client's scope"}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(op.ctx), journalWriteTimeout)
	defer cancel()
	if u, ok := op.c.journal.(JournalUnsender); ok {
		return u.Unsend(ctx, up)
	}
	return op.c.journal.Update(ctx, up)
}

// earlierHeld answers a run about to send under a reference that held,
// an entry under an earlier form of the client's scope, holds: nothing
// is sent. When the client owns that scope its entries move into the
// client's (all or none) and the run reserves again, once, to find the
// moved entry and resume it with its key; otherwise, or a second time,
// the run is refused (placeReference). done as for reserve.
func (op *operation) earlierHeld(held, e JournalEntry, own bool, out any, again bool) (Meta, bool, error) {
	c, ref := op.c, e.Reference
	var err error
	if again {
		err = c.placeReference(op.ctx, held)
	} else {
		// Found again right after a move: a process of the earlier
		// version keeps reserving the reference.
		err = &LegacyScopeError{Scope: held.Scope, Own: c.scope, Reference: ref, Pending: 1}
	}
	if err != nil {
		return op.journalMeta(ref), true, op.fail(placementKind(err), err)
	}
	op.jr = &journalRun{ref: ref, owner: op.jr.owner, lease: op.jr.lease}
	return op.reserveEntry(e, own, out, false)
}

// take takes over an entry another run reserved: the same request under
// the stored key, neither settled nor past its window, and no other owner
// holding its lease. Before it takes the entry to send, the earlier forms
// of the client's scope are read for its reference (earlierHeld). done as
// for reserve.
func (op *operation) take(stored, e JournalEntry, own bool, out any, again bool) (m Meta, done bool, err error) {
	c, ref, owner := op.c, op.jr.ref, op.jr.owner
	hk := heldKey{c.scope, ref}
	op.key, op.created = stored.Key, stored.KeyCreated
	if err := validateKey(c.rules, stored.Key); err != nil {
		return op.journalMeta(ref), true, op.fail(keyKind(err), err)
	}
	mine := e.Fingerprint // the client's own form, as reserve computed it
	e.Fingerprint = c.fingerprintLike(stored.Fingerprint, op.req.Method, op.req.Path, op.body)
	if !sameRequest(stored, e) {
		if form, ok := op.earlierForm(stored); ok {
			return op.takeEarlier(stored, form, out)
		}
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
	switch held, found, err := c.earlierHolder(op.ctx, ref); {
	case err != nil:
		return op.journalMeta(ref), true, op.fail(op.journalKind(), err)
	case found:
		e.Fingerprint = mine
		return op.earlierHeld(held, e, own, out, again)
	}
	taken, err := c.journal.Take(op.ctx, JournalEntry{Scope: stored.Scope, Reference: ref, LeaseOwner: owner, Lease: op.jr.lease, Fingerprint: e.Fingerprint})
	switch {
	case errors.Is(err, ErrJournalSettled) && taken.Settled():
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

// earlierForm is the earlier form of the request (Request.EarlierForms)
// stored was recorded with, if any: its fingerprint, in the form stored
// holds it, or for an entry without one, its method and path.
func (op *operation) earlierForm(stored JournalEntry) (EarlierForm, bool) {
	if op.req.EarlierForms == nil {
		return EarlierForm{}, false
	}
	c, method := op.c, op.req.Method
	for _, f := range op.req.EarlierForms() {
		e := JournalEntry{Method: method, Path: c.redactor().Stored(f.Path),
			Fingerprint: c.fingerprintLike(stored.Fingerprint, method, f.Path, f.Body)}
		if sameRequest(stored, e) {
			return f, true
		}
	}
	return EarlierForm{}, false
}

// takeEarlier answers a call whose entry was recorded with an earlier
// form of its request: settled, from the journal, as that form's call
// would have been; in doubt, refused with an *EarlierFormError (kind
// ErrOutcomeUnknown: it is settled by lookup), nothing sent, since its
// key is never sent again with another body. A plain
// fingerprint, verified in its form, is replaced by the client's keyed
// form of the same earlier body first.
func (op *operation) takeEarlier(stored JournalEntry, form EarlierForm, out any) (Meta, bool, error) {
	ref := stored.Reference
	if isPlainFingerprint(stored.Fingerprint) {
		if _, err := op.c.upgradeFingerprint(op.ctx, stored, op.c.Fingerprint(op.req.Method, form.Path, form.Body)); err != nil {
			return op.journalMeta(ref), true, op.fail(op.journalKind(), err)
		}
	}
	if stored.Settled() {
		m, err := op.answerFromEntry(stored, out)
		return m, true, err
	}
	return op.journalMeta(ref), true, op.fail(ErrOutcomeUnknown, &EarlierFormError{Entry: stored})
}

// EarlierFormError is why a call was refused with nothing sent (kind
// ErrOutcomeUnknown, JournalEntryOf gives the entry): the journal entry
// of its reference is in doubt
// and was recorded with an earlier form of the request (an earlier
// version of the typed client's wire form, Request.EarlierForms), and its
// key is never sent again with another body. Settle the entry by looking
// the operation up at the provider, or by hand (Client.Settle).
type EarlierFormError struct {
	Entry JournalEntry
}

// Error names the reference and what settles it, never a body.
func (e *EarlierFormError) Error() string {
	return fmt.Sprintf("reference %q is in doubt and was recorded in an earlier wire form of the request: "+
		"its key is never sent again with another body; settle it by lookup or by hand", e.Entry.Reference)
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
// e describes: the same fingerprint (compared in constant time) or, for an entry reserved without one
// (ReserveTx) that no run has bound yet, the same method and path, so
// that a reference never runs another operation under its key.
func sameRequest(stored, e JournalEntry) bool {
	if stored.Fingerprint != "" {
		return corekit.SameFingerprint(stored.Fingerprint, e.Fingerprint)
	}
	return (stored.Method == "" || strings.EqualFold(stored.Method, e.Method)) && (stored.Path == "" || redact.Stored(stored.Path) == e.Path)
}
