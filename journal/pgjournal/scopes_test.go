package pgjournal_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/journal"
	"github.com/payonce/payonce/journal/journaltest"
)

// A move is all or none, and refuses while a live run holds an entry of
// the scope. A run of an earlier payonce (a rolling deploy) reserves a
// new entry under the old scope, leased, while the move waits for a row
// lock after reading which entries are leased: the entry must not be
// moved under that run's feet (its outcome write would then find no entry
// and be lost) — the move is refused, nothing moved.
func TestMoveScopeNeverMovesAnEntryReservedMeanwhile(t *testing.T) {
	j := open(t)
	ctx := t.Context()
	_, _, err := j.Reserve(ctx, journaltest.Entry("a55:client-1", "order-1/attempt-1"))
	require.NoError(t, err)

	locker, err := j.Pool().Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = locker.Rollback(context.Background()) }()
	_, err = locker.Exec(ctx, `SELECT 1 FROM `+schemaOf(t, j)+`.payonce_journal WHERE scope = 'a55:client-1' FOR UPDATE`)
	require.NoError(t, err)

	done := make(chan error, 1)
	go func() {
		_, err := j.MoveScope(ctx, "a55:client-1", "a55:client-1@https://sandbox.api.a55.tech")
		done <- err
	}()
	// The move waits for the locked row: the wait shows in
	// pg_stat_activity, on a statement naming this test's schema.
	for waiting := false; !waiting; {
		select {
		case err := <-done:
			t.Fatalf("the move returned %v without waiting for the lock", err)
		default:
		}
		require.NoError(t, j.Pool().QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_stat_activity
			WHERE wait_event_type = 'Lock' AND position($1 in query) > 0)`, j.Schema()).Scan(&waiting))
	}
	live := journaltest.Entry("a55:client-1", "order-2/attempt-1")
	live.LeaseOwner, live.Lease, live.Sent = "old-worker", time.Hour, true
	_, created, err := j.Reserve(ctx, live)
	require.NoError(t, err)
	require.True(t, created)
	require.NoError(t, locker.Commit(ctx))

	err = <-done
	require.ErrorIs(t, err, payonce.ErrJournalLeased, "a live run holds an entry of the scope")
	got, err := j.Get(ctx, "a55:client-1", "order-2/attempt-1")
	require.NoError(t, err, "the live run's entry stays where it writes")
	assert.Equal(t, "old-worker", got.LeaseOwner)
	_, err = j.Get(ctx, "a55:client-1@https://sandbox.api.a55.tech", "order-1/attempt-1")
	require.ErrorIs(t, err, journal.ErrNotFound, "all or none")
}
