package sqlitejournal

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/journal"
	"github.com/payonce/payonce/journal/journaltest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func openInternal(t *testing.T) *Journal {
	t.Helper()
	j, err := Open(t.Context(), filepath.Join(t.TempDir(), "journal.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = j.Close() })
	return j
}

func TestGroupCommitManyWriters(t *testing.T) {
	journaltest.ManyWriters(t, openInternal(t))
}

func TestGroupCommitManyAttempts(t *testing.T) {
	journaltest.ManyAttempts(t, openInternal(t))
}

// reserveItem is a Reserve as Reserve queues it, with its results.
func reserveItem(t *testing.T, j *Journal, ref string, out *payonce.JournalEntry, created *bool) journal.BatchItem[write] {
	e := journaltest.Entry("scope", ref)
	return journal.BatchItem[write]{Ctx: t.Context(), Write: func(ctx context.Context, tx *sql.Tx) error {
		var err error
		*out, *created, err = j.reserve(ctx, tx, e)
		return err
	}}
}

func TestGroupCommitOneFailingWriteFailsOnlyItself(t *testing.T) {
	j := openInternal(t)
	var a, b, dupe payonce.JournalEntry
	var aNew, bNew, dupeNew bool
	bad := journal.BatchItem[write]{Ctx: t.Context(), Write: func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO no_such_table VALUES (1)`)
		return err
	}}
	canceled, cancel := context.WithCancel(t.Context())
	cancel()
	var c payonce.JournalEntry
	var cNew bool
	skipped := reserveItem(t, j, "c", &c, &cNew)
	skipped.Ctx = canceled
	errs := j.runBatch(t.Context(), []journal.BatchItem[write]{
		reserveItem(t, j, "a", &a, &aNew), bad, reserveItem(t, j, "a", &dupe, &dupeNew), skipped, reserveItem(t, j, "b", &b, &bNew),
	})
	require.Len(t, errs, 5)
	require.NoError(t, errs[0])
	require.Error(t, errs[1])
	require.NoError(t, errs[2])
	require.ErrorIs(t, errs[3], context.Canceled)
	require.NoError(t, errs[4])
	// Rolled back and re-run alone: a is created by its first caller only.
	assert.True(t, aNew)
	assert.False(t, dupeNew)
	assert.Equal(t, a.Key, dupe.Key)
	assert.True(t, bNew)
	_, err := j.Get(t.Context(), "scope", "c")
	require.ErrorIs(t, err, journal.ErrNotFound, "a write whose context ended first is not made")
}

func TestGroupCommitSharesOneTransaction(t *testing.T) {
	j := openInternal(t)
	var a, dupe payonce.JournalEntry
	var aNew, dupeNew bool
	e := journaltest.Entry("scope", "a")
	e.State = payonce.JournalSucceeded
	errs := j.runBatch(t.Context(), []journal.BatchItem[write]{
		reserveItem(t, j, "a", &a, &aNew),
		reserveItem(t, j, "a", &dupe, &dupeNew),
	})
	for _, err := range errs {
		require.NoError(t, err)
	}
	assert.True(t, aNew)
	assert.False(t, dupeNew, "a second reserve in the same batch sees the first")
	require.NoError(t, j.Update(t.Context(), e))
	require.ErrorIs(t, j.Update(t.Context(), journaltest.Entry("scope", "a")), journal.ErrSettled)
}

func TestCloseRefusesWrites(t *testing.T) {
	j, err := Open(t.Context(), filepath.Join(t.TempDir(), "journal.db"))
	require.NoError(t, err)
	require.NoError(t, j.Close())
	_, _, err = j.Reserve(t.Context(), journaltest.Entry("scope", "late"))
	require.ErrorIs(t, err, journal.ErrBatcherClosed)
}
