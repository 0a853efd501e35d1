package pgjournal_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/payonce/payonce"
	"github.com/payonce/payonce/journal"
	"github.com/payonce/payonce/journal/journaltest"
	"github.com/payonce/payonce/journal/pgjournal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// EnvURL names the variable that points the tests at a PostgreSQL database.
const EnvURL = "PAYONCE_POSTGRES_URL"

// pool returns a pool on the test database, or skips the test.
func pool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	url := os.Getenv(EnvURL)
	if url == "" {
		t.Skip(EnvURL + " is not set: skipping the PostgreSQL tests (e.g. " + EnvURL + "=postgres://postgres@127.0.0.1:5432/test?sslmode=disable)")
	}
	p, err := pgxpool.New(t.Context(), url)
	require.NoError(t, err)
	t.Cleanup(p.Close)
	return p
}

// schema returns a fresh random schema name, dropped when the test ends.
func schema(t *testing.T, p *pgxpool.Pool) string {
	t.Helper()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "payonce_test_" + hex.EncodeToString(b)
	t.Cleanup(func() {
		_, err := p.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{name}.Sanitize()+" CASCADE")
		assert.NoError(t, err)
	})
	return name
}

func open(t *testing.T) *pgjournal.Journal {
	t.Helper()
	p := pool(t)
	j, err := pgjournal.New(t.Context(), p, pgjournal.WithSchema(schema(t, p)))
	require.NoError(t, err)
	return j
}

func TestConformance(t *testing.T) {
	journaltest.Run(t, func(t *testing.T) journal.Store { return open(t) })
}

func TestOpenMigratesOnceAndRefusesNewerSchema(t *testing.T) {
	p := pool(t)
	name := schema(t, p)
	url := os.Getenv(EnvURL)
	// Workers starting together migrate once.
	var wg sync.WaitGroup
	errs := make(chan error, 5)
	for range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			j, err := pgjournal.Open(context.Background(), url, pgjournal.WithSchema(name))
			if err == nil {
				j.Close()
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	var n, v int
	require.NoError(t, p.QueryRow(t.Context(), fmt.Sprintf("SELECT COUNT(*), MAX(version) FROM %s.payonce_journal_migrations", name)).Scan(&n, &v))
	assert.Equal(t, pgjournal.SchemaVersion(), n)
	assert.Equal(t, pgjournal.SchemaVersion(), v)

	_, err := p.Exec(t.Context(), fmt.Sprintf("INSERT INTO %s.payonce_journal_migrations (version) VALUES ($1)", name), pgjournal.SchemaVersion()+1)
	require.NoError(t, err)
	_, err = pgjournal.New(t.Context(), p, pgjournal.WithSchema(name))
	require.ErrorContains(t, err, "newer")
}

func TestOptionsAreValidated(t *testing.T) {
	_, err := pgjournal.New(t.Context(), nil)
	require.ErrorIs(t, err, payonce.ErrInvalidConfig)
	for _, bad := range []string{"", "Upper", "x;drop", "1abc", "a-b"} {
		require.Error(t, pgjournal.WithSchema(bad)(nil), bad)
	}
	_, err = pgjournal.Open(t.Context(), "postgres://user:hunter2@[::1", pgjournal.WithSchema("x"))
	require.ErrorIs(t, err, payonce.ErrInvalidConfig)
	assert.NotContains(t, err.Error(), "hunter2")
}

// ReserveTx joins the merchant's transaction: rolled back, nothing is
// reserved; committed, the order row and the entry exist together.
func TestReserveTxJoinsTheMerchantsTransaction(t *testing.T) {
	j := open(t)
	ctx := t.Context()
	p := j.Pool()
	orders := schemaOf(t, j) + ".orders"
	_, err := p.Exec(ctx, "CREATE TABLE "+orders+" (id text PRIMARY KEY)")
	require.NoError(t, err)

	// orderWithEntry inserts the order and reserves its entry in one
	// transaction, then ends it with end.
	orderWithEntry := func(end func(pgx.Tx, context.Context) error) payonce.JournalEntry {
		tx, err := p.Begin(ctx)
		require.NoError(t, err)
		_, err = tx.Exec(ctx, "INSERT INTO "+orders+" (id) VALUES ('o-1')")
		require.NoError(t, err)
		e, created, err := j.ReserveTx(ctx, tx, journaltest.Entry("s", "o-1/charge"))
		require.NoError(t, err)
		require.True(t, created)
		require.NoError(t, end(tx, ctx))
		return e
	}
	orderWithEntry(pgx.Tx.Rollback)
	_, err = j.Get(ctx, "s", "o-1/charge")
	require.ErrorIs(t, err, journal.ErrNotFound)

	e := orderWithEntry(pgx.Tx.Commit)
	got, err := j.Get(ctx, "s", "o-1/charge")
	require.NoError(t, err)
	assert.Equal(t, e.Key, got.Key)

	_, _, err = j.ReserveTx(ctx, nil, journaltest.Entry("s", "x"))
	require.ErrorIs(t, err, payonce.ErrInvalidConfig)
}

// A claim holds its rows while its statement runs: a worker claiming at
// the same time skips them instead of waiting or sharing.
func TestClaimSkipsRowsLockedByAnotherWorker(t *testing.T) {
	j := open(t)
	ctx := t.Context()
	for i := range 3 {
		_, _, err := j.Reserve(ctx, journaltest.Entry("s", fmt.Sprintf("r%d", i)))
		require.NoError(t, err)
	}
	tx, err := j.Pool().Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	_, err = tx.Exec(ctx, "SELECT 1 FROM "+schemaOf(t, j)+".payonce_journal WHERE reference = 'r0' FOR UPDATE")
	require.NoError(t, err)

	done := make(chan []payonce.JournalEntry, 1)
	go func() {
		got, err := j.Claim(context.Background(), journal.ClaimRequest{Owner: "w", Lease: time.Hour})
		assert.NoError(t, err)
		done <- got
	}()
	select {
	case got := <-done:
		assert.ElementsMatch(t, []string{"r1", "r2"}, []string{got[0].Reference, got[1].Reference})
		assert.Len(t, got, 2)
	case <-time.After(30 * time.Second):
		t.Fatal("Claim waited for a locked row instead of skipping it")
	}
}

func schemaOf(t *testing.T, j *pgjournal.Journal) string {
	t.Helper()
	return pgx.Identifier{j.Schema()}.Sanitize()
}

// A second worker cannot claim an entry another worker leased for 5
// minutes a moment ago, whatever its own clock says: the journal takes no
// clock from a worker, and leases are measured on the database's now().
func TestSkewedWorkerClockCannotTakeALiveLease(t *testing.T) {
	p := pool(t)
	name := schema(t, p)
	honest, err := pgjournal.New(t.Context(), p, pgjournal.WithSchema(name))
	require.NoError(t, err)
	ahead, err := pgjournal.New(t.Context(), p, pgjournal.WithSchema(name))
	require.NoError(t, err)
	_, _, err = honest.Reserve(t.Context(), journaltest.Entry("s", "skew-1"))
	require.NoError(t, err)
	got, err := honest.Claim(t.Context(), journal.ClaimRequest{Owner: "w1", Lease: 5 * time.Minute})
	require.NoError(t, err)
	require.Len(t, got, 1)
	stolen, err := ahead.Claim(t.Context(), journal.ClaimRequest{Owner: "w2", Lease: 5 * time.Minute})
	require.NoError(t, err)
	assert.Empty(t, stolen, "the lease is still live on the database's clock")
	e, err := honest.Get(t.Context(), "s", "skew-1")
	require.NoError(t, err)
	assert.Equal(t, "w1", e.LeaseOwner)
}

// A database of schema version 1 upgrades on open: its rows gain a fence
// and count as maybe sent (nothing says otherwise), and keep working.
func TestVersionOneSchemaUpgrades(t *testing.T) {
	p := pool(t)
	name := schema(t, p)
	table := pgx.Identifier{name, "payonce_journal"}.Sanitize()
	versions := pgx.Identifier{name, "payonce_journal_migrations"}.Sanitize()
	for _, stmt := range []string{
		"CREATE SCHEMA " + pgx.Identifier{name}.Sanitize(),
		"CREATE TABLE " + versions + " (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
		`CREATE TABLE ` + table + ` (scope text NOT NULL, reference text NOT NULL, operation text NOT NULL DEFAULT '',
			method text NOT NULL DEFAULT '', path text NOT NULL DEFAULT '', idem_key text NOT NULL, key_created timestamptz NOT NULL,
			fingerprint text NOT NULL, state text NOT NULL CHECK (state IN ('pending', 'succeeded', 'failed')), result bytea,
			status_code integer NOT NULL DEFAULT 0, request_id text NOT NULL DEFAULT '', replayed boolean NOT NULL DEFAULT false,
			error_kind text NOT NULL DEFAULT '', error_code text NOT NULL DEFAULT '', error_message text NOT NULL DEFAULT '',
			attempts integer NOT NULL DEFAULT 0, last_cause text NOT NULL DEFAULT '', created_at timestamptz NOT NULL,
			updated_at timestamptz NOT NULL, lease_owner text NOT NULL DEFAULT '', lease_until timestamptz, PRIMARY KEY (scope, reference))`,
		"INSERT INTO " + versions + " (version) VALUES (1)",
		"INSERT INTO " + table + " (scope, reference, idem_key, key_created, fingerprint, state, attempts, created_at, updated_at) " +
			"VALUES ('s', 'old-1', 'old-key-0000000001', now(), 'fp', 'pending', 2, now(), now())",
	} {
		_, err := p.Exec(t.Context(), stmt)
		require.NoError(t, err, stmt)
	}
	j, err := pgjournal.New(t.Context(), p, pgjournal.WithSchema(name))
	require.NoError(t, err)
	e, err := j.Get(t.Context(), "s", "old-1")
	require.NoError(t, err)
	assert.True(t, e.Sent, "an old row may have been sent")
	assert.Equal(t, 2, e.Attempts)
	tk, err := j.Take(t.Context(), payonce.JournalEntry{Scope: "s", Reference: "old-1", LeaseOwner: "w", Lease: time.Minute})
	require.NoError(t, err)
	assert.Equal(t, e.Fence+1, tk.Fence)
	var v int
	require.NoError(t, p.QueryRow(t.Context(), "SELECT MAX(version) FROM "+versions).Scan(&v))
	assert.Equal(t, pgjournal.SchemaVersion(), v)
}

func TestFingerprintBinding(t *testing.T) {
	j := open(t)
	journaltest.FingerprintBinding(t, j, func(ctx context.Context, e payonce.JournalEntry) (payonce.JournalEntry, bool, error) {
		tx, err := j.Pool().Begin(ctx)
		if err != nil {
			return payonce.JournalEntry{}, false, err
		}
		got, created, err := j.ReserveTx(ctx, tx, e)
		if err != nil {
			_ = tx.Rollback(ctx)
			return got, created, err
		}
		return got, created, tx.Commit(ctx)
	})
}
