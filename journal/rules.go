package journal

// The checks and rules every backend's journal (payonce.Journal and the
// interfaces beside it) shares. An argument error wraps ErrInvalidEntry;
// a refusal by the stored state wraps one of payonce's journal errors.

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/corekit"
)

// CheckReserve validates an entry given to Reserve: scope-and-reference
// identity, a key, its creation time and a fingerprint are required and
// the state must be pending. Backends call it before writing.
func CheckReserve(e payonce.JournalEntry) error {
	if p := corekit.NameProblem(e.Reference); p != "" {
		return fmt.Errorf("%w: reference %s", ErrInvalidEntry, p)
	}
	if p := corekit.NameProblem(e.Scope); p != "" && e.Scope != "" {
		return fmt.Errorf("%w: scope %s", ErrInvalidEntry, p)
	}
	if p := corekit.NameProblem(e.LeaseOwner); p != "" && e.LeaseOwner != "" {
		return fmt.Errorf("%w: lease owner %s", ErrInvalidEntry, p)
	}
	switch {
	case e.Key == "":
		return fmt.Errorf("%w: key required", ErrInvalidEntry)
	case !corekit.Printable(e.Key):
		return fmt.Errorf("%w: key holds a control or bidirectional formatting character, or is not UTF-8", ErrInvalidEntry)
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
// its own transaction may not have the exact body bytes yet): the first
// run binds the fingerprint of the body it sends (Take), and from then on
// another body under the reference is ErrIdempotencyConflict. A
// fingerprint given must be in a form the client writes
// (payonce.Client.Fingerprint): any other may be an unkeyed hash of a
// body holding card data, which no row keeps.
func CheckReserveTx(e payonce.JournalEntry) error {
	if e.Fingerprint == "" {
		e.Fingerprint = "-"
	} else if !clientFingerprint(e.Fingerprint) {
		return fmt.Errorf("%w: fingerprint is not in a form a client writes (%q or %q and 64 lower-case hex digits, as the client computes it); "+
			"a plain digest of the request would keep an unkeyed hash of card data", ErrInvalidEntry, corekit.FingerprintKeyedPrefix, corekit.FingerprintRedactedPrefix)
	}
	return CheckReserve(e)
}

// clientFingerprint reports a fingerprint of a form the client writes:
// corekit.FingerprintKeyedPrefix (an HMAC under the client's key) or
// corekit.FingerprintRedactedPrefix (a digest of the body without its
// card data), then 64 lower-case hex digits.
func clientFingerprint(fp string) bool {
	for _, p := range []string{corekit.FingerprintKeyedPrefix, corekit.FingerprintRedactedPrefix} {
		if d, ok := strings.CutPrefix(fp, p); ok {
			return len(d) == 64 && strings.Trim(d, "0123456789abcdef") == ""
		}
	}
	return false
}

// CheckTake validates a take request.
func CheckTake(r payonce.JournalEntry) error {
	if r.Reference == "" || r.LeaseOwner == "" || r.Lease <= 0 {
		return fmt.Errorf("%w: a take needs a reference, an owner and a positive lease", ErrInvalidEntry)
	}
	return nil
}

// CheckAttempt validates an attempt request.
func CheckAttempt(r payonce.JournalEntry) error {
	if r.Reference == "" || r.LeaseOwner == "" || r.Lease <= 0 {
		return fmt.Errorf("%w: an attempt needs a reference, an owner and a positive lease", ErrInvalidEntry)
	}
	return nil
}

// CheckUpdate applies the precedence and fence rules of Update to the
// stored entry old and the write e: nil when e may land. A success lands
// on a pending or failed entry whatever its fence; any other write needs
// a pending entry and the stored fence; a succeeded entry never changes.
// The SQL backends state the same rules in their UPDATE statements.
func CheckUpdate(old, e payonce.JournalEntry) error {
	switch {
	case old.State == payonce.JournalSucceeded:
		return fmt.Errorf("journal: update %q from %s to %s: %w", e.Reference, old.State, e.State, payonce.ErrJournalSettled)
	case e.State == payonce.JournalSucceeded:
		return nil
	case old.State != payonce.JournalPending:
		return fmt.Errorf("journal: update %q from %s to %s: %w", e.Reference, old.State, e.State, payonce.ErrJournalSettled)
	case old.Fence != e.Fence:
		return fmt.Errorf("journal: update %q with fence %d, the entry's is %d: %w", e.Reference, e.Fence, old.Fence, payonce.ErrJournalFenced)
	}
	return nil
}

// TakeRefusal is why the stored entry e cannot be taken by r at now, or
// nil.
func TakeRefusal(e payonce.JournalEntry, r payonce.JournalEntry, now time.Time) error {
	switch {
	case e.Settled():
		return fmt.Errorf("journal: take %q: %w", r.Reference, payonce.ErrJournalSettled)
	case r.Fingerprint != "" && e.Fingerprint != "" && !corekit.SameFingerprint(e.Fingerprint, r.Fingerprint):
		return fmt.Errorf("journal: take %q: recorded with another request: %w", r.Reference, payonce.ErrIdempotencyConflict)
	case e.LeaseOwner != "" && e.LeaseOwner != r.LeaseOwner && e.LeaseUntil.After(now):
		return fmt.Errorf("journal: take %q: %w until %s", r.Reference, payonce.ErrJournalLeased, e.LeaseUntil.UTC().Format(time.RFC3339))
	}
	return nil
}

// AttemptRefusal is why the stored entry e refuses the attempt r, or nil.
func AttemptRefusal(e payonce.JournalEntry, r payonce.JournalEntry) error {
	switch {
	case e.Settled():
		return fmt.Errorf("journal: attempt %q: %w", r.Reference, payonce.ErrJournalSettled)
	case e.Fence != r.Fence:
		return fmt.Errorf("journal: attempt %q with fence %d, the entry's is %d: %w", r.Reference, r.Fence, e.Fence, payonce.ErrJournalFenced)
	}
	return nil
}

// CheckState validates a state given to Update.
func CheckState(s payonce.JournalState) error {
	switch s {
	case payonce.JournalPending, payonce.JournalSucceeded, payonce.JournalFailed:
		return nil
	}
	return fmt.Errorf("%w: unknown state %q", ErrInvalidEntry, s)
}

// CheckClaim validates a claim request (ClaimRequest) of owner
// for lease.
func CheckClaim(owner string, lease time.Duration) error {
	if owner == "" || lease <= 0 {
		return fmt.Errorf("%w: a claim needs an owner and a positive lease", ErrInvalidEntry)
	}
	return nil
}

// NormalizeReserve fills what Reserve sets itself: state pending, the
// creation and update times (now when zero), all in UTC, fence 1, no
// lease time (the backend leases a created entry to LeaseOwner on its own
// clock); Sent and Attempts are kept as given.
func NormalizeReserve(e payonce.JournalEntry, now time.Time) payonce.JournalEntry {
	e.State = payonce.JournalPending
	if e.CreatedAt.IsZero() {
		e.CreatedAt = now
	}
	if e.UpdatedAt.IsZero() {
		e.UpdatedAt = e.CreatedAt
	}
	e.CreatedAt, e.UpdatedAt, e.KeyCreated = StoredTime(e.CreatedAt), StoredTime(e.UpdatedAt), StoredTime(e.KeyCreated)
	e.LeaseUntil = time.Time{}
	e.Fence, e.SettleReason, e.Lease = 1, "", corekit.ReserveLease(e.Lease)
	e.ResourceID = "" // a pending entry holds no outcome
	return e
}

// StoredTime is t as every backend stores it: UTC, truncated to the microsecond
// (PostgreSQL's precision). Truncation makes a key look older, never
// younger, so the key-age guard stays on the safe side.
func StoredTime(t time.Time) time.Time {
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

// CheckHolders validates a Holders query: a scope's length and a
// non-empty resource ID of at most 255 bytes.
func CheckHolders(scope, resourceID string) error {
	switch {
	case len(scope) > corekit.MaxReferenceLen:
		return fmt.Errorf("%w: scope longer than %d bytes", ErrInvalidEntry, corekit.MaxReferenceLen)
	case resourceID == "" || len(resourceID) > corekit.MaxReferenceLen:
		return fmt.Errorf("%w: resource id must be 1 to %d bytes", ErrInvalidEntry, corekit.MaxReferenceLen)
	}
	return nil
}

// CheckLookAlikes validates a LookAlikes query: scope and operation,
// both ends of the span in order, and a limit not below zero. It returns
// the query with its times as the backends store them.
func CheckLookAlikes(q payonce.LookAlikeQuery) (payonce.LookAlikeQuery, error) {
	switch {
	case q.Scope == "" || len(q.Scope) > corekit.MaxReferenceLen:
		return q, fmt.Errorf("%w: look-alikes need a scope of 1 to %d bytes", ErrInvalidEntry, corekit.MaxReferenceLen)
	case q.Operation == "":
		return q, fmt.Errorf("%w: look-alikes need an operation", ErrInvalidEntry)
	case q.From.IsZero() || q.To.IsZero() || q.To.Before(q.From):
		return q, fmt.Errorf("%w: look-alikes need a span with From at or before To", ErrInvalidEntry)
	case q.Limit < 0:
		return q, fmt.Errorf("%w: negative limit", ErrInvalidEntry)
	}
	q.From, q.To, q.Since = StoredTime(q.From), StoredTime(q.To), StoredTime(q.Since)
	return q, nil
}

// lookAlike reports whether e answers the look-alike query q (checked by
// CheckLookAlikes): the in-memory form of the SQL backends' WHERE.
func lookAlike(e payonce.JournalEntry, q payonce.LookAlikeQuery) bool {
	return e.Scope == q.Scope && e.Operation == q.Operation &&
		(q.Summary == "" || e.Summary == q.Summary || e.Summary == "") &&
		!e.CreatedAt.After(q.To) && (e.State == payonce.JournalPending || !e.UpdatedAt.Before(q.From)) &&
		(q.Since.IsZero() || !e.CreatedAt.Before(q.Since))
}

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

// collisionError is the error of a MoveScope refused because to holds
// reference too, in an entry that may have run.
func collisionError(from, to, reference string) error {
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
		return collisionError(from, to, d.Reference)
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

// CheckUnsend validates an Unsend (payonce.JournalUnsender): it records
// a pending outcome.
func CheckUnsend(e payonce.JournalEntry) error {
	if e.State != payonce.JournalPending {
		return fmt.Errorf("%w: unsend records a pending outcome, not %q", ErrInvalidEntry, e.State)
	}
	return nil
}
