package pgjournal

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/payonce/payonce"
	"github.com/payonce/payonce/journal"
)

// Group commit: every write of one process (Reserve, Update, Take,
// BeginAttempt) goes through a journal.Batcher. A batch of several
// writes is sent as one pgx.Batch: one statement per write, pipelined on
// one connection and run in one implicit transaction (one round trip, one
// WAL flush), which commits at the batch's end or not at all. Each caller
// still returns only once its own write is committed. When any statement
// fails, nothing of the batch is committed and every write runs again
// alone, so one write's failure never fails another. A guarded write the
// batch refused changed nothing: it runs again alone once the batch has
// committed, and that run reads the row to name the rule it broke, so the
// batch carries no reads.

// write is one Reserve, Update, Take or BeginAttempt. alone runs it on the
// pool (its own commit); queue adds its one statement to a batch and read
// consumes its result: nil when it landed, errAgain when it changed
// nothing and is to run alone after the batch.
type write interface {
	alone(ctx context.Context, j *Journal) error
	queue(j *Journal, b *pgx.Batch)
	read(j *Journal, br pgx.BatchResults) error
}

// errAgain is read's answer for a write the batch refused: it changed
// nothing, and runs again alone once the batch has committed.
var errAgain = errors.New("pgjournal: refused in a batch")

func newBatcher(j *Journal) *journal.Batcher[write] {
	return journal.NewBatcher(j.runBatch, journal.DefaultMaxBatch, writeLanes, 0)
}

func (j *Journal) runBatch(ctx context.Context, items []journal.BatchItem[write]) []error {
	errs := make([]error, len(items))
	var live []int
	for i, it := range items {
		if err := it.Ctx.Err(); err != nil {
			errs[i] = err // never sent: nothing written
			continue
		}
		live = append(live, i)
	}
	if len(live) <= 1 || !j.pipelined(ctx, items, live, errs) {
		for _, i := range live {
			errs[i] = errAgain
		}
	}
	for _, i := range live {
		if errs[i] == errAgain {
			errs[i] = items[i].Write.alone(ctx, j)
		}
	}
	return errs
}

// pipelined sends the live items as one pgx.Batch. It reports false when
// a statement or the commit failed: then no write of the batch may be
// relied upon, and the caller runs each alone (a Reserve that did commit
// is found again, an Update is applied again, both harmless). A write
// the batch refused gets errAgain.
func (j *Journal) pipelined(ctx context.Context, items []journal.BatchItem[write], live []int, errs []error) bool {
	b := &pgx.Batch{}
	for _, i := range live {
		items[i].Write.queue(j, b)
	}
	br := j.pool.SendBatch(ctx, b)
	got := make([]error, len(live))
	ok := true
	for k, i := range live {
		err := items[i].Write.read(j, br)
		if err != nil && err != errAgain {
			ok = false
			break
		}
		got[k] = err
	}
	if err := br.Close(); err != nil || !ok {
		return false
	}
	for k, i := range live {
		errs[i] = got[k]
	}
	return true
}

// reserveWrite is a Reserve; out and created are its result.
type reserveWrite struct {
	e       payonce.JournalEntry // normalized
	out     payonce.JournalEntry
	created bool
}

func (w *reserveWrite) alone(ctx context.Context, j *Journal) error {
	var err error
	w.out, w.created, err = j.reserve(ctx, j.pool, w.e)
	return err
}

func (w *reserveWrite) queue(j *Journal, b *pgx.Batch) {
	b.Queue(j.sql(insertSQL), insertArgs(w.e)...)
}

func (w *reserveWrite) read(_ *Journal, br pgx.BatchResults) error {
	rows, err := br.Query()
	if err != nil {
		return fmt.Errorf("pgjournal: reserve: %w", err)
	}
	out, created, found, err := scanReserved(rows)
	switch {
	case err != nil:
		return err
	case !found:
		// The entry it conflicted with was committed after the
		// statement began: alone, a new statement reads it.
		return errAgain
	}
	w.out, w.created = out, created
	return nil
}

// updateWrite is an Update: the guarded UPDATE, then, alone and when it
// changed nothing, the row it was refused by.
type updateWrite struct {
	e payonce.JournalEntry
}

func (w *updateWrite) alone(ctx context.Context, j *Journal) error {
	tag, err := j.pool.Exec(ctx, j.sql(updateSQL), updateArgs(w.e)...)
	if err != nil {
		return fmt.Errorf("pgjournal: update: %w", err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	rows, err := j.pool.Query(ctx, j.sql(rowSQL), w.e.Scope, w.e.Reference)
	if err != nil {
		return fmt.Errorf("pgjournal: update: %w", err)
	}
	return w.refusal(rows)
}

func (w *updateWrite) queue(j *Journal, b *pgx.Batch) {
	b.Queue(j.sql(updateSQL), updateArgs(w.e)...)
}

func (w *updateWrite) read(_ *Journal, br pgx.BatchResults) error {
	tag, err := br.Exec()
	if err != nil {
		return fmt.Errorf("pgjournal: update: %w", err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	return errAgain
}

func (w *updateWrite) refusal(rows pgx.Rows) error {
	old, _, err := scanRowNow(rows)
	var rule error
	if err == nil {
		rule = journal.CheckUpdate(old, w.e)
	}
	return refusedWrite("update", w.e.Reference, err, rule)
}

// guardedWrite is a Take or a BeginAttempt: one UPDATE ... RETURNING
// guarded by the entry's state, fence and lease, then, alone and when it
// changed nothing, the row and now() to name the rule it broke (refusal).
type guardedWrite struct {
	op, ref, scope string
	stmt           string
	args           []any
	refusal        func(e payonce.JournalEntry, now time.Time) error
	out            payonce.JournalEntry
}

// takeWrite is the write of Take r.
func takeWrite(r payonce.JournalEntry) *guardedWrite {
	return &guardedWrite{op: "take", ref: r.Reference, stmt: takeSQL, args: takeArgs(r), scope: r.Scope,
		refusal: func(e payonce.JournalEntry, now time.Time) error { return journal.TakeRefusal(e, r, now) }}
}

// attemptWrite is the write of BeginAttempt r.
func attemptWrite(r payonce.JournalEntry) *guardedWrite {
	return &guardedWrite{op: "attempt", ref: r.Reference, stmt: attemptSQL, args: attemptArgs(r), scope: r.Scope,
		refusal: func(e payonce.JournalEntry, _ time.Time) error { return journal.AttemptRefusal(e, r) }}
}

func (w *guardedWrite) alone(ctx context.Context, j *Journal) error {
	rows, err := j.pool.Query(ctx, j.sql(w.stmt), w.args...)
	if err != nil {
		return fmt.Errorf("pgjournal: %s: %w", w.op, err)
	}
	es, err := scanAll(rows)
	if err != nil {
		return err
	}
	if len(es) == 1 {
		w.out = es[0]
		return nil
	}
	rows, err = j.pool.Query(ctx, j.sql(rowSQL), w.scope, w.ref)
	if err != nil {
		return fmt.Errorf("pgjournal: %s: %w", w.op, err)
	}
	return w.refused(rows)
}

func (w *guardedWrite) queue(j *Journal, b *pgx.Batch) {
	b.Queue(j.sql(w.stmt), w.args...)
}

func (w *guardedWrite) read(_ *Journal, br pgx.BatchResults) error {
	rows, err := br.Query()
	if err != nil {
		return fmt.Errorf("pgjournal: %s: %w", w.op, err)
	}
	es, err := scanAll(rows)
	if err != nil {
		return err
	}
	if len(es) != 1 {
		return errAgain
	}
	w.out = es[0]
	return nil
}

func (w *guardedWrite) refused(rows pgx.Rows) error {
	e, now, err := scanRowNow(rows)
	var rule error
	if err == nil {
		w.out = e
		rule = w.refusal(e, now)
	}
	return refusedWrite(w.op, w.ref, err, rule)
}

// writeLanes is how many batches commit at once: while one waits for its
// WAL flush the next is gathered and sent, and the server flushes
// concurrent commits together.
const writeLanes = 2
