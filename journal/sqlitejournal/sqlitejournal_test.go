package sqlitejournal_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/journal"
	"github.com/payonce/payonce/journal/journaltest"
	"github.com/payonce/payonce/journal/sqlitejournal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func open(t *testing.T) *sqlitejournal.Journal {
	t.Helper()
	j, err := sqlitejournal.Open(t.Context(), filepath.Join(t.TempDir(), "journal.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = j.Close() })
	return j
}

func TestConformance(t *testing.T) {
	journaltest.Run(t, func(t *testing.T) journal.Store { return open(t) })
}

func TestOpenCreatesOneWALFileAndMigratesOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dir with space", "j.db")
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	j, err := sqlitejournal.Open(t.Context(), path)
	require.NoError(t, err)
	_, err = os.Stat(path)
	require.NoError(t, err, "the journal is the file at path")
	var mode string
	require.NoError(t, j.DB().QueryRowContext(t.Context(), "PRAGMA journal_mode").Scan(&mode))
	assert.Equal(t, "wal", mode)
	_, _, err = j.Reserve(t.Context(), journaltest.Entry("s", "kept"))
	require.NoError(t, err)
	require.NoError(t, j.Close())

	j2, err := sqlitejournal.Open(t.Context(), path)
	require.NoError(t, err)
	var versions, max int
	require.NoError(t, j2.DB().QueryRowContext(t.Context(), "SELECT COUNT(*), MAX(version) FROM payonce_journal_migrations").Scan(&versions, &max))
	assert.Equal(t, sqlitejournal.SchemaVersion(), versions)
	assert.Equal(t, sqlitejournal.SchemaVersion(), max)
	_, err = j2.Get(t.Context(), "s", "kept")
	require.NoError(t, err, "reopening keeps the entries")

	// A file written by a newer version is refused, not mangled.
	_, err = j2.DB().ExecContext(t.Context(), "INSERT INTO payonce_journal_migrations (version, applied_at) VALUES (?, 0)", sqlitejournal.SchemaVersion()+1)
	require.NoError(t, err)
	require.NoError(t, j2.Close())
	_, err = sqlitejournal.Open(t.Context(), path)
	require.ErrorContains(t, err, "newer")
}

func TestOpenRefusesBadOptions(t *testing.T) {
	_, err := sqlitejournal.Open(t.Context(), "")
	require.ErrorIs(t, err, payonce.ErrInvalidConfig)
	_, err = sqlitejournal.Open(t.Context(), filepath.Join(t.TempDir(), "j.db"), sqlitejournal.WithBusyTimeout(0))
	require.ErrorIs(t, err, payonce.ErrInvalidConfig)
	// SQLite counts it in milliseconds: 500 µs would be no wait at all.
	_, err = sqlitejournal.Open(t.Context(), filepath.Join(t.TempDir(), "j.db"), sqlitejournal.WithBusyTimeout(500*time.Microsecond))
	require.ErrorIs(t, err, payonce.ErrInvalidConfig)
	_, err = sqlitejournal.Open(t.Context(), filepath.Join(t.TempDir(), "j.db"), sqlitejournal.WithClock(nil))
	require.ErrorIs(t, err, payonce.ErrInvalidConfig)
}

// ReserveTx joins the merchant's transaction: rolled back, nothing is
// reserved; committed, the order row and the entry exist together.
func TestReserveTxJoinsTheMerchantsTransaction(t *testing.T) {
	j := open(t)
	ctx := t.Context()
	_, err := j.DB().ExecContext(ctx, "CREATE TABLE orders (id TEXT PRIMARY KEY)")
	require.NoError(t, err)

	// orderWithEntry inserts the order and reserves its entry in one
	// transaction, then ends it with end.
	orderWithEntry := func(end func(*sql.Tx) error) payonce.JournalEntry {
		tx, err := j.DB().BeginTx(ctx, nil)
		require.NoError(t, err)
		_, err = tx.ExecContext(ctx, "INSERT INTO orders (id) VALUES ('o-1')")
		require.NoError(t, err)
		e, created, err := j.ReserveTx(ctx, tx, journaltest.Entry("s", "o-1/charge"))
		require.NoError(t, err)
		require.True(t, created)
		require.NoError(t, end(tx))
		return e
	}
	orderWithEntry((*sql.Tx).Rollback)
	_, err = j.Get(ctx, "s", "o-1/charge")
	require.ErrorIs(t, err, journal.ErrNotFound)

	e := orderWithEntry((*sql.Tx).Commit)
	got, err := j.Get(ctx, "s", "o-1/charge")
	require.NoError(t, err)
	assert.Equal(t, e.Key, got.Key)

	_, _, err = j.ReserveTx(ctx, nil, journaltest.Entry("s", "x"))
	require.ErrorIs(t, err, payonce.ErrInvalidConfig)
}

// Several processes share one file: each reserves the same references;
// every reference is created exactly once, all see the same key.
func TestSeveralProcessesShareOneFile(t *testing.T) {
	if os.Getenv("SQLITEJOURNAL_HELPER") != "" {
		t.Skip("helper process")
	}
	path := filepath.Join(t.TempDir(), "shared.db")
	const procs, refs = 4, 30
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for p := range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
		cmd.Env = append(os.Environ(), "SQLITEJOURNAL_HELPER=1", "SQLITEJOURNAL_PATH="+path,
			"SQLITEJOURNAL_PROC="+strconv.Itoa(p), "SQLITEJOURNAL_REFS="+strconv.Itoa(refs))
		out := &bytes.Buffer{}
		cmd.Stdout, cmd.Stderr = out, out
		require.NoError(t, cmd.Start())
		cmds, outs = append(cmds, cmd), append(outs, out)
	}
	created := map[string]int{}
	keys := map[string]map[string]bool{}
	for i, cmd := range cmds {
		require.NoError(t, cmd.Wait(), outs[i].String())
		for line := range strings.SplitSeq(outs[i].String(), "\n") {
			var ref, key string
			var c bool
			if n, _ := fmt.Sscanf(line, "RESERVED %s %s %t", &ref, &key, &c); n == 3 {
				if c {
					created[ref]++
				}
				if keys[ref] == nil {
					keys[ref] = map[string]bool{}
				}
				keys[ref][key] = true
			}
		}
	}
	require.Len(t, keys, refs)
	for ref, ks := range keys {
		assert.Equal(t, 1, created[ref], ref)
		assert.Len(t, ks, 1, ref)
	}
}

// TestHelperProcess is one process of TestSeveralProcessesShareOneFile.
func TestHelperProcess(t *testing.T) {
	path := os.Getenv("SQLITEJOURNAL_PATH")
	if os.Getenv("SQLITEJOURNAL_HELPER") == "" || path == "" {
		t.Skip("run by TestSeveralProcessesShareOneFile")
	}
	proc := os.Getenv("SQLITEJOURNAL_PROC")
	refs, _ := strconv.Atoi(os.Getenv("SQLITEJOURNAL_REFS"))
	j, err := sqlitejournal.Open(context.Background(), path)
	require.NoError(t, err)
	defer func() { _ = j.Close() }()
	for i := range refs {
		e := journaltest.Entry("s", fmt.Sprintf("ref-%02d", i))
		e.Key = fmt.Sprintf("key-proc-%s-%02d", proc, i)
		got, created, err := j.Reserve(context.Background(), e)
		require.NoError(t, err)
		fmt.Printf("RESERVED %s %s %t\n", got.Reference, got.Key, created)
	}
}

func TestSynchronousMode(t *testing.T) {
	for _, c := range []struct {
		opts []sqlitejournal.Option
		want int
	}{{nil, 2}, {[]sqlitejournal.Option{sqlitejournal.WithSynchronousNormal()}, 1}} {
		j, err := sqlitejournal.Open(t.Context(), filepath.Join(t.TempDir(), "j.db"), c.opts...)
		require.NoError(t, err)
		var mode int
		require.NoError(t, j.DB().QueryRowContext(t.Context(), "PRAGMA synchronous").Scan(&mode))
		assert.Equal(t, c.want, mode)
		require.NoError(t, j.Close())
	}
}

// A caller's deadline bounds its wait for the write lock: a Reserve whose
// context ends while another process holds the lock returns with the
// context's error, not after the busy timeout (the batch it leads runs
// under a context no single caller cancels, but nobody is left waiting
// for it once every caller in it has gone).
func TestReserveWaitingForTheLockEndsWithTheContext(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.db")
	holder, err := sqlitejournal.Open(t.Context(), path)
	require.NoError(t, err)
	t.Cleanup(func() { _ = holder.Close() })
	j, err := sqlitejournal.Open(t.Context(), path, sqlitejournal.WithBusyTimeout(time.Minute))
	require.NoError(t, err)
	t.Cleanup(func() { _ = j.Close() })

	tx, err := holder.DB().BeginTx(t.Context(), nil) // BEGIN IMMEDIATE: the write lock
	require.NoError(t, err)
	defer func() { _ = tx.Rollback() }()

	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, _, err = j.Reserve(ctx, journaltest.Entry("scope", "ref-1"))
	require.Error(t, err)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 15*time.Second, "returned with the context, not after the busy timeout")

	require.NoError(t, tx.Rollback())
	_, created, err := j.Reserve(t.Context(), journaltest.Entry("scope", "ref-2"))
	require.NoError(t, err, "the journal still works")
	assert.True(t, created)
}

// A file of schema version 1 upgrades on open: its rows gain a fence and
// count as maybe sent (nothing says otherwise), and keep working.
func TestVersionOneFileUpgrades(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v1.db")
	db, err := sql.Open("sqlite", "file:"+path)
	require.NoError(t, err)
	for _, stmt := range []string{
		`CREATE TABLE payonce_journal_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)`,
		`CREATE TABLE payonce_journal (scope TEXT NOT NULL, reference TEXT NOT NULL, operation TEXT NOT NULL DEFAULT '',
			method TEXT NOT NULL DEFAULT '', path TEXT NOT NULL DEFAULT '', idem_key TEXT NOT NULL, key_created INTEGER NOT NULL,
			fingerprint TEXT NOT NULL, state TEXT NOT NULL CHECK (state IN ('pending', 'succeeded', 'failed')), result BLOB,
			status_code INTEGER NOT NULL DEFAULT 0, request_id TEXT NOT NULL DEFAULT '', replayed INTEGER NOT NULL DEFAULT 0,
			error_kind TEXT NOT NULL DEFAULT '', error_code TEXT NOT NULL DEFAULT '', error_message TEXT NOT NULL DEFAULT '',
			attempts INTEGER NOT NULL DEFAULT 0, last_cause TEXT NOT NULL DEFAULT '', created_at INTEGER NOT NULL,
			updated_at INTEGER NOT NULL, lease_owner TEXT NOT NULL DEFAULT '', lease_until INTEGER NOT NULL DEFAULT 0,
			PRIMARY KEY (scope, reference))`,
		`INSERT INTO payonce_journal_migrations VALUES (1, 0)`,
		`INSERT INTO payonce_journal (scope, reference, idem_key, key_created, fingerprint, state, attempts, created_at, updated_at)
			VALUES ('s', 'old-1', 'old-key-0000000001', 1, 'fp', 'pending', 2, 1, 1)`,
	} {
		_, err := db.ExecContext(t.Context(), stmt)
		require.NoError(t, err, stmt)
	}
	require.NoError(t, db.Close())
	j, err := sqlitejournal.Open(t.Context(), path)
	require.NoError(t, err)
	defer j.Close()
	e, err := j.Get(t.Context(), "s", "old-1")
	require.NoError(t, err)
	assert.True(t, e.Sent, "an old row may have been sent")
	assert.Equal(t, 2, e.Attempts)
	tk, err := j.Take(t.Context(), payonce.JournalEntry{Scope: "s", Reference: "old-1", LeaseOwner: "w", Lease: time.Minute})
	require.NoError(t, err)
	assert.Equal(t, e.Fence+1, tk.Fence)
	var v int
	require.NoError(t, j.DB().QueryRowContext(t.Context(), "SELECT MAX(version) FROM payonce_journal_migrations").Scan(&v))
	assert.Equal(t, sqlitejournal.SchemaVersion(), v)
}

func TestFingerprintBinding(t *testing.T) {
	j := open(t)
	journaltest.FingerprintBinding(t, j, func(ctx context.Context, e payonce.JournalEntry) (payonce.JournalEntry, bool, error) {
		tx, err := j.DB().BeginTx(ctx, nil)
		if err != nil {
			return payonce.JournalEntry{}, false, err
		}
		got, created, err := j.ReserveTx(ctx, tx, e)
		if err != nil {
			_ = tx.Rollback()
			return got, created, err
		}
		return got, created, tx.Commit()
	})
}

// Pending and Claim find pending entries, and Purge settled ones, through
// the partial indexes: their predicates are the indexes' own.
func TestListingsUseThePartialIndexes(t *testing.T) {
	j := open(t)
	for _, c := range []struct {
		query string
		args  []any
		index string
	}{
		{`SELECT scope FROM payonce_journal WHERE state = 'pending' AND (? = '' OR scope = ?) AND (? = 0 OR updated_at < ?)
			ORDER BY created_at, scope, reference LIMIT ?`, []any{"", "", 0, 0, 10}, "payonce_journal_pending_created"},
		{`DELETE FROM payonce_journal WHERE state IN ('succeeded', 'failed') AND updated_at < ?`, []any{5}, "payonce_journal_settled_updated"},
	} {
		rows, err := j.DB().QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+c.query, c.args...)
		require.NoError(t, err)
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			require.NoError(t, rows.Scan(&id, &parent, &unused, &detail))
			plan = append(plan, detail)
		}
		require.NoError(t, rows.Err())
		require.NoError(t, rows.Close())
		assert.Contains(t, strings.Join(plan, "\n"), c.index, c.query)
	}
}

// The entry Reserve returns for a row it created is the row as Get reads
// it, to the last field, for entries using every column.
func TestReserveReturnsTheStoredRow(t *testing.T) {
	j := open(t)
	full := journaltest.Entry("s", "full")
	full.Result, full.StatusCode, full.RequestID, full.Replayed = []byte(`{"a":1}`), 202, "req-1", true
	full.ErrorKind, full.ErrorCode, full.ErrorMessage, full.Attempts, full.LastCause = "kind", "code", "caf\xc3\xa9 \xff", 3, "cause"
	full.LeaseOwner, full.Lease, full.Sent, full.Summary, full.SettleReason, full.Fence = "w", 5*time.Minute, true, "sum", "gone", 7
	full.Path = "/p/ação"
	empty := journaltest.Entry("s", "empty")
	empty.Result = []byte{}
	unset := journaltest.Entry("s", "unset")
	unset.CreatedAt, unset.UpdatedAt, unset.State = time.Time{}, time.Time{}, ""
	for _, e := range []payonce.JournalEntry{journaltest.Entry("s", "plain"), full, empty, unset} {
		got, created, err := j.Reserve(t.Context(), e)
		require.NoError(t, err)
		require.True(t, created)
		stored, err := j.Get(t.Context(), e.Scope, e.Reference)
		require.NoError(t, err)
		assert.Equal(t, stored, got, e.Reference)
	}
}
