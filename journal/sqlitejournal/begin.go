package sqlitejournal

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// begin starts a write transaction (BEGIN IMMEDIATE, the DSN's _txlock).
// The busy timeout makes SQLite wait for a lock, but in a few cases it
// answers SQLITE_BUSY at once (seen when several processes open a new
// file together, one of them switching it to WAL). Nothing has run when
// BEGIN fails, so begin tries again until the busy timeout has passed.
func (j *Journal) begin(ctx context.Context) (*sql.Tx, error) {
	tx, err := retryBusy(ctx, j.busy, func() (*sql.Tx, error) { return j.db.BeginTx(ctx, nil) })
	if err != nil {
		return nil, fmt.Errorf("sqlitejournal: begin: %w", err)
	}
	// Holding the write lock, before anything is written: the file must
	// still be the one opened (file.go).
	if err := j.file.check(); err != nil {
		_ = tx.Rollback()
		return nil, err
	}
	return tx, nil
}

// retryBusy calls fn until it returns something other than a busy error,
// ctx ends or budget has passed, waiting 2 ms, then twice as long each
// time up to 50 ms, between calls.
func retryBusy[T any](ctx context.Context, budget time.Duration, fn func() (T, error)) (T, error) {
	deadline := time.Now().Add(budget)
	wait := 2 * time.Millisecond
	for {
		v, err := fn()
		if err == nil || !busy(err) || time.Now().Add(wait).After(deadline) {
			return v, err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return v, fmt.Errorf("%w (after: %w)", ctx.Err(), err)
		case <-t.C:
		}
		wait = min(2*wait, 50*time.Millisecond)
	}
}

// busy reports an SQLITE_BUSY or SQLITE_LOCKED error, with any extended
// code (modernc.org/sqlite's *sqlite.Error has Code).
func busy(err error) bool {
	var c interface{ Code() int }
	if errors.As(err, &c) {
		switch c.Code() & 0xff {
		case 5, 6: // SQLITE_BUSY, SQLITE_LOCKED
			return true
		}
	}
	return false
}
