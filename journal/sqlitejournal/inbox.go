package sqlitejournal

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/journal"
)

// The journal's inbox (payonce.Inbox), in the table payonce_inbox of the
// same file: its writes go through the journal's group commit, on the
// machine's clock like the journal's.

var _ journal.InboxStore = (*Journal)(nil)

// inboxTable is the inbox's table, version 5 of the schema: one row per
// event, handled_at 0 while unhandled, times in microseconds.
const inboxTable = `
	CREATE TABLE payonce_inbox (
		scope       TEXT    NOT NULL,
		event_id    TEXT    NOT NULL,
		resource_id TEXT    NOT NULL DEFAULT '',
		event_type  TEXT    NOT NULL DEFAULT '',
		body        BLOB,
		received_at INTEGER NOT NULL,
		updated_at  INTEGER NOT NULL,
		deliveries  INTEGER NOT NULL DEFAULT 1,
		handled_at  INTEGER NOT NULL DEFAULT 0,
		attempts    INTEGER NOT NULL DEFAULT 0,
		last_error  TEXT    NOT NULL DEFAULT '',
		lease_owner TEXT    NOT NULL DEFAULT '',
		lease_until INTEGER NOT NULL DEFAULT 0,
		fence       INTEGER NOT NULL DEFAULT 0,
		PRIMARY KEY (scope, event_id)
	);
	CREATE INDEX payonce_inbox_unhandled ON payonce_inbox (received_at) WHERE handled_at = 0;
	CREATE INDEX payonce_inbox_handled ON payonce_inbox (handled_at) WHERE handled_at <> 0;
	CREATE INDEX payonce_inbox_resource ON payonce_inbox (scope, resource_id, received_at) WHERE resource_id <> '';`

const eventColumns = `scope, event_id, resource_id, event_type, body, received_at, updated_at, deliveries,
	handled_at, attempts, last_error, lease_owner, lease_until, fence`

// RecordEvent stores e as unhandled unless its (Scope, EventID) exists; a
// duplicate adds one to Deliveries (payonce.Inbox.RecordEvent).
func (j *Journal) RecordEvent(ctx context.Context, e payonce.InboxEvent) (payonce.InboxEvent, bool, error) {
	if err := journal.CheckRecordEvent(e); err != nil {
		return payonce.InboxEvent{}, false, err
	}
	var out payonce.InboxEvent
	err := j.commitWrite(ctx, func(ctx context.Context, tx *sql.Tx) error {
		now := journal.StoredTime(j.now())
		n := journal.NormalizeRecord(e, now)
		rows, err := j.prepared(tx).QueryContext(ctx, `INSERT INTO payonce_inbox (scope, event_id, resource_id, event_type, body, received_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (scope, event_id) DO UPDATE SET deliveries = deliveries + 1, updated_at = ?
			RETURNING `+eventColumns,
			n.Scope, n.EventID, n.ResourceID, n.Type, n.Body, micro(n.ReceivedAt), micro(n.UpdatedAt), micro(now))
		if err != nil {
			return fmt.Errorf("sqlitejournal: record event: %w", err)
		}
		es, err := scanEvents(rows)
		if err != nil {
			return err
		}
		if len(es) != 1 {
			return fmt.Errorf("sqlitejournal: record event %q stored nothing", e.EventID)
		}
		out = es[0]
		return nil
	})
	if err != nil {
		return payonce.InboxEvent{}, false, err
	}
	return out, out.Deliveries == 1, nil
}

// ClaimEvent gives the unhandled event to the run r.LeaseOwner
// (payonce.Inbox.ClaimEvent), in one guarded UPDATE.
func (j *Journal) ClaimEvent(ctx context.Context, r payonce.InboxEvent) (payonce.InboxEvent, error) {
	if err := journal.CheckClaimEvent(r); err != nil {
		return payonce.InboxEvent{}, err
	}
	var out payonce.InboxEvent
	err := j.commitWrite(ctx, func(ctx context.Context, tx *sql.Tx) error {
		now := journal.StoredTime(j.now())
		var err error
		out, err = guardedEvent(ctx, j.prepared(tx), "claim", r, func(e payonce.InboxEvent) error { return journal.ClaimEventRefusal(e, r, now) },
			`UPDATE payonce_inbox SET fence = fence + 1, attempts = attempts + 1, lease_owner = ?, lease_until = ?, updated_at = ?
			WHERE scope = ? AND event_id = ? AND handled_at = 0 AND (lease_owner = '' OR lease_owner = ? OR lease_until <= ?)
			RETURNING `+eventColumns,
			r.LeaseOwner, micro(now.Add(r.Lease)), micro(now), r.Scope, r.EventID, r.LeaseOwner, micro(now))
		return err
	})
	return out, err
}

// MarkHandled records that the claim of fence r.Fence handled the event
// (payonce.Inbox.MarkHandled). MarkHandledTx does it in the merchant's
// transaction.
func (j *Journal) MarkHandled(ctx context.Context, r payonce.InboxEvent) (payonce.InboxEvent, error) {
	if err := journal.CheckMarkEvent(r, false); err != nil {
		return payonce.InboxEvent{}, err
	}
	var out payonce.InboxEvent
	err := j.commitWrite(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var err error
		out, err = j.markHandled(ctx, j.prepared(tx), r)
		return err
	})
	return out, err
}

// MarkHandledTx is MarkHandled inside the caller's transaction on this
// journal's database (DB), so that the handler's own writes and the mark
// commit or roll back together: a refused mark (another run took the
// event over), or a file deleted or replaced since Open (ErrFileChanged,
// as ReserveTx), means the caller rolls back. HandlerTx does this around a
// handler.
func (j *Journal) MarkHandledTx(ctx context.Context, tx *sql.Tx, r payonce.InboxEvent) (payonce.InboxEvent, error) {
	if tx == nil {
		return payonce.InboxEvent{}, fmt.Errorf("%w: sqlitejournal: nil transaction", payonce.ErrInvalidConfig)
	}
	if err := journal.CheckMarkEvent(r, false); err != nil {
		return payonce.InboxEvent{}, err
	}
	if err := j.file.check(); err != nil {
		return payonce.InboxEvent{}, err
	}
	return j.markHandled(ctx, tx, r)
}

func (j *Journal) markHandled(ctx context.Context, q queryer, r payonce.InboxEvent) (payonce.InboxEvent, error) {
	now := micro(journal.StoredTime(j.now()))
	return guardedEvent(ctx, q, "mark", r, func(e payonce.InboxEvent) error { return journal.MarkRefusal(e, r, false) },
		`UPDATE payonce_inbox SET handled_at = ?, updated_at = ?, lease_owner = '', lease_until = 0
		WHERE scope = ? AND event_id = ? AND handled_at = 0 AND fence = ?
		RETURNING `+eventColumns,
		now, now, r.Scope, r.EventID, r.Fence)
}

// HandlerTx returns a handler for payonce.HandleOnce that runs fn in a
// transaction on DB after recording the event handled in it: fn's writes
// and the mark commit together, or neither does. A run another has taken
// over is refused before fn runs. fn must write through tx only: the
// transaction holds the file's write lock until it ends.
func (j *Journal) HandlerTx(fn func(ctx context.Context, tx *sql.Tx, ev payonce.InboxEvent) error) payonce.MarkingHandler {
	return func(ctx context.Context, ev payonce.InboxEvent) (payonce.InboxEvent, error) {
		tx, err := j.begin(ctx)
		if err != nil {
			return payonce.InboxEvent{}, err
		}
		defer func() { _ = tx.Rollback() }()
		got, err := j.MarkHandledTx(ctx, tx, ev)
		if err != nil {
			return got, err
		}
		if err := fn(ctx, tx, ev); err != nil {
			return payonce.InboxEvent{}, err
		}
		if err := j.commit(tx); err != nil {
			return payonce.InboxEvent{}, err
		}
		return got, nil
	}
}

// ReleaseEvent ends the claim of fence r.Fence without handling the
// event (payonce.Inbox.ReleaseEvent).
func (j *Journal) ReleaseEvent(ctx context.Context, r payonce.InboxEvent) error {
	if err := journal.CheckMarkEvent(r, true); err != nil {
		return err
	}
	return j.commitWrite(ctx, func(ctx context.Context, tx *sql.Tx) error {
		now := micro(journal.StoredTime(j.now()))
		_, err := guardedEvent(ctx, j.prepared(tx), "release", r, func(e payonce.InboxEvent) error { return journal.MarkRefusal(e, r, true) },
			`UPDATE payonce_inbox SET last_error = ?, updated_at = ?, lease_owner = '', lease_until = 0
			WHERE scope = ? AND event_id = ? AND handled_at = 0 AND fence = ?
			RETURNING `+eventColumns,
			r.LastError, now, r.Scope, r.EventID, r.Fence)
		return err
	})
}

// guardedEvent runs the guarded UPDATE ... RETURNING stmt of op on r's
// event. When it changed nothing, the stored row names the rule it broke
// (refusal, whose nil means that the write had landed already: the
// stored event is the answer).
func guardedEvent(ctx context.Context, q queryer, op string, r payonce.InboxEvent, refusal func(payonce.InboxEvent) error, stmt string, args ...any) (payonce.InboxEvent, error) {
	rows, err := q.QueryContext(ctx, stmt, args...)
	if err != nil {
		return payonce.InboxEvent{}, fmt.Errorf("sqlitejournal: %s event: %w", op, err)
	}
	es, err := scanEvents(rows)
	if err != nil {
		return payonce.InboxEvent{}, err
	}
	if len(es) == 1 {
		return es[0], nil
	}
	stored, err := getEvent(ctx, q, op, r.Scope, r.EventID)
	if err != nil {
		return payonce.InboxEvent{}, err
	}
	if err := refusal(stored); err != nil {
		return stored, fmt.Errorf("sqlitejournal: %w", err)
	}
	return stored, nil
}

// GetEvent returns the event (scope, eventID).
func (j *Journal) GetEvent(ctx context.Context, scope, eventID string) (payonce.InboxEvent, error) {
	return getEvent(ctx, j.db, "get", scope, eventID)
}

func getEvent(ctx context.Context, q queryer, op, scope, eventID string) (payonce.InboxEvent, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+eventColumns+` FROM payonce_inbox WHERE scope = ? AND event_id = ?`, scope, eventID)
	if err != nil {
		return payonce.InboxEvent{}, fmt.Errorf("sqlitejournal: %s event: %w", op, err)
	}
	es, err := scanEvents(rows)
	if err != nil {
		return payonce.InboxEvent{}, err
	}
	if len(es) == 0 {
		return payonce.InboxEvent{}, fmt.Errorf("sqlitejournal: %s event %q: %w", op, eventID, journal.ErrNotFound)
	}
	return es[0], nil
}

// Events lists the events q selects, oldest first.
func (j *Journal) Events(ctx context.Context, q payonce.InboxQuery) ([]payonce.InboxEvent, error) {
	if err := journal.CheckEventsQuery(q); err != nil {
		return nil, err
	}
	query, args := eventsSQL(q, journal.StoredTime(j.now()))
	rows, err := j.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlitejournal: events: %w", err)
	}
	return scanEvents(rows)
}

// eventsSQL is the query of Events q at now: only the conditions q sets,
// each written as the partial index it may use states it.
func eventsSQL(q payonce.InboxQuery, now time.Time) (string, []any) {
	where := []string{"1"}
	var args []any
	if q.Scope != "" {
		where, args = append(where, "scope = ?"), append(args, q.Scope)
	}
	if q.ResourceID != "" {
		where, args = append(where, "resource_id = ?", "resource_id <> ''"), append(args, q.ResourceID)
	}
	if q.Unhandled || q.Stuck {
		where = append(where, "handled_at = 0")
	}
	if q.Stuck {
		where, args = append(where, "(lease_owner = '' OR lease_until <= ?)"), append(args, micro(now))
	}
	if !q.Before.IsZero() {
		where, args = append(where, "received_at < ?"), append(args, micro(journal.StoredTime(q.Before)))
	}
	return `SELECT ` + eventColumns + ` FROM payonce_inbox WHERE ` + strings.Join(where, " AND ") +
		` ORDER BY received_at, scope, event_id LIMIT ?`, append(args, limit(q.Limit))
}

// PurgeEvents deletes events handled before handledBefore.
func (j *Journal) PurgeEvents(ctx context.Context, handledBefore time.Time) (int64, error) {
	if err := j.file.check(); err != nil {
		return 0, err
	}
	res, err := j.db.ExecContext(ctx, `DELETE FROM payonce_inbox WHERE handled_at <> 0 AND handled_at < ?`, micro(journal.StoredTime(handledBefore)))
	if err != nil {
		return 0, fmt.Errorf("sqlitejournal: purge events: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("sqlitejournal: purge events: %w", err)
	}
	return n, nil
}

func scanEvents(rows *sql.Rows) ([]payonce.InboxEvent, error) {
	defer func() { _ = rows.Close() }()
	var out []payonce.InboxEvent
	for rows.Next() {
		var e payonce.InboxEvent
		var received, updated, handled, leaseUntil int64
		if err := rows.Scan(&e.Scope, &e.EventID, &e.ResourceID, &e.Type, &e.Body, &received, &updated, &e.Deliveries,
			&handled, &e.Attempts, &e.LastError, &e.LeaseOwner, &leaseUntil, &e.Fence); err != nil {
			return nil, fmt.Errorf("sqlitejournal: scan event: %w", err)
		}
		if len(e.Body) == 0 {
			e.Body = nil
		}
		e.ReceivedAt, e.UpdatedAt, e.HandledAt, e.LeaseUntil = fromMicro(received), fromMicro(updated), fromMicro(handled), fromMicro(leaseUntil)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlitejournal: scan event: %w", err)
	}
	// Closed before the caller goes on: a RETURNING statement's write is
	// done once its rows are read to the end.
	if err := rows.Close(); err != nil {
		return nil, fmt.Errorf("sqlitejournal: scan event: %w", err)
	}
	return out, nil
}
