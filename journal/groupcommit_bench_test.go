package journal_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/journal"
	"github.com/payonce/payonce/journal/journaltest"
	"github.com/payonce/payonce/journal/pgjournal"
	"github.com/payonce/payonce/journal/sqlitejournal"
)

// groupCommitCallers is how many operations run at once.
const groupCommitCallers = 32

// groupCommitRound is how many operations one round runs on each side.
const groupCommitRound = 2000

// rawWrite is one raw write: a statement and its arguments.
type rawWrite struct {
	sql  string
	args []any
}

// rawTable is what the raw side writes: a row as wide as a journal entry,
// with every column the journal's operation fills with a value (the
// journal's other columns hold empty strings, zeros and NULL), by the
// same primary key.
const rawTable = `CREATE TABLE raw_commits (scope TEXT NOT NULL, reference TEXT NOT NULL, operation TEXT NOT NULL,
	method TEXT NOT NULL, path TEXT NOT NULL, idem_key TEXT NOT NULL, key_created BIGINT NOT NULL, fingerprint TEXT NOT NULL,
	state TEXT NOT NULL, result TEXT, status_code INTEGER NOT NULL, created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL,
	PRIMARY KEY (scope, reference))`

// rawIndexes are the journal's two partial indexes on the raw table:
// what a recovery worker lists pending entries by and a purge finds
// settled ones by, which every write of a row keeps up to date.
var rawIndexes = []string{
	`CREATE INDEX raw_pending ON raw_commits (created_at) WHERE state = 'pending'`,
	`CREATE INDEX raw_settled ON raw_commits (updated_at) WHERE state <> 'pending'`,
}

// rawInsert and rawUpdate are the raw side's two writes of an operation.
const (
	rawInsert = `INSERT INTO raw_commits VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'pending', NULL, 0, $9, $9)`
	rawUpdate = `UPDATE raw_commits SET state = 'succeeded', result = $1, status_code = 200, updated_at = $2
	WHERE scope = $3 AND reference = $4`
)

// groupCommitSide is one side of the comparison and what it did.
type groupCommitSide struct {
	name    string
	op      func(ctx context.Context, ref string) error
	elapsed time.Duration
	ops     int
}

func (s *groupCommitSide) round(b *testing.B, prefix string, next *atomic.Int64) {
	var wg sync.WaitGroup
	var failed atomic.Value
	left := atomic.Int64{}
	left.Store(groupCommitRound)
	start := time.Now()
	for range groupCommitCallers {
		wg.Go(func() {
			for left.Add(-1) >= 0 {
				if err := s.op(b.Context(), fmt.Sprintf("%s-%d", prefix, next.Add(1))); err != nil {
					failed.Store(err.Error())
					return
				}
			}
		})
	}
	wg.Wait()
	s.elapsed += time.Since(start)
	s.ops += groupCommitRound
	if msg := failed.Load(); msg != nil {
		b.Fatalf("%s: %v", s.name, msg)
	}
}

// compareGroupCommit runs the journal's operation (Reserve, then Update to
// succeeded: the two durable writes of every journaled call) against the
// same two writes done raw through a journal.Batcher on the same database
// with the same durability, groupCommitCallers at once, in interleaved
// rounds, and reports both rates and journal/raw.
func compareGroupCommit(b *testing.B, j payonce.Journal, raw *journal.Batcher[rawWrite]) {
	journalOp := func(ctx context.Context, ref string) error {
		e, _, err := j.Reserve(ctx, journaltest.Entry("bench", ref))
		if err != nil {
			return err
		}
		e.State, e.StatusCode, e.Result = payonce.JournalSucceeded, 200, []byte(`{"charge_uuid":"ch_1","status":"confirmed"}`)
		return j.Update(ctx, e)
	}
	rawOp := func(ctx context.Context, ref string) error {
		e := journaltest.Entry("bench", ref)
		now := time.Now().UnixMicro()
		if err := raw.Do(ctx, rawWrite{rawInsert, []any{e.Scope, e.Reference, e.Operation, e.Method, e.Path, e.Key,
			e.KeyCreated.UnixMicro(), e.Fingerprint, now}}); err != nil {
			return err
		}
		return raw.Do(ctx, rawWrite{rawUpdate, []any{`{"charge_uuid":"ch_1","status":"confirmed"}`, time.Now().UnixMicro(), e.Scope, e.Reference}})
	}
	sides := []*groupCommitSide{{name: "journal", op: journalOp}, {name: "raw", op: rawOp}}
	prefix := fmt.Sprintf("gc-%d", time.Now().UnixNano())
	var next atomic.Int64
	flip := false
	for b.Loop() {
		first, second := sides[0], sides[1]
		if flip {
			first, second = second, first
		}
		flip = !flip
		first.round(b, prefix, &next)
		second.round(b, prefix, &next)
	}
	rate := func(s *groupCommitSide) float64 { return float64(s.ops) / s.elapsed.Seconds() }
	b.ReportMetric(rate(sides[0]), "journal-ops/s")
	b.ReportMetric(rate(sides[1]), "raw-ops/s")
	b.ReportMetric(rate(sides[0])/rate(sides[1]), "journal/raw")
}

// BenchmarkGroupCommitVsRaw measures the journal against the engine's
// limit: the same two durable writes per operation, batched the same way
// (journal.Batcher, one lane for SQLite, two for PostgreSQL), as raw
// statements on the journal's own database handle, so at the same
// durability (SQLite WAL with synchronous=FULL; PostgreSQL's default
// synchronous_commit):
//
//	PAYONCE_POSTGRES_URL=postgres://... go test -run '^$' -bench GroupCommitVsRaw -benchtime 5x ./journal
func BenchmarkGroupCommitVsRaw(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) {
		j, err := sqlitejournal.Open(b.Context(), filepath.Join(b.TempDir(), "bench.db"))
		if err != nil {
			b.Fatal(err)
		}
		defer j.Close()
		db := j.DB()
		if _, err := db.ExecContext(b.Context(), rawTable); err != nil {
			b.Fatal(err)
		}
		for _, q := range rawIndexes {
			if _, err := db.ExecContext(b.Context(), q); err != nil {
				b.Fatal(err)
			}
		}
		// The journal's writes run statements prepared once; so do these.
		stmts := map[string]*sql.Stmt{}
		for _, q := range []string{rawInsert, rawUpdate} {
			st, err := db.PrepareContext(b.Context(), q)
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			stmts[q] = st
		}
		raw := journal.NewBatcher(func(ctx context.Context, items []journal.BatchItem[rawWrite]) []error {
			return sqliteRawBatch(ctx, db, stmts, items)
		}, journal.DefaultMaxBatch, 1, 0)
		defer raw.Close()
		compareGroupCommit(b, j, raw)
	})
	b.Run("postgres", func(b *testing.B) {
		url := os.Getenv("PAYONCE_POSTGRES_URL")
		if url == "" {
			b.Skip("PAYONCE_POSTGRES_URL is not set")
		}
		schema := fmt.Sprintf("payonce_gc_%d", time.Now().UnixNano())
		j, err := pgjournal.Open(b.Context(), url, pgjournal.WithSchema(schema))
		if err != nil {
			b.Fatal(err)
		}
		defer j.Close()
		pool := j.Pool()
		defer func() {
			_, _ = pool.Exec(context.Background(), "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
		}()
		table := pgx.Identifier{schema, "raw_commits"}.Sanitize()
		if _, err := pool.Exec(b.Context(), strings.Replace(rawTable, "raw_commits", table, 1)); err != nil {
			b.Fatal(err)
		}
		for _, q := range rawIndexes {
			if _, err := pool.Exec(b.Context(), strings.Replace(q, "raw_commits", table, 1)); err != nil {
				b.Fatal(err)
			}
		}
		raw := journal.NewBatcher(func(ctx context.Context, items []journal.BatchItem[rawWrite]) []error {
			return pgRawBatch(ctx, pool, table, items)
		}, journal.DefaultMaxBatch, 2, 0)
		defer raw.Close()
		compareGroupCommit(b, j, raw)
	})
}

// sqliteRawBatch commits the items in one BEGIN IMMEDIATE transaction,
// each by its statement prepared in stmts.
func sqliteRawBatch(ctx context.Context, db *sql.DB, stmts map[string]*sql.Stmt, items []journal.BatchItem[rawWrite]) []error {
	errs := make([]error, len(items))
	tx, err := db.BeginTx(ctx, nil)
	if err == nil {
		for _, it := range items {
			if _, err = tx.StmtContext(ctx, stmts[it.Write.sql]).ExecContext(ctx, it.Write.args...); err != nil {
				break
			}
		}
		if err == nil {
			err = tx.Commit()
		} else {
			_ = tx.Rollback()
		}
	}
	for i := range errs {
		errs[i] = err
	}
	return errs
}

// pgRawBatch sends the items as one pgx.Batch: pipelined, one implicit
// transaction.
func pgRawBatch(ctx context.Context, pool *pgxpool.Pool, table string, items []journal.BatchItem[rawWrite]) []error {
	batch := &pgx.Batch{}
	for _, it := range items {
		batch.Queue(strings.Replace(it.Write.sql, "raw_commits", table, 1), it.Write.args...)
	}
	br := pool.SendBatch(ctx, batch)
	var err error
	for range items {
		if _, err = br.Exec(); err != nil {
			break
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	errs := make([]error, len(items))
	for i := range errs {
		errs[i] = err
	}
	return errs
}
