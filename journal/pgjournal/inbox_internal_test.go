package pgjournal

import (
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/payonce/payonce"
	"github.com/payonce/payonce/journal"
	"github.com/payonce/payonce/journal/journaltest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Inbox writes share a pipelined batch: a record and its duplicate, a
// claim that lands, and, refused in the batch and run again alone, a
// claim of a leased event, a stale mark and a release of an absent event,
// each naming the rule it broke.
func TestGroupCommitInboxWrites(t *testing.T) {
	j := openInternal(t)
	first, dupe := recordWrite(journaltest.Event("s", "e1")), recordWrite(journaltest.Event("s", "e1"))
	claimed := claimWrite(payonce.InboxEvent{Scope: "s", EventID: "e1", LeaseOwner: "w1", Lease: time.Hour})
	leased := claimWrite(payonce.InboxEvent{Scope: "s", EventID: "e1", LeaseOwner: "w2", Lease: time.Hour})
	stale := markWrite(payonce.InboxEvent{Scope: "s", EventID: "e1", Fence: 7})
	absent := releaseWrite(payonce.InboxEvent{Scope: "s", EventID: "absent", Fence: 1})
	var items []journal.BatchItem[write]
	for _, w := range []*eventWrite{first, dupe, claimed, leased, stale, absent} {
		items = append(items, journal.BatchItem[write]{Ctx: t.Context(), Write: w})
	}
	errs := j.runBatch(t.Context(), items)
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])
	require.NoError(t, errs[2])
	require.ErrorIs(t, errs[3], payonce.ErrJournalLeased)
	require.ErrorIs(t, errs[4], payonce.ErrJournalFenced)
	require.ErrorIs(t, errs[5], journal.ErrNotFound)
	assert.Equal(t, 1, first.out.Deliveries)
	assert.Equal(t, 2, dupe.out.Deliveries, "the duplicate in the same batch sees the first")
	assert.EqualValues(t, 1, claimed.out.Fence)
	assert.Equal(t, "w1", leased.out.LeaseOwner, "the refusal returns the event")
	got, err := j.GetEvent(t.Context(), "s", "e1")
	require.NoError(t, err)
	assert.Equal(t, "w1", got.LeaseOwner)
	assert.EqualValues(t, 1, got.Fence)
	assert.False(t, got.Handled(), "the refused writes changed nothing")
}

// The listings a receiver and an operator run can read the inbox's
// partial indexes: a resource's events (an ordering rule, on every
// delivery), the unhandled and stuck ones.
func TestInboxListingsCanUseThePartialIndexes(t *testing.T) {
	j := openInternal(t)
	for _, c := range []struct {
		q     payonce.InboxQuery
		index string
	}{
		{payonce.InboxQuery{Scope: "s", ResourceID: "r"}, "payonce_inbox_resource"},
		{payonce.InboxQuery{Scope: "s", ResourceID: "r", Unhandled: true}, "payonce_inbox_resource"},
		{payonce.InboxQuery{Unhandled: true}, "payonce_inbox_unhandled"},
		{payonce.InboxQuery{Stuck: true, Limit: 10}, "payonce_inbox_unhandled"},
	} {
		query, args := eventsSQL(c.q)
		tx, err := j.pool.Begin(t.Context())
		require.NoError(t, err)
		// An empty table is read whole otherwise: ask whether the index
		// can serve the query at all.
		_, err = tx.Exec(t.Context(), "SET LOCAL enable_seqscan = off")
		require.NoError(t, err)
		rows, err := tx.Query(t.Context(), "EXPLAIN "+j.isql(query), args...)
		require.NoError(t, err)
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		require.NoError(t, tx.Rollback(t.Context()))
		assert.Contains(t, strings.Join(lines, "\n"), c.index, query)
	}
}
