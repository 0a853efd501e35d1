package sqlitejournal_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
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
