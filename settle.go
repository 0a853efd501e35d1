package payonce

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/payonce/payonce/internal/corekit"
)

// Settlement is an outcome found outside a run (the provider's records, a
// support ticket), for Client.Settle.
type Settlement struct {
	// State is what the provider did, as the entry will hold it:
	// JournalSucceeded, it executed the operation (Result holds its
	// answer, as a 2xx would have, which later calls decode); or
	// JournalFailed, it ran the operation and the operation failed (a
	// charge found in an error status: nothing moved; later calls get
	// ErrSettledFailed).
	State JournalState
	// NotExecuted, with State JournalFailed, records that the provider
	// never executed the operation: later calls get ErrNotExecuted, and a
	// new reference may run it (JournalEntry.NotExecuted).
	NotExecuted bool
	Result      []byte // JournalSucceeded: the provider's answer body (JSON), as the codec decodes a 2xx
	StatusCode  int    // JournalSucceeded: its HTTP status, 2xx (200 when 0)
	RequestID   string // the provider's request ID, when known
	Reason      string // required: why and from what the outcome was found; stored, never a secret
	// LeaseOwner is the owner under which the caller's run holds the
	// entry (ResponseMeta.LeaseOwner), when the settle is that run's own
	// (a lookup within the call); empty for a settle from outside any
	// run, which a live lease refuses.
	LeaseOwner string
}

// Settle records the outcome of reference's pending (in-doubt) entry, found
// outside the run that left it pending, and returns the settled entry. It
// takes the entry like a run does (its fence grows, so the late write of a
// worker that lost the entry is refused; a live lease of a run still
// sending is ErrJournalLeased: let it finish) and obeys the journal's
// precedence: a succeeded entry never changes (journal.ErrSettled), and a
// failed one may only become succeeded (a 2xx under its key was found).
// Later calls with the reference answer from the journal: the recorded
// result for a success, ErrSettledFailed or ErrNotExecuted (nothing
// moved; a new reference may run the operation) otherwise. Errors are
// *APIError values carrying the entry's key.
func (c *Client) Settle(ctx context.Context, reference string, s Settlement) (JournalEntry, error) {
	fail := func(kind error, e JournalEntry, cause error) (JournalEntry, error) {
		ae := &APIError{Provider: c.provider, Operation: "journal.settle", Kind: kind, Err: cause, Key: e.IdempotencyKey(), secrets: c.redactor}
		ae.redactFields()
		return JournalEntry{}, ae
	}
	if c.journal == nil {
		return fail(ErrInvalidConfig, JournalEntry{}, errors.New("Settle needs a client with WithJournal"))
	}
	if err := checkSettlement(reference, &s); err != nil {
		return fail(errKind(err, ErrInvalidRequest), JournalEntry{}, err)
	}
	if err := c.placeScopes(ctx); err != nil {
		return fail(placementKind(err), JournalEntry{}, err)
	}
	stored, err := c.journal.Get(ctx, c.scope, reference)
	if err != nil {
		return fail(ErrJournal, JournalEntry{}, fmt.Errorf("settle: %w", err))
	}
	var resource string
	if s.State == JournalSucceeded {
		resource = c.resourceID(stored.Operation, s.Result, c.redactor().JSON(s.Result))
		if kind, err := c.heldElsewhere(ctx, reference, resource); err != nil {
			return fail(kind, stored, err)
		}
	}
	fence := stored.Fence
	switch {
	case stored.State == JournalSucceeded:
		return fail(ErrJournalSettled, stored, fmt.Errorf("reference %q already succeeded", reference))
	case stored.State == JournalFailed && s.State != JournalSucceeded:
		return fail(ErrJournalSettled, stored, fmt.Errorf("reference %q already failed; only a success may replace it", reference))
	case stored.State == JournalPending:
		owner := s.LeaseOwner
		if owner == "" {
			owner = "settle:" + uuid.NewString()
		}
		taken, err := c.journal.Take(ctx, JournalEntry{Scope: c.scope, Reference: reference, LeaseOwner: owner, Lease: corekit.JournalReserveLease})
		switch {
		case errors.Is(err, ErrJournalLeased):
			return fail(ErrJournalLeased, stored, fmt.Errorf("reference %q: a run holds it: %w", reference, err))
		case errors.Is(err, ErrJournalSettled):
			return fail(ErrJournalSettled, taken, fmt.Errorf("reference %q settled meanwhile: %w", reference, err))
		case err != nil:
			return fail(ErrJournal, stored, fmt.Errorf("settle: take: %w", err))
		}
		stored, fence = taken, taken.Fence
	}
	up := JournalEntry{Scope: c.scope, Reference: reference, Fence: fence, SettleReason: c.redactor().Stored(s.Reason), RequestID: c.redactor().Redact(s.RequestID)}
	switch {
	case s.State == JournalSucceeded:
		up.State, up.Result, up.StatusCode, up.ResourceID = JournalSucceeded, c.storedAnswer(s.Result), s.StatusCode, resource
	case s.NotExecuted:
		up.State, up.ErrorKind = JournalFailed, KindName(ErrNotExecuted)
	default:
		up.State, up.ErrorKind = JournalFailed, KindName(ErrSettledFailed)
	}
	if err := c.journal.Update(ctx, up); err != nil {
		kind := ErrJournal
		for _, k := range []error{ErrJournalFenced, ErrJournalSettled} {
			if errors.Is(err, k) {
				kind = k
			}
		}
		return fail(kind, stored, fmt.Errorf("settle: %w", err))
	}
	got, err := c.journal.Get(ctx, c.scope, reference)
	if err != nil {
		return fail(ErrJournal, stored, fmt.Errorf("settle: read back: %w", err))
	}
	return got, nil
}

// heldElsewhere refuses a success naming resource when the journal holds
// that resource as another entry's outcome: one operation at the provider
// is the outcome of one entry. A journal without JournalFinder cannot
// tell, and the settlement is taken as given.
func (c *Client) heldElsewhere(ctx context.Context, reference, resource string) (kind, err error) {
	f, ok := c.journal.(JournalFinder)
	if !ok || resource == "" {
		return nil, nil
	}
	holders, err := f.Holders(ctx, c.scope, resource)
	switch {
	case errors.Is(err, ErrLookupUnsupported):
		return nil, nil // a wrapper whose journal cannot tell
	case err != nil:
		return ErrJournal, fmt.Errorf("settle: holders: %w", err)
	}
	for _, h := range holders {
		if h.Reference != reference {
			return ErrInvalidRequest, invalid(ErrInvalidRequest, "result", fmt.Sprintf("names %s, the recorded outcome of reference %q", resource, h.Reference))
		}
	}
	return nil, nil
}

// checkSettlement validates a settlement before the journal is read.
func checkSettlement(reference string, s *Settlement) error {
	switch {
	case reference == "" || len(reference) > corekit.MaxReferenceLen || !corekit.Printable(reference):
		return invalid(ErrInvalidRequest, "reference", fmt.Sprintf("must be 1 to %d bytes of printable UTF-8", corekit.MaxReferenceLen))
	case s.Reason == "" || len(s.Reason) > corekit.MaxSettleReason || !corekit.Printable(s.Reason):
		return invalid(ErrInvalidRequest, "reason", fmt.Sprintf("required: 1 to %d bytes of printable UTF-8", corekit.MaxSettleReason))
	case len(s.RequestID) > corekit.MaxReferenceLen || !corekit.Printable(s.RequestID):
		return invalid(ErrInvalidRequest, "request id", "must be printable UTF-8 of at most 255 bytes")
	}
	switch {
	case s.State == JournalSucceeded && !s.NotExecuted:
		if s.StatusCode == 0 {
			s.StatusCode = 200
		}
		if s.StatusCode < 200 || s.StatusCode > 299 {
			return invalid(ErrInvalidRequest, "status code", "a success is a 2xx")
		}
		if len(s.Result) == 0 || !json.Valid(s.Result) {
			return invalid(ErrInvalidRequest, "result", "a success needs the provider's answer as JSON")
		}
	case s.State == JournalFailed:
		if len(s.Result) != 0 || s.StatusCode != 0 {
			return invalid(ErrInvalidRequest, "result", "only a success carries a result and status")
		}
	default:
		return invalid(ErrInvalidRequest, "state", "want JournalSucceeded, JournalFailed or JournalFailed with NotExecuted")
	}
	return nil
}
