package journal

import (
	"context"
	"errors"
	"time"

	"github.com/payonce/payonce"
)

// Store is a payonce.Journal a recovery worker can also list, claim and
// purge: every backend (NewMemory, sqlitejournal, pgjournal) is one, and
// the payonce command, the chaos run and the conformance suite
// (journaltest) use it.
type Store interface {
	payonce.Journal
	// Pending lists pending entries, oldest first.
	Pending(ctx context.Context, q PendingQuery) ([]payonce.JournalEntry, error)
	// Claim leases pending entries whose lease is free or expired to
	// c.Owner until now+c.Lease, raising each one's fence by one, and
	// returns them, oldest first. A run given payonce.WithLeaseOwner(c.Owner)
	// takes a claimed entry.
	Claim(ctx context.Context, c ClaimRequest) ([]payonce.JournalEntry, error)
	// Purge deletes settled entries last updated before settledBefore and
	// returns how many it deleted. Pending entries are never purged.
	Purge(ctx context.Context, settledBefore time.Time) (int64, error)
}

// PendingQuery selects pending entries. Zero fields select everything.
type PendingQuery struct {
	Scope  string    // only this scope, "" for all
	Before time.Time // only entries last updated before this, zero for all
	Limit  int       // at most this many, 0 for no limit
}

// ClaimRequest asks for pending entries leased to Owner for Lease: only
// entries whose lease is free or expired are claimed.
type ClaimRequest struct {
	Scope string        // only this scope, "" for all
	Owner string        // the claiming worker, non-empty
	Lease time.Duration // lease length, > 0
	Limit int           // at most this many, 0 for no limit
}

// Errors the journals return (wrapped) besides payonce's.
var (
	// ErrInvalidEntry: an entry or request given to a journal is incomplete.
	ErrInvalidEntry = errors.New("journal: invalid entry")
	// ErrWriteInDoubt: a write's context ended while its batch was
	// committing (Batcher.Do); the write may be recorded. Get tells
	// which; a reserved entry found later is resumed with its own key,
	// so acting as if the write failed is safe (see docs/journal.md).
	ErrWriteInDoubt = errors.New("journal: context ended while the write was committing; it may be recorded")
	// ErrBatcherClosed: a write came after the journal was closed
	// (Batcher.Do after Close).
	ErrBatcherClosed = errors.New("journal: closed")
	// ErrNotFound: no entry has this scope and reference (Get, Update,
	// Take).
	ErrNotFound = payonce.ErrJournalNotFound
	// ErrScopeCollision: MoveScope was asked to move a scope's entries
	// into a scope holding one of their references in an entry that may
	// have run (sent, or settled); nothing moved.
	ErrScopeCollision = errors.New("journal: both scopes hold a reference")
	// ErrSettled: a write tried to move a settled entry back to pending or
	// to another outcome; a succeeded entry never changes.
	ErrSettled = payonce.ErrJournalSettled
)
