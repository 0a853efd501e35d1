package journal

import (
	"context"
	"fmt"
	"time"

	"github.com/payonce/payonce"
)

// The memory journal's inbox (payonce.Inbox): its events live beside the
// entries, under the same lock and clock.

type eventKey struct{ scope, eventID string }

// RecordEvent stores e as unhandled unless its (Scope, EventID) exists;
// a duplicate adds one to Deliveries.
func (m *Memory) RecordEvent(ctx context.Context, e payonce.InboxEvent) (payonce.InboxEvent, bool, error) {
	if err := ctx.Err(); err != nil {
		return payonce.InboxEvent{}, false, err
	}
	if err := CheckRecordEvent(e); err != nil {
		return payonce.InboxEvent{}, false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.inbox == nil {
		m.inbox = map[eventKey]*payonce.InboxEvent{}
	}
	now := StoredTime(m.now())
	k := eventKey{e.Scope, e.EventID}
	if old, ok := m.inbox[k]; ok {
		old.Deliveries++
		old.UpdatedAt = now
		return cloneEvent(*old), false, nil
	}
	e = NormalizeRecord(e, now)
	e.Body = cloneBody(e.Body)
	m.inbox[k] = &e
	return cloneEvent(e), true, nil
}

// event returns the stored event of r, or ErrNotFound. m.mu is held.
func (m *Memory) event(op string, r payonce.InboxEvent) (*payonce.InboxEvent, error) {
	e, ok := m.inbox[eventKey{r.Scope, r.EventID}]
	if !ok {
		return nil, fmt.Errorf("journal: %s event %q: %w", op, r.EventID, ErrNotFound)
	}
	return e, nil
}

// ClaimEvent gives the unhandled event to the run r.LeaseOwner
// (payonce.Inbox.ClaimEvent).
func (m *Memory) ClaimEvent(ctx context.Context, r payonce.InboxEvent) (payonce.InboxEvent, error) {
	if err := ctx.Err(); err != nil {
		return payonce.InboxEvent{}, err
	}
	if err := CheckClaimEvent(r); err != nil {
		return payonce.InboxEvent{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e, err := m.event("claim", r)
	if err != nil {
		return payonce.InboxEvent{}, err
	}
	now := StoredTime(m.now())
	if err := ClaimEventRefusal(*e, r, now); err != nil {
		return cloneEvent(*e), err
	}
	e.Fence++
	e.Attempts++
	e.LeaseOwner, e.LeaseUntil, e.UpdatedAt = r.LeaseOwner, now.Add(r.Lease), now
	return cloneEvent(*e), nil
}

// MarkHandled records that the claim of fence r.Fence handled the event
// (payonce.Inbox.MarkHandled).
func (m *Memory) MarkHandled(ctx context.Context, r payonce.InboxEvent) (payonce.InboxEvent, error) {
	if err := ctx.Err(); err != nil {
		return payonce.InboxEvent{}, err
	}
	if err := CheckMarkEvent(r, false); err != nil {
		return payonce.InboxEvent{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e, err := m.event("mark", r)
	if err != nil {
		return payonce.InboxEvent{}, err
	}
	if err := MarkRefusal(*e, r, false); err != nil {
		return cloneEvent(*e), err
	}
	if !e.Handled() {
		now := StoredTime(m.now())
		e.HandledAt, e.UpdatedAt = now, now
		e.LeaseOwner, e.LeaseUntil = "", time.Time{}
	}
	return cloneEvent(*e), nil
}

// ReleaseEvent ends the claim of fence r.Fence without handling the
// event (payonce.Inbox.ReleaseEvent).
func (m *Memory) ReleaseEvent(ctx context.Context, r payonce.InboxEvent) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := CheckMarkEvent(r, true); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e, err := m.event("release", r)
	if err != nil {
		return err
	}
	if err := MarkRefusal(*e, r, true); err != nil {
		return err
	}
	e.LastError, e.UpdatedAt = r.LastError, StoredTime(m.now())
	e.LeaseOwner, e.LeaseUntil = "", time.Time{}
	return nil
}

// GetEvent returns the event (scope, eventID).
func (m *Memory) GetEvent(ctx context.Context, scope, eventID string) (payonce.InboxEvent, error) {
	if err := ctx.Err(); err != nil {
		return payonce.InboxEvent{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e, err := m.event("get", payonce.InboxEvent{Scope: scope, EventID: eventID})
	if err != nil {
		return payonce.InboxEvent{}, err
	}
	return cloneEvent(*e), nil
}

// Events lists the events q selects, oldest first.
func (m *Memory) Events(ctx context.Context, q payonce.InboxQuery) ([]payonce.InboxEvent, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := CheckEventsQuery(q); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := StoredTime(m.now())
	var out []payonce.InboxEvent
	for _, e := range m.inbox {
		if eventSelected(*e, q, now) {
			out = append(out, cloneEvent(*e))
		}
	}
	sortEvents(out)
	if q.Limit > 0 && len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out, nil
}

// PurgeEvents deletes events handled before handledBefore.
func (m *Memory) PurgeEvents(ctx context.Context, handledBefore time.Time) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var n int64
	for k, e := range m.inbox {
		if e.Handled() && e.HandledAt.Before(handledBefore) {
			delete(m.inbox, k)
			n++
		}
	}
	return n, nil
}

func cloneEvent(e payonce.InboxEvent) payonce.InboxEvent {
	e.Body = cloneBody(e.Body)
	return e
}

// cloneBody copies b; an empty body is stored as none, as the SQL
// backends read it back.
func cloneBody(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return append([]byte(nil), b...)
}

var _ InboxStore = (*Memory)(nil)
