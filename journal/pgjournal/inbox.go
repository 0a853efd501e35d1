package pgjournal

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/payonce/payonce"
	"github.com/payonce/payonce/journal"
)

// The journal's inbox (payonce.Inbox), in the table payonce_inbox of the
// journal's schema: its writes go through a group commit of their own
// (Journal.inbox), every time on the database's now(). A delivery of an
// event a handler's transaction holds (HandlerTx marks first) waits for
// that row; in the journal's own batches it would hold up every payment
// of the process until the handler ends.

var _ journal.InboxStore = (*Journal)(nil)

// inboxTable is the inbox's table, version 5 of the schema ($S the
// schema): one row per event, handled_at NULL while unhandled.
const inboxTable = `CREATE TABLE $S.payonce_inbox (
		scope       text        NOT NULL,
		event_id    text        NOT NULL,
		resource_id text        NOT NULL DEFAULT '',
		event_type  text        NOT NULL DEFAULT '',
		body        bytea,
		received_at timestamptz NOT NULL,
		updated_at  timestamptz NOT NULL,
		deliveries  bigint      NOT NULL DEFAULT 1,
		handled_at  timestamptz,
		attempts    bigint      NOT NULL DEFAULT 0,
		last_error  text        NOT NULL DEFAULT '',
		lease_owner text        NOT NULL DEFAULT '',
		lease_until timestamptz,
		fence       bigint      NOT NULL DEFAULT 0,
		PRIMARY KEY (scope, event_id)
	);
	CREATE INDEX payonce_inbox_unhandled ON $S.payonce_inbox (received_at) WHERE handled_at IS NULL;
	CREATE INDEX payonce_inbox_handled ON $S.payonce_inbox (handled_at) WHERE handled_at IS NOT NULL;
	CREATE INDEX payonce_inbox_resource ON $S.payonce_inbox (scope, resource_id, received_at) WHERE resource_id <> '';`

const eventColumns = `scope, event_id, resource_id, event_type, body, received_at, updated_at, deliveries,
	handled_at, attempts, last_error, lease_owner, lease_until, fence`

// isql is s with $I the quoted inbox table.
func (j *Journal) isql(s string) string {
	return strings.ReplaceAll(s, "$I", pgx.Identifier{j.schema, "payonce_inbox"}.Sanitize())
}

// recordSQL inserts an event, or counts one more delivery of it, and
// returns the row either way.
const recordSQL = `INSERT INTO $I AS t (scope, event_id, resource_id, event_type, body, received_at, updated_at)
	VALUES ($1, $2, $3, $4, $5, COALESCE($6, now()), COALESCE($6, now()))
	ON CONFLICT (scope, event_id) DO UPDATE SET deliveries = t.deliveries + 1, updated_at = now()
	RETURNING ` + eventColumns

// claimSQL gives an unhandled event whose lease is free, expired or the
// owner's to a run: the fence and the attempts grow by one.
const claimSQL = `UPDATE $I SET fence = fence + 1, attempts = attempts + 1, lease_owner = $3,
	lease_until = now() + $4::bigint * interval '1 microsecond', updated_at = now()
	WHERE scope = $1 AND event_id = $2 AND handled_at IS NULL
	AND (lease_owner = '' OR lease_owner = $3 OR lease_until IS NULL OR lease_until <= now())
	RETURNING ` + eventColumns

// markSQL records an unhandled event handled by the claim of fence $3.
const markSQL = `UPDATE $I SET handled_at = now(), updated_at = now(), lease_owner = '', lease_until = NULL
	WHERE scope = $1 AND event_id = $2 AND handled_at IS NULL AND fence = $3
	RETURNING ` + eventColumns

// releaseSQL ends the claim of fence $3 on an unhandled event.
const releaseSQL = `UPDATE $I SET last_error = $4, updated_at = now(), lease_owner = '', lease_until = NULL
	WHERE scope = $1 AND event_id = $2 AND handled_at IS NULL AND fence = $3
	RETURNING ` + eventColumns

// eventNowSQL reads an event and now(), to name the rule a guarded write
// that changed nothing broke.
const eventNowSQL = `SELECT ` + eventColumns + `, now() FROM $I WHERE scope = $1 AND event_id = $2`

// RecordEvent stores e as unhandled unless its (Scope, EventID) exists; a
// duplicate adds one to Deliveries (payonce.Inbox.RecordEvent).
func (j *Journal) RecordEvent(ctx context.Context, e payonce.InboxEvent) (payonce.InboxEvent, bool, error) {
	if err := journal.CheckRecordEvent(e); err != nil {
		return payonce.InboxEvent{}, false, err
	}
	w := recordWrite(e)
	if err := j.inbox.Do(ctx, w); err != nil {
		return payonce.InboxEvent{}, false, err
	}
	return w.out, w.out.Deliveries == 1, nil
}

// ClaimEvent gives the unhandled event to the run r.LeaseOwner
// (payonce.Inbox.ClaimEvent).
func (j *Journal) ClaimEvent(ctx context.Context, r payonce.InboxEvent) (payonce.InboxEvent, error) {
	if err := journal.CheckClaimEvent(r); err != nil {
		return payonce.InboxEvent{}, err
	}
	w := claimWrite(r)
	err := j.inbox.Do(ctx, w)
	return w.out, err
}

// MarkHandled records that the claim of fence r.Fence handled the event
// (payonce.Inbox.MarkHandled). MarkHandledTx does it in the merchant's
// transaction.
func (j *Journal) MarkHandled(ctx context.Context, r payonce.InboxEvent) (payonce.InboxEvent, error) {
	if err := journal.CheckMarkEvent(r, false); err != nil {
		return payonce.InboxEvent{}, err
	}
	w := markWrite(r)
	err := j.inbox.Do(ctx, w)
	return w.out, err
}

// recordWrite is the write of RecordEvent e.
func recordWrite(e payonce.InboxEvent) *eventWrite {
	n := journal.NormalizeRecord(e, time.Time{})
	return &eventWrite{op: "record", r: e, stmt: recordSQL,
		args: []any{n.Scope, n.EventID, n.ResourceID, n.Type, n.Body, optTime(n.ReceivedAt)}}
}

// claimWrite is the write of ClaimEvent r.
func claimWrite(r payonce.InboxEvent) *eventWrite {
	return &eventWrite{op: "claim", r: r, stmt: claimSQL, args: []any{r.Scope, r.EventID, r.LeaseOwner, r.Lease.Microseconds()},
		refusal: func(e payonce.InboxEvent, now time.Time) error { return journal.ClaimEventRefusal(e, r, now) }}
}

// markWrite is the write of MarkHandled r.
func markWrite(r payonce.InboxEvent) *eventWrite {
	return &eventWrite{op: "mark", r: r, stmt: markSQL, args: []any{r.Scope, r.EventID, r.Fence},
		refusal: func(e payonce.InboxEvent, _ time.Time) error { return journal.MarkRefusal(e, r, false) }}
}

// releaseWrite is the write of ReleaseEvent r.
func releaseWrite(r payonce.InboxEvent) *eventWrite {
	return &eventWrite{op: "release", r: r, stmt: releaseSQL, args: []any{r.Scope, r.EventID, r.Fence, r.LastError},
		refusal: func(e payonce.InboxEvent, _ time.Time) error { return journal.MarkRefusal(e, r, true) }}
}

// MarkHandledTx is MarkHandled inside the caller's transaction, so that
// the handler's own writes and the mark commit or roll back together: a
// refused mark (another run took the event over) means the caller rolls
// back. The mark holds the event's row until the transaction ends, so a
// run taking the event over meanwhile waits for it, then finds the event
// handled or, after a rollback, takes it. HandlerTx does this around a
// handler.
func (j *Journal) MarkHandledTx(ctx context.Context, tx pgx.Tx, r payonce.InboxEvent) (payonce.InboxEvent, error) {
	if tx == nil {
		return payonce.InboxEvent{}, fmt.Errorf("%w: pgjournal: nil transaction", payonce.ErrInvalidConfig)
	}
	if err := journal.CheckMarkEvent(r, false); err != nil {
		return payonce.InboxEvent{}, err
	}
	w := markWrite(r)
	err := w.on(ctx, j, tx)
	return w.out, err
}

// HandlerTx returns a handler for payonce.HandleOnce that runs fn in a
// transaction of the pool after recording the event handled in it: fn's
// writes and the mark commit together, or neither does. A run another has
// taken over is refused before fn runs.
func (j *Journal) HandlerTx(fn func(ctx context.Context, tx pgx.Tx, ev payonce.InboxEvent) error) payonce.MarkingHandler {
	return func(ctx context.Context, ev payonce.InboxEvent) (payonce.InboxEvent, error) {
		tx, err := j.pool.Begin(ctx)
		if err != nil {
			return payonce.InboxEvent{}, fmt.Errorf("pgjournal: begin: %w", err)
		}
		defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
		got, err := j.MarkHandledTx(ctx, tx, ev)
		if err != nil {
			return got, err
		}
		if err := fn(ctx, tx, ev); err != nil {
			return payonce.InboxEvent{}, err
		}
		if err := tx.Commit(ctx); err != nil {
			return payonce.InboxEvent{}, fmt.Errorf("pgjournal: commit: %w", err)
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
	return j.inbox.Do(ctx, releaseWrite(r))
}

// GetEvent returns the event (scope, eventID).
func (j *Journal) GetEvent(ctx context.Context, scope, eventID string) (payonce.InboxEvent, error) {
	rows, err := j.pool.Query(ctx, j.isql(`SELECT `+eventColumns+` FROM $I WHERE scope = $1 AND event_id = $2`), scope, eventID)
	if err != nil {
		return payonce.InboxEvent{}, fmt.Errorf("pgjournal: get event: %w", err)
	}
	es, err := scanEvents(rows)
	if err != nil {
		return payonce.InboxEvent{}, err
	}
	if len(es) == 0 {
		return payonce.InboxEvent{}, fmt.Errorf("pgjournal: get event %q: %w", eventID, journal.ErrNotFound)
	}
	return es[0], nil
}

// Events lists the events q selects, oldest first.
func (j *Journal) Events(ctx context.Context, q payonce.InboxQuery) ([]payonce.InboxEvent, error) {
	if err := journal.CheckEventsQuery(q); err != nil {
		return nil, err
	}
	query, args := eventsSQL(q)
	rows, err := j.pool.Query(ctx, j.isql(query), args...)
	if err != nil {
		return nil, fmt.Errorf("pgjournal: events: %w", err)
	}
	return scanEvents(rows)
}

// eventsSQL is the query of Events q: only the conditions q sets, each
// written as the partial index it may use states it.
func eventsSQL(q payonce.InboxQuery) (string, []any) {
	where := []string{"true"}
	var args []any
	arg := func(cond string, v any) {
		args = append(args, v)
		where = append(where, strings.ReplaceAll(cond, "$n", fmt.Sprintf("$%d", len(args))))
	}
	if q.Scope != "" {
		arg("scope = $n", q.Scope)
	}
	if q.ResourceID != "" {
		arg("resource_id = $n AND resource_id <> ''", q.ResourceID)
	}
	if q.Unhandled || q.Stuck {
		where = append(where, "handled_at IS NULL")
	}
	if q.Stuck {
		where = append(where, "(lease_owner = '' OR lease_until IS NULL OR lease_until <= now())")
	}
	if !q.Before.IsZero() {
		arg("received_at < $n", journal.StoredTime(q.Before))
	}
	args = append(args, limit(q.Limit))
	return `SELECT ` + eventColumns + ` FROM $I WHERE ` + strings.Join(where, " AND ") +
		fmt.Sprintf(` ORDER BY received_at, scope, event_id LIMIT $%d`, len(args)), args
}

// PurgeEvents deletes events handled before handledBefore.
func (j *Journal) PurgeEvents(ctx context.Context, handledBefore time.Time) (int64, error) {
	tag, err := j.pool.Exec(ctx, j.isql(`DELETE FROM $I WHERE handled_at IS NOT NULL AND handled_at < $1`), journal.StoredTime(handledBefore))
	if err != nil {
		return 0, fmt.Errorf("pgjournal: purge events: %w", err)
	}
	return tag.RowsAffected(), nil
}

// eventWrite is one RecordEvent, ClaimEvent, MarkHandled or ReleaseEvent
// in the group commit (a write of group.go): one statement RETURNING the
// row, guarded by the event's state, fence and lease. Alone, when it
// changed nothing, the row and now() name the rule it broke (refusal).
// No rule broken means that the row moved on between the two statements:
// a mark had landed already (the row is the answer), a claim's lease
// ended meanwhile (the claim runs again).
type eventWrite struct {
	op      string
	r       payonce.InboxEvent
	stmt    string
	args    []any
	refusal func(e payonce.InboxEvent, now time.Time) error
	out     payonce.InboxEvent
}

func (w *eventWrite) alone(ctx context.Context, j *Journal) error {
	return w.on(ctx, j, j.pool)
}

// on runs the write on q: the pool, or a merchant's transaction.
func (w *eventWrite) on(ctx context.Context, j *Journal, q querier) error {
	for range 3 {
		rows, err := q.Query(ctx, j.isql(w.stmt), w.args...)
		if err != nil {
			return fmt.Errorf("pgjournal: %s event: %w", w.op, err)
		}
		es, err := scanEvents(rows)
		if err != nil {
			return err
		}
		if len(es) == 1 {
			w.out = es[0]
			return nil
		}
		if w.refusal == nil {
			break
		}
		e, now, err := w.stored(ctx, j, q)
		if err != nil {
			return err
		}
		w.out = e
		if rule := w.refusal(e, now); rule != nil {
			return fmt.Errorf("pgjournal: %w", rule)
		}
		if w.op == "mark" && e.Handled() && e.Fence == w.r.Fence {
			return nil
		}
		if w.op != "claim" {
			break
		}
	}
	return fmt.Errorf("pgjournal: %s event %q changed nothing", w.op, w.r.EventID)
}

// stored reads the write's event and now().
func (w *eventWrite) stored(ctx context.Context, j *Journal, q querier) (payonce.InboxEvent, time.Time, error) {
	rows, err := q.Query(ctx, j.isql(eventNowSQL), w.r.Scope, w.r.EventID)
	if err != nil {
		return payonce.InboxEvent{}, time.Time{}, fmt.Errorf("pgjournal: %s event: %w", w.op, err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return payonce.InboxEvent{}, time.Time{}, fmt.Errorf("pgjournal: %s event: %w", w.op, err)
		}
		return payonce.InboxEvent{}, time.Time{}, fmt.Errorf("pgjournal: %s event %q: %w", w.op, w.r.EventID, journal.ErrNotFound)
	}
	var now time.Time
	e, err := scanEvent(rows, &now)
	if err != nil {
		return payonce.InboxEvent{}, time.Time{}, err
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return payonce.InboxEvent{}, time.Time{}, fmt.Errorf("pgjournal: %s event: %w", w.op, err)
	}
	return e, now.UTC(), nil
}

func (w *eventWrite) queue(j *Journal, b *pgx.Batch) {
	b.Queue(j.isql(w.stmt), w.args...)
}

func (w *eventWrite) read(_ *Journal, br pgx.BatchResults) error {
	rows, err := br.Query()
	if err != nil {
		return fmt.Errorf("pgjournal: %s event: %w", w.op, err)
	}
	es, err := scanEvents(rows)
	if err != nil {
		return err
	}
	if len(es) != 1 {
		return errAgain
	}
	w.out = es[0]
	return nil
}

func scanEvents(rows pgx.Rows) ([]payonce.InboxEvent, error) {
	defer rows.Close()
	var out []payonce.InboxEvent
	for rows.Next() {
		e, err := scanEvent(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pgjournal: scan event: %w", err)
	}
	return out, nil
}

// scanEvent scans the current row: the event's columns, then extra.
func scanEvent(rows pgx.Rows, extra ...any) (payonce.InboxEvent, error) {
	var e payonce.InboxEvent
	var handled, leaseUntil *time.Time
	var deliveries, attempts int64
	dest := []any{&e.Scope, &e.EventID, &e.ResourceID, &e.Type, &e.Body, &e.ReceivedAt, &e.UpdatedAt, &deliveries,
		&handled, &attempts, &e.LastError, &e.LeaseOwner, &leaseUntil, &e.Fence}
	if err := rows.Scan(append(dest, extra...)...); err != nil {
		return payonce.InboxEvent{}, fmt.Errorf("pgjournal: scan event: %w", err)
	}
	e.Deliveries, e.Attempts = int(deliveries), int(attempts)
	e.ReceivedAt, e.UpdatedAt = e.ReceivedAt.UTC(), e.UpdatedAt.UTC()
	if handled != nil {
		e.HandledAt = handled.UTC()
	}
	if leaseUntil != nil {
		e.LeaseUntil = leaseUntil.UTC()
	}
	if len(e.Body) == 0 {
		e.Body = nil
	}
	return e, nil
}
