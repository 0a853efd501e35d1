// Package pgjournal is the payonce.Journal for a fleet: one PostgreSQL
// database (through pgx/v5 and pgxpool) shared by every worker. Claim
// leases pending entries with FOR UPDATE SKIP LOCKED, so each is resumed by
// one worker; ReserveTx joins the merchant's own transaction.
package pgjournal

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/payonce/payonce"
	"github.com/payonce/payonce/journal"
)

// DefaultSchema is the schema the journal's tables live in.
const DefaultSchema = "public"

// Journal is a payonce.Journal in PostgreSQL. It is safe for concurrent
// use by goroutines, processes and machines.
type Journal struct {
	pool   *pgxpool.Pool
	owned  bool // Close closes the pool
	schema string
	table  string // quoted schema.table
	now    func() time.Time
	batch  *journal.Batcher[write] // group commit of Reserve and Update (group.go)
}

// Option configures Open and New.
type Option func(*config) error

type config struct {
	schema string
	now    func() time.Time
}

var identifier = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// WithSchema puts the journal's tables in schema name (created when
// absent): lower-case letters, digits and underscores, at most 63.
func WithSchema(name string) Option {
	return func(c *config) error {
		if !identifier.MatchString(name) {
			return fmt.Errorf("%w: pgjournal: schema must match %s", payonce.ErrInvalidConfig, identifier)
		}
		c.schema = name
		return nil
	}
}

// WithClock sets the clock leases are measured against (tests).
func WithClock(now func() time.Time) Option {
	return func(c *config) error {
		if now == nil {
			return fmt.Errorf("%w: pgjournal: nil clock", payonce.ErrInvalidConfig)
		}
		c.now = now
		return nil
	}
}

// Open connects to the database at url (a pgx connection string), and
// migrates the schema. Close closes the pool.
func Open(ctx context.Context, url string, opts ...Option) (*Journal, error) {
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		// The parser's message may quote the connection string: say less.
		return nil, fmt.Errorf("%w: pgjournal: cannot parse the connection string", payonce.ErrInvalidConfig)
	}
	j, err := New(ctx, pool, opts...)
	if err != nil {
		pool.Close()
		return nil, err
	}
	j.owned = true
	return j, nil
}

// New uses pool (which the caller keeps and closes) and migrates the
// schema.
func New(ctx context.Context, pool *pgxpool.Pool, opts ...Option) (*Journal, error) {
	if pool == nil {
		return nil, fmt.Errorf("%w: pgjournal: nil pool", payonce.ErrInvalidConfig)
	}
	cfg := config{schema: DefaultSchema, now: time.Now}
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	j := &Journal{pool: pool, schema: cfg.schema, table: pgx.Identifier{cfg.schema, "payonce_journal"}.Sanitize(), now: cfg.now}
	j.batch = newBatcher(j)
	if err := j.migrate(ctx); err != nil {
		return nil, err
	}
	return j, nil
}

// Close waits for the writes already queued to commit, refuses new ones
// and closes the pool when Open made it.
func (j *Journal) Close() {
	j.batch.Close()
	if j.owned {
		j.pool.Close()
	}
}

// Schema returns the schema the journal's tables live in.
func (j *Journal) Schema() string { return j.schema }

// Pool returns the connection pool, for a merchant's own transactions
// (see ReserveTx).
func (j *Journal) Pool() *pgxpool.Pool { return j.pool }

// querier is what a pool and a transaction share.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

const columns = `scope, reference, operation, method, path, idem_key, key_created, fingerprint, state, result,
	status_code, request_id, replayed, error_kind, error_code, error_message, attempts, last_cause,
	created_at, updated_at, lease_owner, lease_until`

func (j *Journal) sql(s string) string { return strings.ReplaceAll(s, "$T", j.table) }

// Reserve inserts e as pending unless (Scope, Reference) exists.
func (j *Journal) Reserve(ctx context.Context, e payonce.JournalEntry) (payonce.JournalEntry, bool, error) {
	if err := journal.CheckReserve(e); err != nil {
		return payonce.JournalEntry{}, false, err
	}
	w := &reserveWrite{e: journal.NormalizeReserve(e, j.now())}
	if err := j.batch.Do(ctx, w); err != nil {
		return payonce.JournalEntry{}, false, err
	}
	return w.out, w.created, nil
}

// ReserveTx reserves e inside the caller's transaction, so that the
// merchant's own rows (the order) and the intent to run the operation
// commit or roll back together. A later Do with the reference finds the
// pending entry and uses its key. e needs Scope (the client's, see
// payonce.Client.Scope), Reference, Method, Path, Key, KeyCreated and the
// Fingerprint of the request Do will send (payonce.Fingerprint; empty
// skips the journal's body check for this entry).
func (j *Journal) ReserveTx(ctx context.Context, tx pgx.Tx, e payonce.JournalEntry) (payonce.JournalEntry, bool, error) {
	if tx == nil {
		return payonce.JournalEntry{}, false, fmt.Errorf("%w: pgjournal: nil transaction", payonce.ErrInvalidConfig)
	}
	if err := journal.CheckReserveTx(e); err != nil {
		return payonce.JournalEntry{}, false, err
	}
	return j.reserve(ctx, tx, e)
}

const insertSQL = `INSERT INTO $T (` + columns + `)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, '', NULL)
	ON CONFLICT (scope, reference) DO NOTHING RETURNING ` + columns

func (j *Journal) reserve(ctx context.Context, q querier, e payonce.JournalEntry) (payonce.JournalEntry, bool, error) {
	e = journal.NormalizeReserve(e, j.now())
	rows, err := q.Query(ctx, j.sql(insertSQL),
		e.Scope, e.Reference, e.Operation, e.Method, e.Path, e.Key, e.KeyCreated, e.Fingerprint, string(e.State), e.Result,
		e.StatusCode, e.RequestID, e.Replayed, e.ErrorKind, e.ErrorCode, e.ErrorMessage, e.Attempts, e.LastCause,
		e.CreatedAt, e.UpdatedAt)
	if err != nil {
		return payonce.JournalEntry{}, false, fmt.Errorf("pgjournal: reserve: %w", err)
	}
	es, err := scanAll(rows)
	if err != nil {
		return payonce.JournalEntry{}, false, err
	}
	if len(es) == 1 {
		return es[0], true, nil
	}
	got, err := j.get(ctx, q, e.Scope, e.Reference)
	return got, false, err
}

// Update overwrites the mutable fields of an entry; it never moves a
// settled entry to another state.
func (j *Journal) Update(ctx context.Context, e payonce.JournalEntry) error {
	if err := journal.CheckState(e.State); err != nil {
		return err
	}
	upd := journal.Time(e.UpdatedAt)
	if upd.IsZero() {
		upd = journal.Time(j.now())
	}
	e.UpdatedAt = upd
	return j.batch.Do(ctx, &updateWrite{e: e})
}

const updateSQL = `UPDATE $T SET state = $3, result = $4, status_code = $5, request_id = $6, replayed = $7,
	error_kind = $8, error_code = $9, error_message = $10, attempts = $11, last_cause = $12, updated_at = $13,
	lease_owner = CASE WHEN $14 THEN '' ELSE lease_owner END, lease_until = CASE WHEN $14 THEN NULL ELSE lease_until END
	WHERE scope = $1 AND reference = $2 AND (state = 'pending' OR state = $3)`

// update applies e (UpdatedAt set) on q, committed as it runs.
func (j *Journal) update(ctx context.Context, q querier, e payonce.JournalEntry) error {
	tag, err := q.Exec(ctx, j.sql(updateSQL),
		e.Scope, e.Reference, string(e.State), e.Result, e.StatusCode, e.RequestID, e.Replayed, e.ErrorKind, e.ErrorCode, e.ErrorMessage,
		e.Attempts, e.LastCause, e.UpdatedAt, e.State != payonce.JournalPending)
	if err != nil {
		return fmt.Errorf("pgjournal: update: %w", err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	var state string
	err = q.QueryRow(ctx, j.sql(`SELECT state FROM $T WHERE scope = $1 AND reference = $2`), e.Scope, e.Reference).Scan(&state)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("pgjournal: update: %w", err)
	}
	return updateOutcome(e, tag.RowsAffected(), state, err)
}

// updateOutcome is an Update's result from the rows it changed and the
// state then read (readErr pgx.ErrNoRows: no entry).
func updateOutcome(e payonce.JournalEntry, changed int64, state string, readErr error) error {
	switch {
	case changed == 1:
		return nil
	case errors.Is(readErr, pgx.ErrNoRows):
		return fmt.Errorf("pgjournal: update %q: %w", e.Reference, payonce.ErrJournalNotFound)
	default:
		return fmt.Errorf("pgjournal: update %q from %s to %s: %w", e.Reference, state, e.State, payonce.ErrJournalSettled)
	}
}

// Get returns the entry of (scope, reference).
func (j *Journal) Get(ctx context.Context, scope, reference string) (payonce.JournalEntry, error) {
	return j.get(ctx, j.pool, scope, reference)
}

func (j *Journal) get(ctx context.Context, q querier, scope, reference string) (payonce.JournalEntry, error) {
	rows, err := q.Query(ctx, j.sql(`SELECT `+columns+` FROM $T WHERE scope = $1 AND reference = $2`), scope, reference)
	if err != nil {
		return payonce.JournalEntry{}, fmt.Errorf("pgjournal: get: %w", err)
	}
	es, err := scanAll(rows)
	if err != nil {
		return payonce.JournalEntry{}, err
	}
	if len(es) == 0 {
		return payonce.JournalEntry{}, fmt.Errorf("pgjournal: get %q: %w", reference, payonce.ErrJournalNotFound)
	}
	return es[0], nil
}

// Pending lists pending entries, oldest first.
func (j *Journal) Pending(ctx context.Context, q payonce.PendingQuery) ([]payonce.JournalEntry, error) {
	var before *time.Time
	if !q.Before.IsZero() {
		b := journal.Time(q.Before)
		before = &b
	}
	rows, err := j.pool.Query(ctx, j.sql(`SELECT `+columns+` FROM $T
		WHERE state = 'pending' AND ($1 = '' OR scope = $1) AND ($2::timestamptz IS NULL OR updated_at < $2)
		ORDER BY created_at, scope, reference LIMIT $3`), q.Scope, before, limit(q.Limit))
	if err != nil {
		return nil, fmt.Errorf("pgjournal: pending: %w", err)
	}
	return scanAll(rows)
}

// Claim leases free or expired pending entries to c.Owner until now plus
// c.Lease. Rows another worker is claiming at the same moment are skipped
// (FOR UPDATE SKIP LOCKED), so concurrent claims never share an entry.
func (j *Journal) Claim(ctx context.Context, c payonce.ClaimRequest) ([]payonce.JournalEntry, error) {
	if err := journal.CheckClaim(c); err != nil {
		return nil, err
	}
	now := journal.Time(j.now())
	rows, err := j.pool.Query(ctx, j.sql(`WITH c AS (
			SELECT scope, reference FROM $T
			WHERE state = 'pending' AND ($1 = '' OR scope = $1) AND (lease_owner = '' OR lease_until IS NULL OR lease_until <= $2)
			ORDER BY created_at, scope, reference LIMIT $3
			FOR UPDATE SKIP LOCKED)
		UPDATE $T AS t SET lease_owner = $4, lease_until = $5
		FROM c WHERE t.scope = c.scope AND t.reference = c.reference
		RETURNING `+prefixed("t.", columns)), c.Scope, now, limit(c.Limit), c.Owner, now.Add(c.Lease))
	if err != nil {
		return nil, fmt.Errorf("pgjournal: claim: %w", err)
	}
	es, err := scanAll(rows)
	if err != nil {
		return nil, err
	}
	journal.SortEntries(es)
	return es, nil
}

// Purge deletes settled entries last updated before settledBefore.
func (j *Journal) Purge(ctx context.Context, settledBefore time.Time) (int64, error) {
	tag, err := j.pool.Exec(ctx, j.sql(`DELETE FROM $T WHERE state IN ('succeeded', 'failed') AND updated_at < $1`), journal.Time(settledBefore))
	if err != nil {
		return 0, fmt.Errorf("pgjournal: purge: %w", err)
	}
	return tag.RowsAffected(), nil
}

func prefixed(p, cols string) string {
	parts := strings.Split(cols, ",")
	for i, c := range parts {
		parts[i] = p + strings.TrimSpace(c)
	}
	return strings.Join(parts, ", ")
}

func scanAll(rows pgx.Rows) ([]payonce.JournalEntry, error) {
	defer rows.Close()
	var out []payonce.JournalEntry
	for rows.Next() {
		var e payonce.JournalEntry
		var state string
		var leaseUntil *time.Time
		if err := rows.Scan(&e.Scope, &e.Reference, &e.Operation, &e.Method, &e.Path, &e.Key, &e.KeyCreated, &e.Fingerprint, &state, &e.Result,
			&e.StatusCode, &e.RequestID, &e.Replayed, &e.ErrorKind, &e.ErrorCode, &e.ErrorMessage, &e.Attempts, &e.LastCause,
			&e.CreatedAt, &e.UpdatedAt, &e.LeaseOwner, &leaseUntil); err != nil {
			return nil, fmt.Errorf("pgjournal: scan: %w", err)
		}
		e.State = payonce.JournalState(state)
		e.KeyCreated, e.CreatedAt, e.UpdatedAt = e.KeyCreated.UTC(), e.CreatedAt.UTC(), e.UpdatedAt.UTC()
		if leaseUntil != nil {
			e.LeaseUntil = leaseUntil.UTC()
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pgjournal: scan: %w", err)
	}
	return out, nil
}

// limit is a LIMIT argument: NULL (no limit) for n <= 0.
func limit(n int) *int {
	if n <= 0 {
		return nil
	}
	return &n
}
