package sqlitejournal

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// shapeOf is what a schema holds, in a form two schemas can be compared
// by: every column of each of the journal's tables (the journal, the
// inbox) with its type, default, NOT NULL and key position, and every
// index with its columns, uniqueness and WHERE clause.
func shapeOf(t *testing.T, db *sql.DB) []string {
	t.Helper()
	var shape []string
	rowsOf := func(query string) [][]string {
		rows, err := db.QueryContext(t.Context(), query)
		require.NoError(t, err)
		defer rows.Close()
		cols, err := rows.Columns()
		require.NoError(t, err)
		var out [][]string
		for rows.Next() {
			vals := make([]sql.NullString, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			require.NoError(t, rows.Scan(ptrs...))
			row := make([]string, len(cols))
			for i, v := range vals {
				row[i] = fmt.Sprintf("%v:%s", v.Valid, v.String)
			}
			out = append(out, row)
		}
		require.NoError(t, rows.Err())
		return out
	}
	for _, tr := range rowsOf("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'payonce%' AND name <> 'payonce_journal_migrations' ORDER BY name") {
		table := strings.TrimPrefix(tr[0], "true:")
		shape = append(shape, "table "+table)
		for _, r := range rowsOf("PRAGMA table_xinfo(" + table + ")") {
			shape = append(shape, "column "+strings.Join(r, " "))
		}
		for _, r := range rowsOf("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = '" + table + "' ORDER BY name") {
			name := strings.TrimPrefix(r[0], "true:")
			shape = append(shape, "index "+strings.Join(strings.Fields(r[1]), " "))
			for _, c := range rowsOf("PRAGMA index_xinfo(" + name + ")") {
				shape = append(shape, "index "+name+" column "+strings.Join(c, " "))
			}
		}
	}
	return shape
}

func rawDB(t *testing.T, name string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), name))
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// A new file gets schema at once; an old one its missing migrations in
// turn. Both must end in one shape, CHECK on the state included.
func TestNewFileSchemaMatchesTheMigrations(t *testing.T) {
	replayed, fresh := rawDB(t, "replayed.db"), rawDB(t, "fresh.db")
	for i, m := range migrations {
		_, err := replayed.ExecContext(t.Context(), m)
		require.NoError(t, err, "migration %d", i+1)
	}
	_, err := fresh.ExecContext(t.Context(), schema)
	require.NoError(t, err)
	want := shapeOf(t, replayed)
	require.NotEmpty(t, want)
	assert.Contains(t, want, "table payonce_inbox", "every table is compared")
	assert.Equal(t, want, shapeOf(t, fresh))

	for _, db := range []*sql.DB{replayed, fresh} {
		_, err := db.ExecContext(t.Context(), `INSERT INTO payonce_journal
			(scope, reference, idem_key, key_created, fingerprint, state, created_at, updated_at)
			VALUES ('s', 'r', 'k', 0, 'f', 'lost', 0, 0)`)
		require.Error(t, err, "a state outside the three is refused")
		assert.Contains(t, err.Error(), "CHECK")
	}
}

// A file an older version of this package wrote, at each version, is
// brought by Open to the shape of a new file, its rows kept.
func TestOpenUpgradesAnOlderFile(t *testing.T) {
	fresh := rawDB(t, "fresh.db")
	_, err := fresh.ExecContext(t.Context(), schema)
	require.NoError(t, err)
	want := shapeOf(t, fresh)
	for v := 1; v < len(migrations); v++ {
		t.Run(fmt.Sprintf("version %d", v), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "old.db")
			old, err := sql.Open("sqlite", path)
			require.NoError(t, err)
			_, err = old.ExecContext(t.Context(), `CREATE TABLE payonce_journal_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)`)
			require.NoError(t, err)
			for i := range v {
				_, err = old.ExecContext(t.Context(), migrations[i])
				require.NoError(t, err)
				_, err = old.ExecContext(t.Context(), `INSERT INTO payonce_journal_migrations VALUES (?, 0)`, i+1)
				require.NoError(t, err)
			}
			_, err = old.ExecContext(t.Context(), `INSERT INTO payonce_journal
				(scope, reference, idem_key, key_created, fingerprint, state, created_at, updated_at)
				VALUES ('s', 'old', 'k', 0, 'f', 'pending', 0, 0)`)
			require.NoError(t, err)
			require.NoError(t, old.Close())

			j, err := Open(t.Context(), path)
			require.NoError(t, err)
			defer j.Close()
			assert.Equal(t, want, shapeOf(t, j.DB()))
			var n int
			require.NoError(t, j.DB().QueryRowContext(t.Context(), `SELECT COUNT(*) FROM payonce_journal WHERE reference = 'old' AND sent = 1`).Scan(&n))
			assert.Equal(t, 1, n, "the old row is kept, and may have been sent")
		})
	}
}

// backfillRows are rows of a version before 6 and the resource ID
// version 6 gives each: what the stored answer names where the operation
// names one, nothing for a pending row, an answer that is not JSON, an ID
// that is not a string or that redaction masked.
var backfillRows = []struct {
	ref, operation, state, result, want string
}{
	{"charge", "charges.create", "succeeded", `{"charge_uuid":"4f1c2b1e-3d4a-4b5c-8d6e-7f8091a2b3c4","status":"confirmed"}`, "4f1c2b1e-3d4a-4b5c-8d6e-7f8091a2b3c4"},
	{"declined", "charges.create", "failed", `{"charge_uuid":"ch_declined","status":"error"}`, "ch_declined"},
	{"card", "cards.apply", "succeeded", `{"code":200,"message":"ok","data":{"card_id":"card_830186349586224382650c29"}}`, "card_830186349586224382650c29"},
	{"recharge", "cards.recharge", "succeeded", `{"code":200,"data":{"recharge_id":"rch_1","card_id":"card_1"}}`, "rch_1"},
	{"pending", "charges.create", "pending", `{"charge_uuid":"ch_pending"}`, ""},
	{"masked", "charges.create", "succeeded", `{"charge_uuid":"***************0005"}`, ""},
	{"redacted", "cards.apply", "succeeded", `{"data":{"card_id":"[REDACTED]"}}`, ""},
	{"number", "charges.create", "succeeded", `{"charge_uuid":4111}`, ""},
	{"not-json", "charges.create", "succeeded", `charge_uuid: ch_x`, ""},
	{"array", "cards.apply", "succeeded", `[{"data":{"card_id":"card_2"}}]`, ""},
	{"wallet", "wallets.create", "succeeded", `{"wallet_uuid":"w_1"}`, ""},
}

// Version 6 fills the resource ID of older rows from their stored
// answers, and the index finds them.
func TestVersionSixFillsTheResourceOfOlderRows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v5.db")
	old, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	_, err = old.ExecContext(t.Context(), `CREATE TABLE payonce_journal_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)`)
	require.NoError(t, err)
	for i := range 5 {
		_, err = old.ExecContext(t.Context(), migrations[i])
		require.NoError(t, err)
		_, err = old.ExecContext(t.Context(), `INSERT INTO payonce_journal_migrations VALUES (?, 0)`, i+1)
		require.NoError(t, err)
	}
	for _, r := range backfillRows {
		_, err = old.ExecContext(t.Context(), `INSERT INTO payonce_journal
			(scope, reference, operation, idem_key, key_created, fingerprint, state, result, created_at, updated_at)
			VALUES ('s', ?, ?, 'k', 1, 'f', ?, ?, 1, 1)`, r.ref, r.operation, r.state, []byte(r.result))
		require.NoError(t, err)
	}
	require.NoError(t, old.Close())

	j, err := Open(t.Context(), path)
	require.NoError(t, err)
	defer j.Close()
	for _, r := range backfillRows {
		e, err := j.Get(t.Context(), "s", r.ref)
		require.NoError(t, err)
		assert.Equal(t, r.want, e.ResourceID, r.ref)
		if r.want != "" {
			got, err := j.Holders(t.Context(), "s", r.want)
			require.NoError(t, err)
			require.Len(t, got, 1, r.ref)
			assert.Equal(t, r.ref, got[0].Reference)
		}
	}
	assert.Contains(t, queryPlan(t, j.DB(), `SELECT reference FROM payonce_journal WHERE scope = 's' AND resource_id = 'x' AND resource_id <> ''`),
		"payonce_journal_resource", "Holders reads the index")
}

// queryPlan is SQLite's plan for query with args, its steps joined.
func queryPlan(t *testing.T, db *sql.DB, query string, args ...any) string {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+query, args...)
	require.NoError(t, err)
	defer rows.Close()
	var steps []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		require.NoError(t, rows.Scan(&id, &parent, &unused, &detail))
		steps = append(steps, detail)
	}
	require.NoError(t, rows.Err())
	return strings.Join(steps, " | ")
}
