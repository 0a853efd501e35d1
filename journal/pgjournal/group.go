package pgjournal

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/payonce/payonce/journal"
)

// write is one Reserve or Update run inside a (batch) transaction.
type write func(ctx context.Context, q querier) error

// Group commit: Reserve and Update of one process go through a
// journal.Batcher, so concurrent writes share one transaction, one
// connection and one WAL flush. Each caller still returns only once its
// own write is committed.

func newBatcher(j *Journal) *journal.Batcher[write] {
	return journal.NewBatcher(j.runBatch, journal.DefaultMaxBatch, 0)
}

// commitWrite runs w through the batcher.
func (j *Journal) commitWrite(ctx context.Context, w write) error {
	return j.batch.Do(ctx, w)
}

func (j *Journal) runBatch(ctx context.Context, items []journal.BatchItem[write]) []error {
	return journal.RunBatch(ctx, items,
		func(ctx context.Context) (pgx.Tx, error) {
			tx, err := j.pool.Begin(ctx)
			if err != nil {
				return nil, fmt.Errorf("pgjournal: begin: %w", err)
			}
			return tx, nil
		},
		func(ctx context.Context, tx pgx.Tx, w write) error { return w(ctx, tx) },
		func(ctx context.Context, tx pgx.Tx) error {
			if err := tx.Commit(ctx); err != nil {
				return fmt.Errorf("pgjournal: commit: %w", err)
			}
			return nil
		},
		func(tx pgx.Tx) { _ = tx.Rollback(context.Background()) },
		// Alone, each write is one statement (or a statement and a read)
		// on the pool, committed as it runs.
		func(ctx context.Context, w write) error { return w(ctx, j.pool) })
}
