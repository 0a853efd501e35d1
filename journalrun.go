package payonce

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/payonce/payonce/redact"
)

// journalRun is what one journaled run holds: the entry's reference, the
// run's identity as a lease owner, and the fence it took the entry with.
type journalRun struct {
	ref   string
	owner string
	lease time.Duration
	fence int64
	// settled is the entry a BeginAttempt found settled: its recorded
	// outcome is the run's answer, nothing more is sent.
	settled *JournalEntry
	// fenced: a BeginAttempt found the entry taken over by another run.
	fenced bool
	// beginErr is a BeginAttempt that failed: nothing was sent.
	beginErr error
	// everSent: an attempt may have been sent under the entry, by this
	// run or an earlier one (the entry's Sent, or a BeginAttempt of ours).
	everSent bool
	// inherited: the entry was taken with an attempt of an earlier run
	// that may have been sent. That run may be paused between its check
	// and its bytes leaving, so its attempt may still execute after any
	// answer this run gets: a failure is never final for the key here.
	inherited bool
	// reserved: the run created the entry, at reservedAt (monotonic), and
	// its first attempt has not gone yet (see beginAttempt).
	reserved   bool
	reservedAt time.Time
	// attempts is the entry's attempt count as last read (a reservation
	// counts the attempt it precedes; BeginAttempt each other one).
	attempts int
}

// heldEntries are the journal entries a client's runs hold, with the fence
// each holds: a run of the client that takes an entry another of its runs
// holds shows here, where no lease can stop it (they share an owner).
type heldEntries struct {
	mu sync.Mutex
	m  map[heldKey]int64
}

type heldKey struct{ scope, ref string }

func (h *heldEntries) set(k heldKey, fence int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		h.m = map[heldKey]int64{}
	}
	h.m[k] = fence
}

// holds reports whether fence is the latest a run of the client took k with.
func (h *heldEntries) holds(k heldKey, fence int64) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	f, ok := h.m[k]
	return ok && f == fence
}

// drop forgets k when fence still holds it: the run is over.
func (h *heldEntries) drop(k heldKey, fence int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if f, ok := h.m[k]; ok && f == fence {
		delete(h.m, k)
	}
}

// WithLeaseOwner runs a journaled call as owner: it takes an entry leased
// to owner (a worker's Claim) instead of being refused while that lease
// runs. Without it a call's owner is its client's (a random identity
// made by NewClient): a process takes back its own entries at once, and
// another process is refused (ErrJournalLeased) until the lease ends.
func WithLeaseOwner(owner string) CallOption {
	return func(o *callOptions) { o.leaseOwner = owner }
}

// journalClock follows the journal's clock (PostgreSQL's now()): a
// reading of it and the monotonic time it was taken at, so that the
// journal's present is the reading plus the time elapsed since.
type journalClock struct {
	mu    sync.Mutex
	asked bool      // Now was asked once
	own   bool      // the journal has a clock of its own
	at    time.Time // the last reading
	mono  time.Time // time.Now() at the last reading (monotonic)
}

// journalClockStale is how old a reading may be before Now is asked again.
const journalClockStale = 5 * time.Minute

// now returns the journal's present, asking the journal when it has no
// recent reading; ok is false for a journal without a clock of its own.
func (c *Client) journalNow(ctx context.Context) (t time.Time, ok bool, err error) {
	jc := c.jclock
	jc.mu.Lock()
	if jc.asked && (!jc.own || time.Since(jc.mono) < journalClockStale) {
		defer jc.mu.Unlock()
		if !jc.own {
			return time.Time{}, false, nil
		}
		return jc.at.Add(time.Since(jc.mono)), true, nil
	}
	jc.mu.Unlock()
	at, err := c.journal.Now(ctx)
	if err != nil {
		return time.Time{}, false, err
	}
	jc.mu.Lock()
	defer jc.mu.Unlock()
	jc.asked, jc.own = true, !at.IsZero()
	if !jc.own {
		return time.Time{}, false, nil
	}
	jc.at, jc.mono = at, time.Now()
	return at, true, nil
}

// observeJournalTime takes a time the journal just wrote with its own
// clock (an entry's UpdatedAt after Take or BeginAttempt) as a reading.
func (c *Client) observeJournalTime(at time.Time) {
	jc := c.jclock
	if at.IsZero() {
		return
	}
	jc.mu.Lock()
	defer jc.mu.Unlock()
	if jc.asked && jc.own {
		jc.at, jc.mono = at, time.Now()
	}
}

// journalPresent is the journal's present by the last reading, without
// asking it; ok is false when the journal has no clock of its own.
func (c *Client) journalPresent() (time.Time, bool) {
	jc := c.jclock
	jc.mu.Lock()
	defer jc.mu.Unlock()
	if !jc.asked || !jc.own {
		return time.Time{}, false
	}
	return jc.at.Add(time.Since(jc.mono)), true
}

// WithJournalLease sets how long a journaled run leases its entry from
// each attempt (default: the attempt timeout, plus the longest wait before
// the next attempt, plus 10 s). While the lease runs, another call with the
// reference is refused with ErrJournalLeased (nothing sent); a run that
// crashed blocks its entry that long. A lease shorter than an attempt is
// safe (a run taken over stops before its next attempt, and both send the
// same key) but lets a second run start while the first is sending.
func WithJournalLease(d time.Duration) Option {
	return func(c *Client) error {
		if d <= 0 {
			return fmt.Errorf("%w: journal lease must be above 0", ErrInvalidConfig)
		}
		c.journalLease = d
		return nil
	}
}

// runLease is how long a run's lease lasts from each BeginAttempt: one
// attempt, the longest wait before the next, and a margin to reach it.
func (op *operation) runLease() time.Duration {
	if op.c.journalLease > 0 {
		return op.c.journalLease
	}
	return op.timeout + max(op.policy.MaxRetryAfter, op.policy.MaxInterval) + 10*time.Second
}

// journaled runs op under the journal: reserve (or take) the entry before
// the first byte is sent, check the fence before every attempt, record
// the outcome.
func (op *operation) journaled(ref string, out any, start time.Time) (Meta, error) {
	c := op.c
	owner := op.opts.leaseOwner
	if owner == "" {
		owner = c.leaseOwner
	}
	op.jr = &journalRun{ref: ref, owner: owner, lease: op.runLease()}
	jnow, own, err := c.journalNow(op.ctx)
	if err != nil {
		return op.journalMeta(start, ref), op.fail(op.journalKind(), fmt.Errorf("journal clock: %w", err))
	}
	now := c.now()
	if own {
		now = jnow
		if op.createdNow {
			op.created = jnow // a key made now: its age on the journal's clock
		}
	}
	if err := op.checkCreated(now); err != nil {
		return op.journalMeta(start, ref), err
	}
	// A run reserves right before its first attempt: the entry is created
	// "may have been sent", and that attempt's check is the reservation
	// itself (beginAttempt).
	e := JournalEntry{
		Scope: c.scope, Reference: ref,
		Operation: op.req.Operation, Method: op.req.Method, Path: c.redactor().Stored(op.req.Path),
		Key: op.key, KeyCreated: op.created,
		Fingerprint: c.Fingerprint(op.req.Method, op.req.Path, op.body),
		State:       JournalPending, LeaseOwner: owner, Sent: true, Attempts: 1, Lease: op.jr.lease,
	}
	hk := heldKey{c.scope, ref}
	reservedAt := time.Now()
	stored, created, err := c.journal.Reserve(op.ctx, e)
	if err != nil {
		return op.journalMeta(start, ref), op.fail(op.journalKind(), fmt.Errorf("reserve: %w", err))
	}
	defer func() { c.held.drop(hk, op.jr.fence) }()
	if created {
		op.jr.fence, op.jr.reserved, op.jr.reservedAt, op.jr.attempts = stored.Fence, true, reservedAt, stored.Attempts
		c.held.set(hk, stored.Fence)
		if own {
			c.observeJournalTime(stored.UpdatedAt)
		}
	} else {
		op.key, op.created = stored.Key, stored.KeyCreated
		if err := c.rules.Validate(stored.Key); err != nil {
			return op.journalMeta(start, ref), op.fail(keyKind(err), err)
		}
		e.Fingerprint = c.fingerprintLike(stored.Fingerprint, op.req.Method, op.req.Path, op.body)
		if !sameRequest(stored, e) {
			return op.journalMeta(start, ref), op.conflict(ref)
		}
		if stored.Settled() {
			return op.answerFromEntry(stored, out, start)
		}
		if stored.Sent {
			// In doubt and past its window: answered without taking the
			// entry, nothing sent (a never-sent entry is taken, below, to
			// be recorded as not executed).
			if refusal := op.storedAgeRefusal(); refusal != nil {
				return op.journalMeta(start, ref), op.fail(ErrOutcomeUnknown, &OutcomeUnknownError{Entry: stored, Cause: refusal.Kind})
			}
		}
		taken, err := c.journal.Take(op.ctx, TakeRequest{Scope: stored.Scope, Reference: ref, Owner: owner, Lease: op.jr.lease, Fingerprint: e.Fingerprint})
		switch {
		case errors.Is(err, ErrJournalSettled) && taken.Settled():
			return op.answerFromEntry(taken, out, start)
		case errors.Is(err, ErrIdempotencyConflict):
			return op.journalMeta(start, ref), op.conflict(ref)
		case errors.Is(err, ErrJournalLeased):
			return op.journalMeta(start, ref), op.fail(ErrJournalLeased, fmt.Errorf("reference %q: %w", ref, err))
		case err != nil:
			return op.journalMeta(start, ref), op.fail(op.journalKind(), fmt.Errorf("take: %w", err))
		}
		op.jr.fence, op.jr.everSent, op.jr.inherited, op.jr.attempts = taken.Fence, taken.Sent, taken.Sent, taken.Attempts
		c.held.set(hk, taken.Fence)
		if own {
			c.observeJournalTime(taken.UpdatedAt)
		}
		if err := op.checkStoredAge(taken); err != nil {
			return op.journalMeta(start, ref), err
		}
	}
	meta, runErr := op.execute(out, start)
	meta.Reference = ref
	return op.record(meta, runErr, out, start)
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
func (op *operation) answerFromEntry(e JournalEntry, out any, start time.Time) (Meta, error) {
	if e.State == JournalSucceeded {
		return op.fromJournal(e, out, start)
	}
	return op.journalMeta(start, e.Reference), op.storedError(e, out)
}

// checkCreated refuses a key creation time beyond KeyClockTolerance ahead
// of now (the clock the age is measured on): it would make the key look
// younger than it is. Nothing is sent.
func (op *operation) checkCreated(now time.Time) *APIError {
	if op.created.After(now.Add(KeyClockTolerance)) {
		return op.fail(ErrKeyCreatedInFuture, fmt.Errorf("created %s, %s ahead of the clock",
			op.created.UTC().Format(time.RFC3339), op.created.Sub(now).Round(time.Second)))
	}
	return nil
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
		return op.fail(ErrOutcomeUnknown, &OutcomeUnknownError{Entry: e, Cause: refusal.Kind})
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
	case op.created.After(now.Add(KeyClockTolerance)):
		return op.checkCreated(now)
	case !op.keyFresh(0):
		return op.fail(ErrKeyExpired, fmt.Errorf("key created %s is past its window", op.created.UTC().Format(time.RFC3339)))
	}
	return nil
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

// beginAttempt is the journal's check before one attempt: the run's fence
// is current, the entry pending; the entry is marked as maybe sent and
// its lease renewed. On a refusal nothing is sent.
func (op *operation) beginAttempt() error {
	jr := op.jr
	if jr.reserved {
		// The first attempt of a run that just created the entry: the
		// reservation marked it sent and holds its lease, which refuses
		// every other owner, and no run of this client took it since.
		// Checking again would add a durable write to every operation.
		// Only the client's own identity makes the lease exclusive to
		// its runs: an owner given with WithLeaseOwner may be shared by
		// other clients, whose takes this client's registry never sees.
		jr.reserved = false
		if jr.owner == op.c.leaseOwner && time.Since(jr.reservedAt)+op.timeout < jr.lease && op.c.held.holds(heldKey{op.c.scope, jr.ref}, jr.fence) {
			jr.everSent = true
			return nil
		}
	}
	got, err := op.c.journal.BeginAttempt(op.ctx, AttemptRequest{Scope: op.c.scope, Reference: jr.ref, Fence: jr.fence, Owner: jr.owner, Lease: jr.lease})
	switch {
	case err == nil:
		jr.everSent, jr.attempts = true, got.Attempts
		op.c.observeJournalTime(got.UpdatedAt)
		return nil
	case errors.Is(err, ErrJournalSettled) && got.Settled():
		jr.settled = &got
	case errors.Is(err, ErrJournalFenced):
		jr.fenced = true
	}
	jr.beginErr = err
	return err
}

// record writes the run's outcome under the precedence rules: a 2xx lands
// whatever the fence and is the caller's answer; a failure final for the
// key is recorded failed, any other leaves the entry pending.
func (op *operation) record(meta Meta, runErr error, out any, start time.Time) (Meta, error) {
	c, jr := op.c, op.jr
	if jr.settled != nil && runErr != nil {
		// Settled by another run or by Settle before an attempt of ours:
		// its outcome is the answer, nothing more was sent.
		m, err := op.answerFromEntry(*jr.settled, out, start)
		m.Attempts = op.attempts
		return m, err
	}
	up := JournalEntry{Scope: c.scope, Reference: jr.ref, Fence: jr.fence, Attempts: jr.attempts}
	var apiErr *APIError
	if runErr != nil && !jr.everSent && op.attempts == 0 && errors.As(runErr, &apiErr) && errors.Is(apiErr.Kind, ErrKeyExpired) {
		// Refused before any attempt was ever sent under the entry (the
		// key aged out while the run waited): recorded as not executed,
		// never as in doubt.
		op.recordNotSent(up, apiErr)
		return meta, apiErr
	}
	up.StatusCode, up.RequestID, up.Replayed = meta.StatusCode, meta.RequestID, meta.Replayed
	switch {
	case runErr == nil:
		up.State = JournalSucceeded
		up.Result = op.c.redactor().JSON(op.respBody)
	case jr.fenced:
		// Taken over before an attempt: this run records nothing more
		// and sends nothing more; the entry's holder settles it.
		return meta, runErr
	case errors.As(runErr, &apiErr):
		kind := apiErr.Kind
		if kind == nil {
			kind = KindForStatus(apiErr.StatusCode)
		}
		up.ErrorKind, up.ErrorCode, up.ErrorMessage = KindName(kind), op.c.redactor().Stored(apiErr.Code), op.c.redactor().Stored(apiErr.Message)
		if apiErr.StatusCode != 0 {
			up.StatusCode = apiErr.StatusCode
		}
		if op.finalForKey(apiErr) && !op.jr.inherited {
			up.State = JournalFailed
			up.Result = op.c.redactor().JSON(op.respBody) // the codec rebuilds the same error from it
		} else {
			up.State = JournalPending
			up.LastCause = op.c.redactor().Stored(kind.Error())
			if op.lastCause != "" {
				up.LastCause += " (" + op.lastCause + ")"
			}
			if op.jr.inherited && op.finalForKey(apiErr) {
				up.LastCause += " (an earlier run's attempt may still execute)"
			}
		}
	default:
		up.State = JournalPending
		up.LastCause = "unknown error"
	}
	// The outcome is recorded even when the caller's context ended with
	// the operation: an unrecorded success would stay pending.
	uctx, cancel := context.WithTimeout(context.WithoutCancel(op.ctx), journalWriteTimeout)
	defer cancel()
	err := c.journal.Update(uctx, up)
	switch {
	case err == nil && apiErr != nil && up.State == JournalPending && op.jr.inherited && op.finalForKey(apiErr):
		// A refusal final for the key, but an earlier run's attempt under
		// it may still execute (its run paused between its check and its
		// bytes leaving): it is not the outcome, and the caller must not
		// read it as "nothing charged". Its text stays; its kind does not.
		stored := up
		stored.Key, stored.KeyCreated = op.key, op.created
		e := op.fail(ErrOutcomeUnknown, &OutcomeUnknownError{Entry: stored, Refusal: apiErr.summary()})
		e.StatusCode, e.Code, e.Message, e.RequestID, e.Replayed = apiErr.StatusCode, apiErr.Code, apiErr.Message, apiErr.RequestID, apiErr.Replayed
		return meta, e
	case err == nil:
		return meta, runErr
	case runErr == nil && errors.Is(err, ErrJournalSettled):
		// Another run recorded the success first: the same operation
		// under the same key. This run's answer is the caller's.
		return meta, nil
	case runErr != nil && (errors.Is(err, ErrJournalSettled) || errors.Is(err, ErrJournalFenced)):
		// Another run settled the entry or took it over: a settled
		// outcome is the operation's; a taken-over one is its to settle.
		if got, gerr := c.journal.Get(uctx, c.scope, jr.ref); gerr == nil && got.Settled() {
			m, aerr := op.answerFromEntry(got, out, start)
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
				e.StatusCode, e.Code, e.Message, e.RequestID, e.Replayed = apiErr.StatusCode, apiErr.Code, apiErr.Message, apiErr.RequestID, apiErr.Replayed
			}
			return meta, e
		}
		return meta, runErr
	}
	e := op.fail(ErrJournal, &JournalWriteError{Outcome: runErr, Err: err})
	if apiErr != nil {
		e.StatusCode, e.Code, e.Message, e.RequestID, e.Replayed = apiErr.StatusCode, apiErr.Code, apiErr.Message, apiErr.RequestID, apiErr.Replayed
	}
	return meta, e
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

// journalStop is the error that stops a run whose BeginAttempt failed:
// ErrJournalFenced when another run took the entry over or settled it,
// ErrJournal when the journal could not answer. Nothing was sent.
func journalStop(err error) error {
	if errors.Is(err, ErrJournalFenced) || errors.Is(err, ErrJournalSettled) {
		return fmt.Errorf("%w: stopped before an attempt: %w", ErrJournalFenced, err)
	}
	return fmt.Errorf("%w: before an attempt: %w", ErrJournal, err)
}
