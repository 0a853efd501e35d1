package journalkit

import (
	"fmt"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/corekit"
)

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
	q.From, q.To, q.Since = Time(q.From), Time(q.To), Time(q.Since)
	return q, nil
}

// LookAlike reports whether e answers the look-alike query q (checked by
// CheckLookAlikes): the in-memory form of the SQL backends' WHERE.
func LookAlike(e payonce.JournalEntry, q payonce.LookAlikeQuery) bool {
	return e.Scope == q.Scope && e.Operation == q.Operation &&
		(q.Summary == "" || e.Summary == q.Summary || e.Summary == "") &&
		!e.CreatedAt.After(q.To) && (e.State == payonce.JournalPending || !e.UpdatedAt.Before(q.From)) &&
		(q.Since.IsZero() || !e.CreatedAt.Before(q.Since))
}
