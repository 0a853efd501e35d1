package chaos

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payonce/payonce/journal"
	"github.com/payonce/payonce/journal/pgjournal"
	"github.com/payonce/payonce/journal/sqlitejournal"
)

// isPostgres reports whether dsn names a PostgreSQL database.
func isPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// openJournal opens the run's journal: PostgreSQL in schema for a
// postgres:// URL, else the SQLite file at dsn.
func openJournal(ctx context.Context, dsn, schema string, sqliteOpts ...sqlitejournal.Option) (journal.Store, func(), error) {
	if isPostgres(dsn) {
		j, err := pgjournal.Open(ctx, dsn, pgjournal.WithSchema(schema))
		if err != nil {
			return nil, nil, fmt.Errorf("chaos: open postgres journal: %w", err)
		}
		return j, j.Close, nil
	}
	j, err := sqlitejournal.Open(ctx, dsn, sqliteOpts...)
	if err != nil {
		return nil, nil, fmt.Errorf("chaos: open sqlite journal: %w", err)
	}
	return j, func() { _ = j.Close() }, nil
}

// journalRun is the journal one run works in and how to clean it up.
type journalRun struct {
	kind    string // "sqlite" or "postgres"
	dsn     string
	schema  string // postgres: the run's own schema
	cleanup func()
}

// prepareJournal makes the run's journal: a new SQLite file in a
// temporary directory (spec ""), the SQLite file spec, or a new schema of
// its own in the PostgreSQL database spec, dropped by cleanup. The schema
// is created and migrated here, once, before any worker opens it.
func prepareJournal(ctx context.Context, spec string) (*journalRun, error) {
	jr := &journalRun{kind: "sqlite", dsn: spec, cleanup: func() {}}
	switch {
	case isPostgres(spec):
		var b [6]byte
		_, _ = rand.Read(b[:])
		jr.kind, jr.schema = "postgres", "payonce_chaos_"+hex.EncodeToString(b[:])
		jr.cleanup = func() { dropSchema(context.WithoutCancel(ctx), spec, jr.schema) }
	case spec == "":
		dir, err := os.MkdirTemp("", "payonce-chaos-")
		if err != nil {
			return nil, fmt.Errorf("chaos: journal directory: %w", err)
		}
		jr.dsn = filepath.Join(dir, "journal.db")
		jr.cleanup = func() { _ = os.RemoveAll(dir) }
	}
	_, closeJ, err := openJournal(ctx, jr.dsn, jr.schema)
	if err != nil {
		jr.cleanup()
		return nil, err
	}
	closeJ()
	return jr, nil
}

// dropSchema removes a run's PostgreSQL schema and everything in it.
func dropSchema(ctx context.Context, url, schema string) {
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return
	}
	defer pool.Close()
	_, _ = pool.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
}
