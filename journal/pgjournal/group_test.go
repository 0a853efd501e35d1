package pgjournal

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/payonce/payonce"
	"github.com/payonce/payonce/journal"
	"github.com/payonce/payonce/journal/journaltest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func openInternal(t *testing.T) *Journal {
	t.Helper()
	url := os.Getenv("PAYONCE_POSTGRES_URL")
	if url == "" {
		t.Skip("PAYONCE_POSTGRES_URL is not set: skipping the PostgreSQL tests")
	}
	p, err := pgxpool.New(t.Context(), url)
	require.NoError(t, err)
	t.Cleanup(p.Close)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "payonce_test_" + hex.EncodeToString(b)
	t.Cleanup(func() {
		_, err := p.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{name}.Sanitize()+" CASCADE")
		assert.NoError(t, err)
	})
	j, err := New(t.Context(), p, WithSchema(name))
	require.NoError(t, err)
	t.Cleanup(j.Close)
	return j
}

func TestGroupCommitManyWriters(t *testing.T) {
	journaltest.ManyWriters(t, openInternal(t))
}

func TestGroupCommitManyAttempts(t *testing.T) {
	journaltest.ManyAttempts(t, openInternal(t))
}

// badWrite fails in a batch and alone.
type badWrite struct{}

var errBadAlone = errors.New("bad write")

func (badWrite) alone(context.Context, *Journal) error { return errBadAlone }
func (badWrite) queue(_ *Journal, b *pgx.Batch)        { b.Queue(`SELECT * FROM no_such_table`) }
func (badWrite) read(_ *Journal, br pgx.BatchResults) error {
	_, err := br.Exec()
	return err
}

func TestGroupCommitOneFailingWriteFailsOnlyItself(t *testing.T) {
	j := openInternal(t)
	a := &reserveWrite{e: journal.NormalizeReserve(journaltest.Entry("scope", "a"), time.Time{})}
	dupe := &reserveWrite{e: journal.NormalizeReserve(journaltest.Entry("scope", "a"), time.Time{})}
	b := &reserveWrite{e: journal.NormalizeReserve(journaltest.Entry("scope", "b"), time.Time{})}
	c := &reserveWrite{e: journal.NormalizeReserve(journaltest.Entry("scope", "c"), time.Time{})}
	canceled, cancel := context.WithCancel(t.Context())
	cancel()
	errs := j.runBatch(t.Context(), []journal.BatchItem[write]{
		{Ctx: t.Context(), Write: a}, {Ctx: t.Context(), Write: badWrite{}}, {Ctx: t.Context(), Write: dupe},
		{Ctx: canceled, Write: c}, {Ctx: t.Context(), Write: b},
	})
	require.Len(t, errs, 5)
	require.NoError(t, errs[0])
	require.ErrorIs(t, errs[1], errBadAlone)
	require.NoError(t, errs[2])
	require.ErrorIs(t, errs[3], context.Canceled)
	require.NoError(t, errs[4])
	// The pipelined batch was rolled back as a whole and each write re-run
	// alone: a is created by its first caller only.
	assert.True(t, a.created)
	assert.False(t, dupe.created)
	assert.True(t, b.created)
	_, err := j.Get(t.Context(), "scope", "c")
	require.ErrorIs(t, err, journal.ErrNotFound, "a write whose context ended first is not made")
}

func TestGroupCommitPipelinedBatch(t *testing.T) {
	j := openInternal(t)
	a := &reserveWrite{e: journal.NormalizeReserve(journaltest.Entry("scope", "a"), time.Time{})}
	dupe := &reserveWrite{e: journal.NormalizeReserve(journaltest.Entry("scope", "a"), time.Time{})}
	settle := journaltest.Entry("scope", "a")
	settle.State, settle.UpdatedAt = payonce.JournalSucceeded, time.Now()
	back := settle
	back.State = payonce.JournalPending
	absent := journaltest.Entry("scope", "absent")
	absent.UpdatedAt = time.Now()
	errs := j.runBatch(t.Context(), []journal.BatchItem[write]{
		{Ctx: t.Context(), Write: a}, {Ctx: t.Context(), Write: dupe},
		{Ctx: t.Context(), Write: &updateWrite{e: settle}}, {Ctx: t.Context(), Write: &updateWrite{e: back}},
		{Ctx: t.Context(), Write: &updateWrite{e: absent}},
	})
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])
	require.NoError(t, errs[2])
	require.ErrorIs(t, errs[3], journal.ErrSettled)
	require.ErrorIs(t, errs[4], journal.ErrNotFound)
	assert.True(t, a.created)
	assert.False(t, dupe.created, "a second reserve in the same batch sees the first")
	assert.Equal(t, payonce.JournalPending, dupe.out.State)
	got, err := j.Get(t.Context(), "scope", "a")
	require.NoError(t, err)
	assert.Equal(t, payonce.JournalSucceeded, got.State)
}

func TestCloseRefusesWrites(t *testing.T) {
	j := openInternal(t)
	j.Close()
	_, _, err := j.Reserve(t.Context(), journaltest.Entry("scope", "late"))
	require.ErrorIs(t, err, journal.ErrBatcherClosed)
}

// A Take and a BeginAttempt the batch refuses changed nothing there; run
// again alone after the batch, each names the rule it broke, next to a
// Take that lands.
func TestGroupCommitRefusedGuardedWrites(t *testing.T) {
	j := openInternal(t)
	_, _, err := j.Reserve(t.Context(), journaltest.Entry("scope", "a"))
	require.NoError(t, err)
	take := takeWrite(payonce.JournalEntry{Scope: "scope", Reference: "a", LeaseOwner: "w1", Lease: time.Hour})
	leased := takeWrite(payonce.JournalEntry{Scope: "scope", Reference: "a", LeaseOwner: "w2", Lease: time.Hour})
	stale := attemptWrite(payonce.JournalEntry{Scope: "scope", Reference: "a", LeaseOwner: "w1", Lease: time.Hour, Fence: 1})
	absent := attemptWrite(payonce.JournalEntry{Scope: "scope", Reference: "absent", LeaseOwner: "w1", Lease: time.Hour, Fence: 1})
	errs := j.runBatch(t.Context(), []journal.BatchItem[write]{
		{Ctx: t.Context(), Write: take}, {Ctx: t.Context(), Write: leased},
		{Ctx: t.Context(), Write: stale}, {Ctx: t.Context(), Write: absent},
	})
	require.NoError(t, errs[0])
	assert.Equal(t, int64(2), take.out.Fence)
	require.ErrorIs(t, errs[1], payonce.ErrJournalLeased)
	require.ErrorIs(t, errs[2], payonce.ErrJournalFenced)
	require.ErrorIs(t, errs[3], journal.ErrNotFound)
	got, err := j.Get(t.Context(), "scope", "a")
	require.NoError(t, err)
	assert.Equal(t, "w1", got.LeaseOwner)
	assert.Equal(t, int64(2), got.Fence)
	assert.False(t, got.Sent, "the refused attempt changed nothing")
}

// A Reserve in a batch that conflicts with an entry another transaction
// commits while the Reserve waits on it finds no row in its statement's
// snapshot: run again alone, it returns that entry, not created.
func TestGroupCommitReserveMeetsLaterCommit(t *testing.T) {
	j := openInternal(t)
	ctx := t.Context()
	other, err := j.pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = other.Rollback(context.Background()) }()
	first, created, err := j.reserve(ctx, other, journaltest.Entry("scope", "a"))
	require.NoError(t, err)
	require.True(t, created)

	a := &reserveWrite{e: journal.NormalizeReserve(journaltest.Entry("scope", "a"), time.Time{})}
	b := &reserveWrite{e: journal.NormalizeReserve(journaltest.Entry("scope", "b"), time.Time{})}
	done := make(chan []error, 1)
	go func() {
		done <- j.runBatch(ctx, []journal.BatchItem[write]{{Ctx: ctx, Write: b}, {Ctx: ctx, Write: a}})
	}()
	// The batch waits for other's row lock: the wait shows in
	// pg_stat_activity, on a statement naming this test's schema.
	for waiting := false; !waiting; {
		select {
		case errs := <-done:
			t.Fatalf("the batch returned %v without waiting for the other transaction", errs)
		default:
		}
		require.NoError(t, j.pool.QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_stat_activity
			WHERE wait_event_type = 'Lock' AND position($1 in query) > 0)`, j.table).Scan(&waiting))
	}
	require.NoError(t, other.Commit(ctx))
	errs := <-done
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])
	assert.True(t, b.created)
	assert.False(t, a.created)
	assert.Equal(t, first.Key, a.out.Key)
	assert.Equal(t, payonce.JournalPending, a.out.State)
}
