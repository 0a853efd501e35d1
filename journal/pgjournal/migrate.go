package pgjournal

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// migrations are applied in order; migration i brings the schema to
// version i+1. $T is the journal table, $S the schema. A released
// migration never changes: add a new one.
var migrations = []string{
	`CREATE TABLE $T (
		scope         text        NOT NULL,
		reference     text        NOT NULL,
		operation     text        NOT NULL DEFAULT '',
		method        text        NOT NULL DEFAULT '',
		path          text        NOT NULL DEFAULT '',
		idem_key      text        NOT NULL,
		key_created   timestamptz NOT NULL,
		fingerprint   text        NOT NULL,
		state         text        NOT NULL CHECK (state IN ('pending', 'succeeded', 'failed')),
		result        bytea,
		status_code   integer     NOT NULL DEFAULT 0,
		request_id    text        NOT NULL DEFAULT '',
		replayed      boolean     NOT NULL DEFAULT false,
		error_kind    text        NOT NULL DEFAULT '',
		error_code    text        NOT NULL DEFAULT '',
		error_message text        NOT NULL DEFAULT '',
		attempts      integer     NOT NULL DEFAULT 0,
		last_cause    text        NOT NULL DEFAULT '',
		created_at    timestamptz NOT NULL,
		updated_at    timestamptz NOT NULL,
		lease_owner   text        NOT NULL DEFAULT '',
		lease_until   timestamptz,
		PRIMARY KEY (scope, reference)
	);
	CREATE INDEX ON $T (created_at) WHERE state = 'pending';
	CREATE INDEX ON $T (updated_at) WHERE state <> 'pending';`,
	// Version 2: the fence every run or claim raises, whether an attempt
	// may have been sent (a row of version 1 may have been: true), and
	// the reason an entry was settled from outside a run.
	`ALTER TABLE $T ADD COLUMN fence bigint NOT NULL DEFAULT 0;
	ALTER TABLE $T ADD COLUMN sent boolean NOT NULL DEFAULT true;
	ALTER TABLE $T ADD COLUMN settle_reason text NOT NULL DEFAULT '';`,
	// Version 3: the request's redacted summary a settle lookup matches
	// by (payonce.JournalEntry.Summary); rows of earlier versions have
	// none.
	`ALTER TABLE $T ADD COLUMN summary text NOT NULL DEFAULT '';`,
	// Version 4: nothing. SQLite's version 4 made its indexes partial,
	// as PostgreSQL's have been since version 1; this one keeps a
	// version number naming one schema on both backends.
	`SELECT 1`,
	// Version 5: the webhook inbox, a table of its own (inbox.go).
	inboxTable,
	// Version 6: the provider's resource ID of an entry's outcome
	// (payonce.JournalEntry.ResourceID), indexed for the settle lookup's
	// "which entry holds this payment". Rows of earlier versions get it
	// from their stored answer where the operation names one at a known
	// place (an A55 charge's charge_uuid, a Coinepay card_id or
	// recharge_id) and redaction left it whole; the others, and any whose
	// answer does not read as JSON, keep none, which a lookup reads as
	// unknown.
	`ALTER TABLE $T ADD COLUMN resource_id text NOT NULL DEFAULT '';
	CREATE FUNCTION pg_temp.payonce_resource_id(doc bytea, op text) RETURNS text LANGUAGE plpgsql AS $fn$
	DECLARE
		v jsonb;
		id text;
	BEGIN
		v := CASE op WHEN 'charges.create' THEN convert_from(doc, 'UTF8')::jsonb -> 'charge_uuid'
			WHEN 'cards.apply' THEN convert_from(doc, 'UTF8')::jsonb -> 'data' -> 'card_id'
			WHEN 'cards.recharge' THEN convert_from(doc, 'UTF8')::jsonb -> 'data' -> 'recharge_id' END;
		IF v IS NULL OR jsonb_typeof(v) <> 'string' THEN
			RETURN '';
		END IF;
		id := v #>> '{}';
		IF length(id) > 255 OR position('*' IN id) > 0 OR position('[' IN id) > 0 THEN
			RETURN '';
		END IF;
		RETURN id;
	EXCEPTION WHEN others THEN
		RETURN '';
	END
	$fn$;
	UPDATE $T SET resource_id = pg_temp.payonce_resource_id(result, operation)
		WHERE state IN ('succeeded', 'failed') AND length(result) > 0
		AND operation IN ('charges.create', 'cards.apply', 'cards.recharge');
	DROP FUNCTION pg_temp.payonce_resource_id(bytea, text);
	CREATE INDEX ON $T (scope, resource_id) WHERE resource_id <> '';`,
}

// SchemaVersion is the schema version this package writes.
func SchemaVersion() int { return len(migrations) }

// migrate creates the schema and the version table and applies the
// missing migrations in one transaction, under an advisory lock, so that
// workers starting together migrate once. A newer schema is refused.
func (j *Journal) migrate(ctx context.Context) error {
	tx, err := j.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("pgjournal: migrate: %w", err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	schema := pgx.Identifier{j.schema}.Sanitize()
	versions := pgx.Identifier{j.schema, "payonce_journal_migrations"}.Sanitize()
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('payonce_journal_migrate:' || $1))`, j.schema); err != nil {
		return fmt.Errorf("pgjournal: migrate: %w", err)
	}
	if _, err := tx.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+schema); err != nil {
		return fmt.Errorf("pgjournal: migrate: %w", err)
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+versions+` (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return fmt.Errorf("pgjournal: migrate: %w", err)
	}
	var v int
	if err := tx.QueryRow(ctx, `SELECT COALESCE(MAX(version), 0) FROM `+versions).Scan(&v); err != nil {
		return fmt.Errorf("pgjournal: migrate: %w", err)
	}
	if v > len(migrations) {
		return fmt.Errorf("pgjournal: schema version %d is newer than this package's %d", v, len(migrations))
	}
	for i := v; i < len(migrations); i++ {
		stmt := strings.NewReplacer("$T", j.table, "$S", schema).Replace(migrations[i])
		if _, err := tx.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("pgjournal: migration %d: %w", i+1, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO `+versions+` (version) VALUES ($1)`, i+1); err != nil {
			return fmt.Errorf("pgjournal: migration %d: %w", i+1, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("pgjournal: migrate: %w", err)
	}
	return nil
}
