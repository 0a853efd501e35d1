package journal_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/journal"
	"github.com/payonce/payonce/journal/sqlitejournal"
)

// A journal file locked by another writer longer than the busy timeout
// is a typed ErrJournal error, nothing sent; never a silent failure.
func TestSQLiteBusyIsATypedJournalError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "busy.db")
	j, err := sqlitejournal.Open(t.Context(), path, sqlitejournal.WithBusyTimeout(50e6))
	require.NoError(t, err)
	defer j.Close()
	other, err := sql.Open("sqlite", "file:"+path)
	require.NoError(t, err)
	defer other.Close()
	conn, err := other.Conn(t.Context())
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.ExecContext(t.Context(), "BEGIN IMMEDIATE")
	require.NoError(t, err)
	defer func() { _, _ = conn.ExecContext(context.Background(), "ROLLBACK") }()

	srv := a55test.New(t)
	_, err = a55Client(t, srv, j).Charges.Create(t.Context(), chargeRequest("4111111111111111"), payonce.WithReference("o-busy"))
	require.ErrorIs(t, err, payonce.ErrJournal)
	var apiErr *payonce.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.NotEmpty(t, apiErr.Key)
	assert.Empty(t, srv.Requests(), "nothing sent")
}

// A closed journal is a typed ErrJournal error, nothing sent.
func TestClosedJournalIsATypedErrorAndSendsNothing(t *testing.T) {
	for _, b := range backends(t) {
		if b.name == "memory" {
			continue
		}
		t.Run(b.name, func(t *testing.T) {
			_, reopen := b.open(t)
			j := reopen(t)
			switch c := j.(type) {
			case interface{ Close() error }:
				require.NoError(t, c.Close())
			case interface{ Close() }:
				c.Close()
			default:
				t.Fatalf("%T has no Close", j)
			}
			srv := a55test.New(t)
			_, err := a55Client(t, srv, j).Charges.Create(t.Context(), chargeRequest("4111111111111111"), payonce.WithReference("o-closed"))
			require.ErrorIs(t, err, payonce.ErrJournal)
			for _, r := range srv.Requests() {
				assert.NotEqual(t, a55test.ChargePath, r.Path, "nothing sent")
			}
		})
	}
}

// A reference that is not valid UTF-8 is refused as bad input, before
// anything is recorded or sent, whatever the backend (PostgreSQL's text
// columns cannot hold it; SQLite would).
func TestReferenceThatIsNotUTF8IsInvalidInput(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			j, _ := b.open(t)
			srv := a55test.New(t)
			_, err := a55Client(t, srv, j).Charges.Create(t.Context(), chargeRequest("4111111111111111"), payonce.WithReference("order-\xff/charge"))
			require.ErrorIs(t, err, payonce.ErrInvalidRequest)
			assert.NotErrorIs(t, err, payonce.ErrJournal)
			assert.Empty(t, srv.Requests(), "nothing sent")
			pending, err := j.Pending(t.Context(), journal.PendingQuery{})
			require.NoError(t, err)
			assert.Empty(t, pending)
		})
	}
}

// The journal file deleted while a client runs: the client stops before
// sending (ErrJournal) instead of charging and recording into a file a
// restarted worker will not find; the worker that reopens the path never
// charges an order twice.
func TestSQLiteFileDeletedWhileRunningStopsBeforeSending(t *testing.T) {
	srv := a55test.New(t)
	path := filepath.Join(t.TempDir(), "journal.db")
	j, err := sqlitejournal.Open(t.Context(), path)
	require.NoError(t, err)
	defer j.Close()
	c := a55Client(t, srv, j)
	_, err = c.Charges.Create(t.Context(), chargeRequest("4111111111111111"), payonce.WithReference("o-1"))
	require.NoError(t, err)
	require.Len(t, srv.Ledger().Operations(), 1)

	require.NoError(t, os.Remove(path))
	_ = os.Remove(path + "-wal")
	_ = os.Remove(path + "-shm")
	_, err = c.Charges.Create(t.Context(), chargeRequest("4111111111111111"), payonce.WithReference("o-2"))
	require.ErrorIs(t, err, payonce.ErrJournal)
	require.ErrorIs(t, err, sqlitejournal.ErrFileChanged)
	assert.Len(t, srv.Ledger().Operations(), 1, "o-2 was not charged")
}
