package sqlitejournal_test

import (
	"database/sql/driver"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"modernc.org/sqlite"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/coinepay"
	"github.com/payonce/payonce/coinepay/coinepaytest"
	"github.com/payonce/payonce/journal/journaltest"
	"github.com/payonce/payonce/journal/sqlitejournal"
)

// removeJournal deletes the journal file and its WAL and shared-memory
// files, as an operator's cleanup or a volume swap does.
func removeJournal(t *testing.T, path string) {
	t.Helper()
	require.NoError(t, os.Remove(path))
	for _, sfx := range []string{"-wal", "-shm"} {
		if err := os.Remove(path + sfx); err != nil {
			require.ErrorIs(t, err, os.ErrNotExist)
		}
	}
}

// A journal whose file was deleted, or replaced by another file, while it
// is open refuses every write with ErrJournal (ErrFileChanged), instead
// of recording into a file no later process will see; reads of the open
// file still answer.
func TestWritesRefusedOnceTheFileIsGone(t *testing.T) {
	for name, change := range map[string]func(t *testing.T, path string){
		"deleted": removeJournal,
		"replaced": func(t *testing.T, path string) {
			other := filepath.Join(filepath.Dir(path), "other.db")
			o, err := sqlitejournal.Open(t.Context(), other)
			require.NoError(t, err)
			require.NoError(t, o.Close())
			require.NoError(t, os.Rename(other, path))
		},
		"moved away": func(t *testing.T, path string) {
			require.NoError(t, os.Rename(path, path+".bak"))
		},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "journal.db")
			j, err := sqlitejournal.Open(t.Context(), path)
			require.NoError(t, err)
			defer j.Close()
			_, _, err = j.Reserve(t.Context(), journaltest.Entry("s", "before"))
			require.NoError(t, err)

			change(t, path)
			e := journaltest.Entry("s", "after")
			_, _, err = j.Reserve(t.Context(), e)
			require.ErrorIs(t, err, payonce.ErrJournal)
			require.ErrorIs(t, err, sqlitejournal.ErrFileChanged)
			before := journaltest.Entry("s", "before")
			before.Fence, before.State = 1, payonce.JournalFailed
			require.ErrorIs(t, j.Update(t.Context(), before), sqlitejournal.ErrFileChanged)
			_, err = j.Take(t.Context(), payonce.JournalEntry{Scope: "s", Reference: "before", LeaseOwner: "w", Lease: time.Minute})
			require.ErrorIs(t, err, sqlitejournal.ErrFileChanged)
			_, err = j.BeginAttempt(t.Context(), payonce.JournalEntry{Scope: "s", Reference: "before", Fence: 1, LeaseOwner: "w", Lease: time.Minute})
			require.ErrorIs(t, err, sqlitejournal.ErrFileChanged)
			tx, err := j.DB().BeginTx(t.Context(), nil)
			require.NoError(t, err)
			_, _, err = j.ReserveTx(t.Context(), tx, e)
			require.ErrorIs(t, err, sqlitejournal.ErrFileChanged)
			require.NoError(t, tx.Rollback())
			_, err = j.Purge(t.Context(), time.Now())
			require.ErrorIs(t, err, sqlitejournal.ErrFileChanged)
			_, _, err = j.RecordEvent(t.Context(), payonce.InboxEvent{Scope: "s", EventID: "ev-1", Body: []byte(`{}`)})
			require.ErrorIs(t, err, sqlitejournal.ErrFileChanged)
			_, err = j.PurgeEvents(t.Context(), time.Now())
			require.ErrorIs(t, err, sqlitejournal.ErrFileChanged)

			got, err := j.Get(t.Context(), "s", "before")
			require.NoError(t, err, "the open file still reads")
			assert.Equal(t, payonce.JournalPending, got.State, "no write landed")
		})
	}
}

// A journal opened by a relative path keeps to its file when the
// process changes directory.
func TestRelativePathIsTheFileOpened(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	j, err := sqlitejournal.Open(t.Context(), "journal.db")
	require.NoError(t, err)
	defer j.Close()
	j.DB().SetMaxIdleConns(0) // every write opens a connection anew
	elsewhere := t.TempDir()
	t.Chdir(elsewhere)
	_, _, err = j.Reserve(t.Context(), journaltest.Entry("s", "o-1"))
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(elsewhere, "journal.db"))
	require.ErrorIs(t, err, os.ErrNotExist, "no second journal in the new directory")
	again, err := sqlitejournal.Open(t.Context(), filepath.Join(dir, "journal.db"))
	require.NoError(t, err)
	defer again.Close()
	_, err = again.Get(t.Context(), "s", "o-1")
	require.NoError(t, err, "recorded in the file opened")
}

// swapHook is what the SQL function payonce_test_swap runs, registered
// once for the file tests: a trigger calls it from inside a write
// transaction, after the journal has checked its file and before the
// commit.
var (
	swapHook     atomic.Pointer[func()]
	registerSwap sync.Once
)

// registerSwapFunction registers payonce_test_swap with the driver: a
// connection opened after it can call it.
func registerSwapFunction() {
	registerSwap.Do(func() {
		sqlite.MustRegisterScalarFunction("payonce_test_swap", 0, func(*sqlite.FunctionContext, []driver.Value) (driver.Value, error) {
			if f := swapHook.Load(); f != nil {
				(*f)()
			}
			return int64(0), nil
		})
	})
}

// swapDuringWrites has the first INSERT into the journal's table of j,
// opened after registerSwapFunction, call swap in its transaction.
func swapDuringWrites(t *testing.T, j *sqlitejournal.Journal, swap func()) {
	t.Helper()
	_, err := j.DB().ExecContext(t.Context(), `CREATE TRIGGER payonce_test_swap AFTER INSERT ON payonce_journal BEGIN SELECT payonce_test_swap(); END`)
	require.NoError(t, err)
	var once sync.Once
	f := func() { once.Do(swap) }
	swapHook.Store(&f)
	t.Cleanup(func() { swapHook.Store(nil) })
}

// The file is replaced after a write transaction checked it and before it
// commits (an operator restoring a backup over a running worker): the
// reservation commits into the file no longer at the path. The client
// must not send on it: a worker restarted on the path would find no entry
// (or one the old file's write-ahead log put into the restored file) and
// issue the card again. The write fails with ErrJournal
// (ErrFileChanged) and nothing reaches the provider.
func TestWriteIntoAFileReplacedBeforeItsCommitIsRefused(t *testing.T) {
	registerSwapFunction()
	dir := t.TempDir()
	path := filepath.Join(dir, "journal.db")
	j, err := sqlitejournal.Open(t.Context(), path)
	require.NoError(t, err)
	defer j.Close()
	other := filepath.Join(dir, "restored.db")
	o, err := sqlitejournal.Open(t.Context(), other)
	require.NoError(t, err)
	require.NoError(t, o.Close())
	swapDuringWrites(t, j, func() { require.NoError(t, os.Rename(other, path)) })

	srv := coinepaytest.New(t)
	c, err := srv.Client(payonce.WithJournal(j))
	require.NoError(t, err)
	req := &coinepay.ApplyRequest{HeaderID: "hdr_1", PackageID: "pkg_basic"}
	_, err = c.Cards.Apply(t.Context(), req, payonce.WithReference("job-1/apply"))
	require.ErrorIs(t, err, payonce.ErrJournal)
	require.ErrorIs(t, err, sqlitejournal.ErrFileChanged)
	assert.Zero(t, srv.Ledger().CountKind("card.apply"), "nothing sent on a reservation the path no longer holds")
}

// A merchant's transaction that marks an event handled (MarkHandledTx)
// checks the file as ReserveTx does: a deleted or replaced file is
// ErrFileChanged, not a mark recorded where no receiver will look.
func TestMarkHandledTxRefusedOnceTheFileIsGone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.db")
	j, err := sqlitejournal.Open(t.Context(), path)
	require.NoError(t, err)
	defer j.Close()
	_, _, err = j.RecordEvent(t.Context(), payonce.InboxEvent{Scope: "s", EventID: "ev-1", Body: []byte(`{}`)})
	require.NoError(t, err)
	claimed, err := j.ClaimEvent(t.Context(), payonce.InboxEvent{Scope: "s", EventID: "ev-1", LeaseOwner: "r1", Lease: time.Minute})
	require.NoError(t, err)
	tx, err := j.DB().BeginTx(t.Context(), nil)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback() }()
	removeJournal(t, path)
	_, err = j.MarkHandledTx(t.Context(), tx, claimed)
	require.ErrorIs(t, err, payonce.ErrJournal)
	require.ErrorIs(t, err, sqlitejournal.ErrFileChanged)
}
