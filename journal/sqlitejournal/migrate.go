package sqlitejournal

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// version1Columns are the columns of version 1, the start of the table in
// the first migration and in schema; like a released migration, they never
// change.
const version1Columns = `
		scope         TEXT    NOT NULL,
		reference     TEXT    NOT NULL,
		operation     TEXT    NOT NULL DEFAULT '',
		method        TEXT    NOT NULL DEFAULT '',
		path          TEXT    NOT NULL DEFAULT '',
		idem_key      TEXT    NOT NULL,
		key_created   INTEGER NOT NULL,
		fingerprint   TEXT    NOT NULL,
		state         TEXT    NOT NULL CHECK (state IN ('pending', 'succeeded', 'failed')),
		result        BLOB,
		status_code   INTEGER NOT NULL DEFAULT 0,
		request_id    TEXT    NOT NULL DEFAULT '',
		replayed      INTEGER NOT NULL DEFAULT 0,
		error_kind    TEXT    NOT NULL DEFAULT '',
		error_code    TEXT    NOT NULL DEFAULT '',
		error_message TEXT    NOT NULL DEFAULT '',
		attempts      INTEGER NOT NULL DEFAULT 0,
		last_cause    TEXT    NOT NULL DEFAULT '',
		created_at    INTEGER NOT NULL,
		updated_at    INTEGER NOT NULL,
		lease_owner   TEXT    NOT NULL DEFAULT '',
		lease_until   INTEGER NOT NULL DEFAULT 0,`

// migrations are applied in order; migration i brings the schema to
// version i+1. A released migration never changes: add a new one.
var migrations = []string{
	`CREATE TABLE payonce_journal (` + version1Columns + `
		PRIMARY KEY (scope, reference)
	);
	CREATE INDEX payonce_journal_pending ON payonce_journal (state, created_at);
	CREATE INDEX payonce_journal_settled ON payonce_journal (state, updated_at);`,
	// Version 2: the fence every run or claim raises, whether an attempt
	// may have been sent (a row of version 1 may have been: 1), and the
	// reason an entry was settled from outside a run.
	`ALTER TABLE payonce_journal ADD COLUMN fence INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE payonce_journal ADD COLUMN sent INTEGER NOT NULL DEFAULT 1;
	ALTER TABLE payonce_journal ADD COLUMN settle_reason TEXT NOT NULL DEFAULT '';`,
	// Version 3: the request's redacted summary a settle lookup matches
	// by (payonce.JournalEntry.Summary); rows of earlier versions have
	// none.
	`ALTER TABLE payonce_journal ADD COLUMN summary TEXT NOT NULL DEFAULT '';`,
	// Version 4: partial indexes, as PostgreSQL's, so that a write keeps
	// only the index its state is listed by: a reserve adds one entry
	// (pending), a settling update moves it (to settled), where the
	// indexes of version 1 held every row twice and an update rewrote
	// both. Pending and Claim read the pending one, Purge the settled
	// one, by the same predicates.
	`DROP INDEX IF EXISTS payonce_journal_pending;
	DROP INDEX IF EXISTS payonce_journal_settled;
	CREATE INDEX payonce_journal_pending_created ON payonce_journal (created_at) WHERE state = 'pending';
	CREATE INDEX payonce_journal_settled_updated ON payonce_journal (updated_at) WHERE state IN ('succeeded', 'failed');`,
	// Version 5: the webhook inbox, a table of its own (inbox.go).
	inboxTable,
	// Version 6: the provider's resource ID of an entry's outcome
	// (payonce.JournalEntry.ResourceID), indexed for the settle lookup's
	// "which entry holds this payment". Rows of earlier versions get it
	// from their stored answer where the operation names one at a known
	// place (an A55 charge's charge_uuid, a Coinepay card_id or
	// recharge_id) and redaction left it whole; the others keep none,
	// which a lookup reads as unknown.
	`ALTER TABLE payonce_journal ADD COLUMN resource_id TEXT NOT NULL DEFAULT '';
	UPDATE payonce_journal SET resource_id = COALESCE(CASE
			WHEN NOT json_valid(CAST(result AS TEXT)) THEN NULL
			WHEN operation = 'charges.create' AND json_type(CAST(result AS TEXT), '$.charge_uuid') = 'text'
				THEN json_extract(CAST(result AS TEXT), '$.charge_uuid')
			WHEN operation = 'cards.apply' AND json_type(CAST(result AS TEXT), '$.data.card_id') = 'text'
				THEN json_extract(CAST(result AS TEXT), '$.data.card_id')
			WHEN operation = 'cards.recharge' AND json_type(CAST(result AS TEXT), '$.data.recharge_id') = 'text'
				THEN json_extract(CAST(result AS TEXT), '$.data.recharge_id')
		END, '')
		WHERE state IN ('succeeded', 'failed') AND length(result) > 0
		AND operation IN ('charges.create', 'cards.apply', 'cards.recharge');
	UPDATE payonce_journal SET resource_id = '' WHERE resource_id GLOB '*[*[]*' OR length(resource_id) > 255;
	CREATE INDEX payonce_journal_resource ON payonce_journal (scope, resource_id) WHERE resource_id <> '';`,
}

// schema is what the migrations build, created at once on a new file.
// Replayed there, each ALTER TABLE of the migrations would have SQLite
// rewrite the table's definition and parse the whole schema again, which
// made opening a new journal several times slower than opening one in use.
// TestNewFileSchemaMatchesTheMigrations holds the two to one shape.
const schema = `CREATE TABLE payonce_journal (` + version1Columns + `
		fence         INTEGER NOT NULL DEFAULT 0,
		sent          INTEGER NOT NULL DEFAULT 1,
		settle_reason TEXT    NOT NULL DEFAULT '',
		summary       TEXT    NOT NULL DEFAULT '',
		resource_id   TEXT    NOT NULL DEFAULT '',
		PRIMARY KEY (scope, reference)
	);
	CREATE INDEX payonce_journal_pending_created ON payonce_journal (created_at) WHERE state = 'pending';
	CREATE INDEX payonce_journal_settled_updated ON payonce_journal (updated_at) WHERE state IN ('succeeded', 'failed');
	CREATE INDEX payonce_journal_resource ON payonce_journal (scope, resource_id) WHERE resource_id <> '';` +
	inboxTable

// SchemaVersion is the schema version this package writes.
func SchemaVersion() int { return len(migrations) }

// migrate creates the version table and applies the missing migrations,
// under the write lock, so that processes opening one file at once
// migrate it once: schema on a new file, each migration in turn on an
// older one. A file of a newer version is refused.
func (j *Journal) migrate(ctx context.Context) error {
	return j.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS payonce_journal_migrations (
			version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)`); err != nil {
			return fmt.Errorf("sqlitejournal: migrate: %w", err)
		}
		var v int
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM payonce_journal_migrations`).Scan(&v); err != nil {
			return fmt.Errorf("sqlitejournal: migrate: %w", err)
		}
		if v > len(migrations) {
			return fmt.Errorf("sqlitejournal: schema version %d is newer than this package's %d", v, len(migrations))
		}
		if v == 0 {
			if _, err := tx.ExecContext(ctx, schema); err != nil {
				return fmt.Errorf("sqlitejournal: migrate: %w", err)
			}
		}
		for i := v; i < len(migrations); i++ {
			if v > 0 {
				if _, err := tx.ExecContext(ctx, migrations[i]); err != nil {
					return fmt.Errorf("sqlitejournal: migration %d: %w", i+1, err)
				}
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO payonce_journal_migrations (version, applied_at) VALUES (?, ?)`,
				i+1, time.Now().UnixMicro()); err != nil {
				return fmt.Errorf("sqlitejournal: migration %d: %w", i+1, err)
			}
		}
		return nil
	})
}
