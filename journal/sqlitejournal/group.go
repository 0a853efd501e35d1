package sqlitejournal

import (
	"context"
	"database/sql"

	"github.com/payonce/payonce/journal"
)

// write is one Reserve or Update run inside a (batch) transaction.
type write func(ctx context.Context, tx *sql.Tx) error

// Group commit: Reserve and Update of one process go through a
// journal.Batcher, so concurrent writes share one BEGIN IMMEDIATE
// transaction and one fsync. Each caller still returns only once its own
// write is committed.

func newBatcher(j *Journal) *journal.Batcher[write] {
	return journal.NewBatcher(j.runBatch, journal.DefaultMaxBatch, 1, 0)
}

// commitWrite runs w through the batcher.
func (j *Journal) commitWrite(ctx context.Context, w write) error {
	return j.batch.Do(ctx, w)
}

func (j *Journal) runBatch(ctx context.Context, items []journal.BatchItem[write]) []error {
	return journal.RunBatch(ctx, items,
		j.begin,
		func(ctx context.Context, tx *sql.Tx, w write) error { return w(ctx, tx) },
		func(_ context.Context, tx *sql.Tx) error { return j.commit(tx) },
		func(tx *sql.Tx) { _ = tx.Rollback() },
		func(ctx context.Context, w write) error {
			return j.inTx(ctx, func(tx *sql.Tx) error { return w(ctx, tx) })
		})
}
