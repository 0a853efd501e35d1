package journalkit

import (
	"errors"
	"fmt"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/corekit"
)

// ErrScopeCollision: a scope's entries cannot move into another scope
// holding one of their references (payonce.JournalUpgrader.MoveScope).
var ErrScopeCollision = errors.New("journal: both scopes hold a reference")

// CheckMoveScope validates MoveScope's scopes: two different scopes a
// client could have recorded under (non-empty, printable, at most 255
// bytes).
func CheckMoveScope(from, to string) error {
	for _, s := range []string{from, to} {
		if s == "" || len(s) > corekit.MaxReferenceLen || !corekit.Printable(s) {
			return fmt.Errorf("%w: a scope is 1 to %d bytes of printable UTF-8", ErrInvalidEntry, corekit.MaxReferenceLen)
		}
	}
	if from == to {
		return fmt.Errorf("%w: a scope cannot move into itself", ErrInvalidEntry)
	}
	return nil
}

// CheckReplaceFingerprint validates ReplaceFingerprint's new fingerprint:
// non-empty and not the old one.
func CheckReplaceFingerprint(old, fp string) error {
	if fp == "" || corekit.SameFingerprint(fp, old) {
		return fmt.Errorf("%w: a new fingerprint is required", ErrInvalidEntry)
	}
	return nil
}

// CollisionError is the error of a MoveScope refused because to holds
// reference too, in an entry that may have run.
func CollisionError(from, to, reference string) error {
	return fmt.Errorf("%w: %q and %q both hold reference %q: settle or purge one of them first", ErrScopeCollision, from, to, reference)
}

// GiveWayRefusal is why d, the entry scope to holds of a reference scope
// from holds too, cannot give way to from's entry at now, or nil. An
// entry gives way when it is pending, was never sent (no attempt
// counted) and no live run holds it: its key never left, and from's
// entry, which may have run, is the reference's. Any other is a
// collision; one a live run holds is leased.
func GiveWayRefusal(d payonce.JournalEntry, now time.Time, from, to string) error {
	switch {
	case d.State != payonce.JournalPending || d.Sent || d.Attempts > 0:
		return CollisionError(from, to, d.Reference)
	case d.LeaseOwner != "" && d.LeaseUntil.After(now):
		return LeasedError(to, d.Reference)
	}
	return nil
}

// MovedFence is the fence of an entry moved over one that gave way,
// whose fence was replaced: above it, so that a run still holding the
// replaced entry is fenced.
func MovedFence(moved, replaced int64) int64 { return max(moved, replaced+1) }

// LeasedError is the error of a MoveScope refused because a run holds a
// pending entry of scope (from's, or one of to's that would give way).
func LeasedError(scope, reference string) error {
	return fmt.Errorf("%w: reference %q of scope %q: wait for its run to end", payonce.ErrJournalLeased, reference, scope)
}
