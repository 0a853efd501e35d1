package payonce

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
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
	// marked: the run marked the entry "may have been sent" (it reserved
	// it so, or a BeginAttempt of its landed). With inherited false and
	// no attempt sent, no byte ever left under it (storePending).
	marked bool
	// signFailed: the signer refused an attempt of the run.
	signFailed bool
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
	return option(func(c *Client) error {
		if d <= 0 {
			return fmt.Errorf("%w: journal lease must be above 0", ErrInvalidConfig)
		}
		c.journalLease = d
		return nil
	})
}

// runLease is how long a run's lease lasts from each BeginAttempt: one
// attempt, the longest wait before the next, and a margin to reach it.
func (op *operation) runLease() time.Duration {
	if op.c.journalLease > 0 {
		return op.c.journalLease
	}
	return op.timeout + max(op.policy.MaxRetryAfter, op.policy.MaxInterval) + 10*time.Second
}

// beginAttempt is the journal's check before one attempt: the run's fence
// is current, the entry pending; the entry is marked as maybe sent and
// its lease renewed. On a refusal nothing is sent. wrote reports a
// write to the journal (it may have waited).
func (op *operation) beginAttempt() (wrote bool, err error) {
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
			return false, nil
		}
	}
	got, err := op.c.journal.BeginAttempt(op.ctx, JournalEntry{Scope: op.c.scope, Reference: jr.ref, Fence: jr.fence, LeaseOwner: jr.owner, Lease: jr.lease})
	switch {
	case err == nil:
		jr.everSent, jr.marked, jr.attempts = true, true, got.Attempts
		op.c.observeJournalTime(got.UpdatedAt)
		return true, nil
	case errors.Is(err, ErrJournalSettled) && got.Settled():
		jr.settled = &got
	case errors.Is(err, ErrJournalFenced):
		jr.fenced = true
	}
	jr.beginErr = err
	return true, err
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
