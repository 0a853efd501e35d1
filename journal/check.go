package journal

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/payonce/payonce"
)

// ErrInvalidEntry: an entry or request given to a journal is incomplete.
var ErrInvalidEntry = errors.New("journal: invalid entry")

// CheckReserve validates an entry given to Reserve: scope-and-reference
// identity, a key, its creation time and a fingerprint are required and
// the state must be pending. Backends call it before writing.
func CheckReserve(e payonce.JournalEntry) error {
	switch {
	case e.Reference == "" || len(e.Reference) > payonce.MaxReferenceLen:
		return fmt.Errorf("%w: reference must be 1 to %d bytes", ErrInvalidEntry, payonce.MaxReferenceLen)
	case len(e.Scope) > payonce.MaxReferenceLen:
		return fmt.Errorf("%w: scope longer than %d bytes", ErrInvalidEntry, payonce.MaxReferenceLen)
	case e.Key == "":
		return fmt.Errorf("%w: key required", ErrInvalidEntry)
	case e.KeyCreated.IsZero():
		// Without it the key-age guard would call the entry unknown on
		// the first call: it could never run.
		return fmt.Errorf("%w: key creation time required", ErrInvalidEntry)
	case e.Fingerprint == "":
		return fmt.Errorf("%w: fingerprint required", ErrInvalidEntry)
	case e.State != "" && e.State != payonce.JournalPending:
		return fmt.Errorf("%w: a reserved entry is pending", ErrInvalidEntry)
	}
	return nil
}

// CheckReserveTx validates an entry given to a backend's ReserveTx: like
// CheckReserve, but Fingerprint may be empty (a merchant reserving inside
// its own transaction may not have the exact body bytes yet; Do then does
// not compare bodies for the entry, and the server still refuses another
// body under the key within its window).
func CheckReserveTx(e payonce.JournalEntry) error {
	if e.Fingerprint == "" {
		e.Fingerprint = "-"
	}
	return CheckReserve(e)
}

// CheckState validates a state given to Update.
func CheckState(s payonce.JournalState) error {
	switch s {
	case payonce.JournalPending, payonce.JournalSucceeded, payonce.JournalFailed:
		return nil
	}
	return fmt.Errorf("%w: unknown state %q", ErrInvalidEntry, s)
}

// CheckClaim validates a claim request.
func CheckClaim(c payonce.ClaimRequest) error {
	if c.Owner == "" || c.Lease <= 0 {
		return fmt.Errorf("%w: a claim needs an owner and a positive lease", ErrInvalidEntry)
	}
	return nil
}

// NormalizeReserve fills what Reserve sets itself: state pending, the
// creation and update times (now when zero), all in UTC, and no lease.
func NormalizeReserve(e payonce.JournalEntry, now time.Time) payonce.JournalEntry {
	e.State = payonce.JournalPending
	if e.CreatedAt.IsZero() {
		e.CreatedAt = now
	}
	if e.UpdatedAt.IsZero() {
		e.UpdatedAt = e.CreatedAt
	}
	e.CreatedAt, e.UpdatedAt, e.KeyCreated = Time(e.CreatedAt), Time(e.UpdatedAt), Time(e.KeyCreated)
	e.LeaseOwner, e.LeaseUntil = "", time.Time{}
	return e
}

// Time is t as every backend stores it: UTC, truncated to the microsecond
// (PostgreSQL's precision). Truncation makes a key look older, never
// younger, so the key-age guard stays on the safe side.
func Time(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC().Truncate(time.Microsecond)
}

// SortEntries orders entries oldest first (creation time, then scope and
// reference), the order Pending and Claim return.
func SortEntries(es []payonce.JournalEntry) {
	slices.SortFunc(es, func(a, b payonce.JournalEntry) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		if c := strings.Compare(a.Scope, b.Scope); c != 0 {
			return c
		}
		return strings.Compare(a.Reference, b.Reference)
	})
}
