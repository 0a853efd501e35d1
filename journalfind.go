package payonce

import (
	"context"
	"time"

	"github.com/payonce/payonce/internal/corekit"
)

// JournalFinder is what a settle by lookup asks of a journal besides
// Journal: which entry holds a provider's resource as its outcome, and
// which entries of a scope could have made an operation at the provider
// in a span of time. A lookup that finds a payment at the provider records
// it only when no other entry holds it and no other entry could have
// made it; without these two answers it could only guess.
//
// It is a separate interface so that a Journal that lacks it (a third
// party's) keeps working for runs and hand settlements; a settle by
// lookup through such a journal is refused (ErrLookupUnsupported). Every
// backend of package journal implements it, and journal/journaltest holds
// its conformance tests. A wrapper around a journal should pass it on.
type JournalFinder interface {
	// Holders returns the entries of scope whose ResourceID is
	// resourceID (non-empty), in any state, oldest first: the entries
	// whose recorded outcome is that resource at the provider.
	Holders(ctx context.Context, scope, resourceID string) ([]JournalEntry, error)
	// LookAlikes returns the entries of q.Scope recording q.Operation
	// that could have sent an attempt in [q.From, q.To]: reserved at or
	// before q.To (and, when q.Since is set, at or after q.Since), and
	// either pending (an attempt of a pending entry may still be on its
	// way, however long ago it last changed) or settled at or after
	// q.From. With q.Summary set, only entries whose Summary is
	// q.Summary or empty (an entry without one could be anything).
	// Oldest first, at most q.Limit (0: no limit).
	LookAlikes(ctx context.Context, q LookAlikeQuery) ([]JournalEntry, error)
}

// LookAlikeQuery selects the entries JournalFinder.LookAlikes returns.
type LookAlikeQuery struct {
	Scope     string // required
	Operation string // required, e.g. "charges.create"
	// Summary, when set, keeps entries whose Summary is exactly it, or
	// empty.
	Summary string
	// From and To bound the span: an entry is returned when it was
	// reserved at or before To, and is pending or was last changed at or
	// after From.
	From, To time.Time
	// Since, when set, keeps entries reserved at or after it: an entry
	// reserved longer than its key's window before From cannot have sent
	// anything in the span, and skipping it keeps the query to an index
	// range.
	Since time.Time
	Limit int // at most this many, 0 for no limit
}

// ErrLookupUnsupported: a settle by lookup needs a journal that
// implements JournalFinder; the client's does not, so nothing was
// looked up or recorded. Settle by hand (Client.Settle) or use a journal
// of package journal.
var ErrLookupUnsupported = newKind("lookup_unsupported", "settle lookup needs a journal that finds entries by resource and look-alikes (payonce.JournalFinder)")

// resourceNamer is a codec that names the resource an operation's answer
// holds (the provider's ID of the charge or card the operation made):
// the journal keeps it with the outcome (JournalEntry.ResourceID), so
// that a settle lookup can ask which entry holds a resource.
type resourceNamer interface {
	ResourceID(operation string, body []byte) string
}

// resourceID is the resource the answer of operation names, as the
// journal stores it: "" when the codec names none, or names one that is
// not printable or longer than 255 bytes, or that the journal's
// redaction changed (stored is the answer as the journal keeps it): the
// journal keeps the provider's ID exactly or not at all, since a lookup
// compares it with the provider's records.
func (c *Client) resourceID(operation string, raw, stored []byte) string {
	rn, ok := c.codec.(resourceNamer)
	if !ok || len(raw) == 0 {
		return ""
	}
	id := rn.ResourceID(operation, raw)
	if id == "" || len(id) > corekit.MaxReferenceLen || !corekit.Printable(id) || rn.ResourceID(operation, stored) != id {
		return ""
	}
	return id
}
