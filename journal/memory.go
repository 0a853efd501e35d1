// Package journal holds the in-memory journal a merchant's tests call
// (NewMemory, given to payonce.WithJournal) and what the journal backends
// share: Store, the queries (PendingQuery, ClaimRequest) and the errors.
// The durable journals are sqlitejournal.Open and pgjournal.Open. See
// docs/journal.md for when to use a journal.
//
// The rest is for backend authors: every backend checks its arguments and
// applies the stored-state rules with the same functions (CheckReserve,
// CheckUpdate, TakeRefusal and the other Check and Refusal functions,
// rules.go and inboxrules.go), stores times as StoredTime gives them, and
// may group its writes into one transaction with a Batcher and RunBatch
// (batch.go). The conformance suites in journaltest hold every backend to
// the same behaviour.
package journal

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/corekit"
)

// Memory is an in-memory payonce.Journal for tests and single-process
// tools: it is safe for concurrent use but forgets everything when the
// process ends. Use sqlitejournal or pgjournal for durability.
type Memory struct {
	mu       sync.Mutex
	entries  map[entryID]*payonce.JournalEntry
	now      func() time.Time
	ownClock bool // WithClock was given: Now reports it
	// inbox holds the inbox's events (memoryinbox.go), made on first use.
	inbox map[eventKey]*payonce.InboxEvent
}

type entryID struct{ scope, reference string }

// NewMemory returns an empty in-memory journal.
func NewMemory() *Memory {
	return &Memory{entries: map[entryID]*payonce.JournalEntry{}, now: time.Now}
}

// WithClock sets the journal's own clock and returns m: leases, the times
// Reserve and Update fill in, and Now (so the client measures key ages on
// it, as on PostgreSQL) follow it.
func (m *Memory) WithClock(now func() time.Time) *Memory {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.now, m.ownClock = now, true
	return m
}

// Reserve inserts e as pending unless (Scope, Reference) exists.
func (m *Memory) Reserve(ctx context.Context, e payonce.JournalEntry) (payonce.JournalEntry, bool, error) {
	if err := ctx.Err(); err != nil {
		return payonce.JournalEntry{}, false, err
	}
	if err := CheckReserve(e); err != nil {
		return payonce.JournalEntry{}, false, err
	}
	return m.reserve(e)
}

// ReserveTx is Reserve for an entry that may lack a Fingerprint (the
// first run binds the fingerprint of the body it sends, see Take), as the
// SQL backends' ReserveTx accepts; memory has no transactions to join.
func (m *Memory) ReserveTx(ctx context.Context, e payonce.JournalEntry) (payonce.JournalEntry, bool, error) {
	if err := ctx.Err(); err != nil {
		return payonce.JournalEntry{}, false, err
	}
	if err := CheckReserveTx(e); err != nil {
		return payonce.JournalEntry{}, false, err
	}
	return m.reserve(e)
}

func (m *Memory) reserve(e payonce.JournalEntry) (payonce.JournalEntry, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	id := entryID{e.Scope, e.Reference}
	if old, ok := m.entries[id]; ok {
		return clone(*old), false, nil
	}
	now := StoredTime(m.now())
	e = NormalizeReserve(e, now)
	if e.LeaseOwner != "" {
		e.LeaseUntil = now.Add(corekit.ReserveLease(e.Lease))
	}
	e.Lease = 0 // an input, never stored
	c := clone(e)
	m.entries[id] = &c
	return clone(e), true, nil
}

// Update records an outcome, under the precedence and fence rules of
// payonce.Journal.
func (m *Memory) Update(ctx context.Context, e payonce.JournalEntry) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := CheckState(e.State); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.updateLocked(e)
}

// updateLocked is Update's write, m.mu held: the entry it wrote stays
// under the lock for a caller that changes more of it (Unsend).
func (m *Memory) updateLocked(e payonce.JournalEntry) error {
	old, ok := m.entries[entryID{e.Scope, e.Reference}]
	if !ok {
		return fmt.Errorf("journal: update %q: %w", e.Reference, ErrNotFound)
	}
	if err := CheckUpdate(*old, e); err != nil {
		return err
	}
	old.State, old.Result, old.StatusCode, old.RequestID, old.Replayed = e.State, append([]byte(nil), e.Result...), e.StatusCode, e.RequestID, e.Replayed
	old.ResourceID = e.ResourceID
	old.ErrorKind, old.ErrorCode, old.ErrorMessage = e.ErrorKind, e.ErrorCode, e.ErrorMessage
	old.Attempts, old.LastCause, old.SettleReason = max(old.Attempts, e.Attempts), e.LastCause, e.SettleReason
	old.UpdatedAt = e.UpdatedAt
	if old.UpdatedAt.IsZero() {
		old.UpdatedAt = m.now()
	}
	old.UpdatedAt = StoredTime(old.UpdatedAt)
	old.LeaseOwner, old.LeaseUntil = "", time.Time{}
	return nil
}

// Take gives a pending entry to the run r.LeaseOwner (payonce.Journal.Take).
func (m *Memory) Take(ctx context.Context, r payonce.JournalEntry) (payonce.JournalEntry, error) {
	if err := ctx.Err(); err != nil {
		return payonce.JournalEntry{}, err
	}
	if err := CheckTake(r); err != nil {
		return payonce.JournalEntry{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[entryID{r.Scope, r.Reference}]
	if !ok {
		return payonce.JournalEntry{}, fmt.Errorf("journal: take %q: %w", r.Reference, ErrNotFound)
	}
	now := StoredTime(m.now())
	if err := TakeRefusal(*e, r, now); err != nil {
		return clone(*e), err
	}
	e.Fence++
	e.LeaseOwner, e.LeaseUntil, e.UpdatedAt = r.LeaseOwner, now.Add(r.Lease), now
	if e.Fingerprint == "" {
		e.Fingerprint = r.Fingerprint
	}
	return clone(*e), nil
}

// BeginAttempt checks and records, before an attempt is sent, that the
// run's fence is current (payonce.Journal.BeginAttempt).
func (m *Memory) BeginAttempt(ctx context.Context, r payonce.JournalEntry) (payonce.JournalEntry, error) {
	if err := ctx.Err(); err != nil {
		return payonce.JournalEntry{}, err
	}
	if err := CheckAttempt(r); err != nil {
		return payonce.JournalEntry{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[entryID{r.Scope, r.Reference}]
	if !ok {
		return payonce.JournalEntry{}, fmt.Errorf("journal: attempt %q: %w", r.Reference, ErrNotFound)
	}
	if err := AttemptRefusal(*e, r); err != nil {
		return clone(*e), err
	}
	now := StoredTime(m.now())
	e.Sent, e.Attempts = true, e.Attempts+1
	e.LeaseOwner, e.LeaseUntil, e.UpdatedAt = r.LeaseOwner, now.Add(r.Lease), now
	return clone(*e), nil
}

// Now returns the clock given to WithClock, or the zero time: without one
// the memory journal measures with the machine's clock, as the client does.
func (m *Memory) Now(ctx context.Context) (time.Time, error) {
	if err := ctx.Err(); err != nil {
		return time.Time{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.ownClock {
		return time.Time{}, nil
	}
	return StoredTime(m.now()), nil
}

// Get returns the entry of (scope, reference).
func (m *Memory) Get(ctx context.Context, scope, reference string) (payonce.JournalEntry, error) {
	if err := ctx.Err(); err != nil {
		return payonce.JournalEntry{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[entryID{scope, reference}]
	if !ok {
		return payonce.JournalEntry{}, fmt.Errorf("journal: get %q: %w", reference, ErrNotFound)
	}
	return clone(*e), nil
}

// Pending lists pending entries, oldest first.
func (m *Memory) Pending(ctx context.Context, q PendingQuery) ([]payonce.JournalEntry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.pendingLocked(q.Scope, q.Before, q.Limit, nil), nil
}

func (m *Memory) pendingLocked(scope string, before time.Time, limit int, keep func(*payonce.JournalEntry) bool) []payonce.JournalEntry {
	var out []payonce.JournalEntry
	for _, e := range m.entries {
		if e.State != payonce.JournalPending || (scope != "" && e.Scope != scope) {
			continue
		}
		if !before.IsZero() && !e.UpdatedAt.Before(before) {
			continue
		}
		if keep != nil && !keep(e) {
			continue
		}
		out = append(out, clone(*e))
	}
	SortEntries(out)
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out
}

// Claim leases free or expired pending entries to c.Owner.
func (m *Memory) Claim(ctx context.Context, c ClaimRequest) ([]payonce.JournalEntry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := CheckClaim(c.Owner, c.Lease); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := StoredTime(m.now())
	sel := m.pendingLocked(c.Scope, time.Time{}, c.Limit, func(e *payonce.JournalEntry) bool {
		return e.LeaseOwner == "" || !e.LeaseUntil.After(now)
	})
	until := now.Add(c.Lease)
	for i := range sel {
		e := m.entries[entryID{sel[i].Scope, sel[i].Reference}]
		e.Fence++
		e.LeaseOwner, e.LeaseUntil = c.Owner, until
		sel[i] = clone(*e)
	}
	return sel, nil
}

// Purge deletes settled entries last updated before settledBefore.
func (m *Memory) Purge(ctx context.Context, settledBefore time.Time) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var n int64
	for id, e := range m.entries {
		if e.Settled() && e.UpdatedAt.Before(settledBefore) {
			delete(m.entries, id)
			n++
		}
	}
	return n, nil
}

func clone(e payonce.JournalEntry) payonce.JournalEntry {
	if e.Result != nil {
		e.Result = append([]byte(nil), e.Result...)
	}
	return e
}
