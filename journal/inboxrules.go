package journal

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/corekit"
)

// The checks and rules every backend's inbox (payonce.Inbox) shares. An
// argument error wraps ErrInvalidEntry and payonce.ErrInvalidEvent.

func invalidEvent(err error) error {
	return fmt.Errorf("%w: %w: %w", ErrInvalidEntry, payonce.ErrInvalidEvent, err)
}

// checkIdentity validates an event's scope and ID.
func checkIdentity(scope, eventID string) error {
	if err := corekit.CheckEventField("scope", scope, true, corekit.MaxEventText); err != nil {
		return invalidEvent(err)
	}
	if err := corekit.CheckEventField("event ID", eventID, true, corekit.MaxEventText); err != nil {
		return invalidEvent(err)
	}
	return nil
}

// CheckRecordEvent validates an event given to RecordEvent.
func CheckRecordEvent(e payonce.InboxEvent) error {
	if err := checkIdentity(e.Scope, e.EventID); err != nil {
		return err
	}
	if err := corekit.CheckEventField("resource ID", e.ResourceID, false, corekit.MaxEventText); err != nil {
		return invalidEvent(err)
	}
	if err := corekit.CheckEventField("type", e.Type, false, corekit.MaxEventText); err != nil {
		return invalidEvent(err)
	}
	if len(e.Body) > corekit.MaxStoredEventBody {
		return invalidEvent(fmt.Errorf("%w: body is %d bytes, longer than %d", payonce.ErrInvalidEvent, len(e.Body), corekit.MaxStoredEventBody))
	}
	return nil
}

// CheckClaimEvent validates a ClaimEvent request.
func CheckClaimEvent(r payonce.InboxEvent) error {
	if err := checkIdentity(r.Scope, r.EventID); err != nil {
		return err
	}
	if err := corekit.CheckEventField("lease owner", r.LeaseOwner, true, corekit.MaxEventText); err != nil {
		return invalidEvent(err)
	}
	if r.Lease <= 0 {
		return invalidEvent(fmt.Errorf("%w: a claim needs a positive lease", payonce.ErrInvalidEvent))
	}
	return nil
}

// CheckMarkEvent validates a MarkHandled request, and a ReleaseEvent
// one when release is set.
func CheckMarkEvent(r payonce.InboxEvent, release bool) error {
	if err := checkIdentity(r.Scope, r.EventID); err != nil {
		return err
	}
	if r.Fence <= 0 {
		return invalidEvent(fmt.Errorf("%w: the claim's fence is required", payonce.ErrInvalidEvent))
	}
	if release {
		if err := corekit.CheckEventField("last error", r.LastError, false, corekit.MaxEventError); err != nil {
			return invalidEvent(err)
		}
	}
	return nil
}

// CheckEventsQuery validates an Events query.
func CheckEventsQuery(q payonce.InboxQuery) error {
	if err := corekit.CheckEventField("scope", q.Scope, q.ResourceID != "", corekit.MaxEventText); err != nil {
		return invalidEvent(err)
	}
	if err := corekit.CheckEventField("resource ID", q.ResourceID, false, corekit.MaxEventText); err != nil {
		return invalidEvent(err)
	}
	return nil
}

// NormalizeRecord fills what RecordEvent sets itself: the times (now
// when ReceivedAt is zero) in the stored form, one delivery, and no
// claim, handling or error yet.
func NormalizeRecord(e payonce.InboxEvent, now time.Time) payonce.InboxEvent {
	if e.ReceivedAt.IsZero() {
		e.ReceivedAt = now
	}
	e.ReceivedAt = StoredTime(e.ReceivedAt)
	e.UpdatedAt, e.Deliveries = e.ReceivedAt, 1
	e.HandledAt, e.Attempts, e.LastError = time.Time{}, 0, ""
	e.LeaseOwner, e.LeaseUntil, e.Fence, e.Lease = "", time.Time{}, 0, 0
	return e
}

// ClaimEventRefusal is why the stored event e cannot be claimed by r at
// now, or nil.
func ClaimEventRefusal(e, r payonce.InboxEvent, now time.Time) error {
	switch {
	case e.Handled():
		return fmt.Errorf("journal: claim event %q: %w", r.EventID, payonce.ErrEventHandled)
	case e.LeaseOwner != "" && e.LeaseOwner != r.LeaseOwner && e.LeaseUntil.After(now):
		return fmt.Errorf("journal: claim event %q: %w until %s", r.EventID, payonce.ErrJournalLeased, e.LeaseUntil.UTC().Format(time.RFC3339))
	}
	return nil
}

// MarkRefusal is why the stored event e refuses the mark (or, with
// release set, the release) r, or nil. Marking again with the fence that
// handled the event is no refusal.
func MarkRefusal(e, r payonce.InboxEvent, release bool) error {
	op := "mark"
	if release {
		op = "release"
	}
	switch {
	case e.Handled() && (release || e.Fence != r.Fence):
		return fmt.Errorf("journal: %s event %q: %w", op, r.EventID, payonce.ErrEventHandled)
	case e.Fence != r.Fence:
		return fmt.Errorf("journal: %s event %q with fence %d, the event's is %d: %w", op, r.EventID, r.Fence, e.Fence, payonce.ErrJournalFenced)
	}
	return nil
}

// eventSelected reports whether q selects the stored event e at now.
func eventSelected(e payonce.InboxEvent, q payonce.InboxQuery, now time.Time) bool {
	switch {
	case q.Scope != "" && e.Scope != q.Scope,
		q.ResourceID != "" && e.ResourceID != q.ResourceID,
		(q.Unhandled || q.Stuck) && e.Handled(),
		q.Stuck && e.LeaseOwner != "" && e.LeaseUntil.After(now),
		!q.Before.IsZero() && !e.ReceivedAt.Before(StoredTime(q.Before)):
		return false
	}
	return true
}

// sortEvents orders events oldest first (received, then scope and event
// ID), the order Events returns.
func sortEvents(es []payonce.InboxEvent) {
	slices.SortFunc(es, func(a, b payonce.InboxEvent) int {
		if c := a.ReceivedAt.Compare(b.ReceivedAt); c != 0 {
			return c
		}
		if c := strings.Compare(a.Scope, b.Scope); c != 0 {
			return c
		}
		return strings.Compare(a.EventID, b.EventID)
	})
}
