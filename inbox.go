package payonce

import (
	"context"
	"time"

	"github.com/payonce/payonce/internal/corekit"
)

// InboxEvent is one webhook event in an Inbox: its identity (Scope,
// EventID), what the provider's codec read from it (ResourceID, Type),
// its body as stored, and who is handling it. Scope and EventID are fixed
// when it is first recorded, and so are ResourceID, Type, Body and
// ReceivedAt: a later delivery of the same event only counts.
type InboxEvent struct {
	// Scope names whose event it is: the receiving client's scope
	// (Client.Scope) or another name of the merchant account and
	// environment. Never a secret.
	Scope string
	// EventID is the event's identity within Scope, which every delivery
	// of the event repeats: the provider's event ID, or one its codec
	// derives from the body when the provider sends none. At most 255
	// bytes of printable UTF-8.
	EventID string
	// ResourceID is the provider's ID of what the event is about (a
	// charge), "" when none: Inbox.Events lists a resource's events.
	ResourceID string
	// Type is the event's type or the status it reports ("refunded"), as
	// the codec names it, for ordering rules; "" when none.
	Type string
	// Body is the verified body, redacted as journal rows are
	// (redact.JSON), as the inbox stores it. The handler HandleOnce
	// calls gets the body as delivered instead.
	Body []byte
	// ReceivedAt is when the event was first recorded, on the journal's
	// clock (RecordEvent fills it in when zero); UpdatedAt its last
	// change.
	ReceivedAt time.Time
	UpdatedAt  time.Time
	// Deliveries counts the times the event was recorded: 1, plus one per
	// duplicate delivery.
	Deliveries int
	// HandledAt is when a handler run was recorded as having handled the
	// event (MarkHandled), zero while it is not.
	HandledAt time.Time
	// Attempts counts the claims: handler runs begun.
	Attempts int
	// LastError is why the last handler run ended without handling the
	// event (ReleaseEvent), redacted; "" when none did.
	LastError string
	// LeaseOwner is the handler run holding the event ("" when none) and
	// LeaseUntil the end of its lease on the journal's clock.
	LeaseOwner string
	LeaseUntil time.Time
	// Fence grows by one with every claim (0 before the first). A claim's
	// MarkHandled and ReleaseEvent carry its fence and are refused
	// (ErrJournalFenced) once another claim has replaced it.
	Fence int64
	// Lease is given to ClaimEvent, never stored: how long the claim
	// holds the event.
	Lease time.Duration
}

// Handled reports whether the event was recorded as handled.
func (e InboxEvent) Handled() bool { return !e.HandledAt.IsZero() }

// InboxQuery selects events for Inbox.Events. Zero fields select
// everything.
type InboxQuery struct {
	Scope string // only this scope; "" for all
	// ResourceID selects the events about one resource (Scope is then
	// required); "" for any.
	ResourceID string
	Unhandled  bool // only events not handled
	// Stuck selects unhandled events no live claim holds: their handler
	// run failed or its receiver stopped, and no delivery has taken them
	// since.
	Stuck  bool
	Before time.Time // only events first received before this; zero for all
	Limit  int       // at most this many, oldest first; 0 for no limit
}

// Inbox records webhook deliveries durably so that each event is handed
// to the merchant's handler once, across processes and restarts:
// HandleOnce is how a receiver uses one. Implementations: journal.NewMemory
// (tests), sqlitejournal and pgjournal, on the journal's own database
// (the same value is the Journal and the Inbox); all are safe for
// concurrent use. Every time an inbox fills in is on the journal's clock
// (the database's now() on PostgreSQL, the machine's clock on SQLite and
// in memory). Absent events are journal.ErrNotFound, invalid arguments
// ErrInvalidEvent (both wrapped).
type Inbox interface {
	// RecordEvent stores e (Scope, EventID, ResourceID, Type, Body, and
	// ReceivedAt when set) as unhandled unless its (Scope, EventID)
	// exists; a duplicate only adds one to the stored event's Deliveries.
	// It returns the stored event and whether this call created it. Body
	// must already be redacted, and at most 2 MiB.
	RecordEvent(ctx context.Context, e InboxEvent) (InboxEvent, bool, error)
	// ClaimEvent gives the unhandled event (r.Scope, r.EventID) to the
	// handler run r.LeaseOwner (non-empty) for r.Lease (above 0): it
	// raises the fence and Attempts by one, leases the event until now
	// + r.Lease and returns it. A handled event is ErrEventHandled, a
	// live lease of another owner ErrJournalLeased (both wrapped, with
	// the stored event).
	ClaimEvent(ctx context.Context, r InboxEvent) (InboxEvent, error)
	// MarkHandled records that the claim of fence r.Fence handled the
	// event (r.Scope, r.EventID): it sets HandledAt to now, ends the lease
	// and returns the event. Another claim's fence is ErrJournalFenced;
	// an event another claim handled is ErrEventHandled (with the stored
	// event); marking again with the fence that handled it changes
	// nothing and succeeds.
	MarkHandled(ctx context.Context, r InboxEvent) (InboxEvent, error)
	// ReleaseEvent ends the claim of fence r.Fence without handling the
	// event, storing why (r.LastError, at most 1024 bytes), so that the
	// next delivery claims it at once; the refusals are MarkHandled's.
	ReleaseEvent(ctx context.Context, r InboxEvent) error
	// GetEvent returns the event (scope, eventID).
	GetEvent(ctx context.Context, scope, eventID string) (InboxEvent, error)
	// Events lists the events q selects, oldest first (ReceivedAt, then
	// Scope and EventID).
	Events(ctx context.Context, q InboxQuery) ([]InboxEvent, error)
}

// The inbox's errors (wrapped).
var (
	// ErrInvalidEvent: an event given to HandleOnce or an Inbox is
	// incomplete or holds what no inbox stores (an empty or overlong
	// identity, a control or format character, a body over
	// MaxEventBody): nothing was recorded.
	ErrInvalidEvent = newKind("invalid_event", "invalid webhook event")
	// ErrEventHandled: the event was already handled, by another
	// delivery's handler run.
	ErrEventHandled = newKind("event_handled", "webhook event already handled")
	// ErrEventInProgress: another handler run holds a live claim on the
	// event; it was recorded, and this delivery did not run the handler.
	ErrEventInProgress = newKind("event_in_progress", "webhook event being handled by another receiver")
	// ErrEventHandlerFailed: the merchant's handler returned an error (or
	// panicked); the event stays unhandled for the next delivery.
	ErrEventHandlerFailed = newKind("event_handler_failed", "webhook event handler failed")
)

// MaxEventBody is the longest webhook body HandleOnce accepts, in bytes:
// a longer one is ErrInvalidEvent, nothing recorded. A receiver reads at
// most this much of a request.
const MaxEventBody = corekit.MaxEventBody
