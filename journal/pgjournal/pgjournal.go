// Package pgjournal is the payonce.Journal for a fleet, which a merchant
// opens with Open(ctx, url) or New(ctx, pool) and gives to
// payonce.WithJournal: one PostgreSQL
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
	"github.com/payonce/payonce/internal/corekit"
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
	table  string                  // quoted schema.table
	batch  *journal.Batcher[write] // group commit of every write (group.go)
	// inbox is the inbox's own group commit (inbox.go): a delivery may
	// wait for an event's row a handler's transaction holds (HandlerTx),
	// and must never hold up the journal's writes while it does.
	inbox *journal.Batcher[write]
}

// Option configures Open and New.
type Option func(*config) error

type config struct {
	schema string
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
	cfg := config{schema: DefaultSchema}
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	j := &Journal{pool: pool, schema: cfg.schema, table: pgx.Identifier{cfg.schema, "payonce_journal"}.Sanitize()}
	j.batch, j.inbox = newBatcher(j), newBatcher(j)
	if err := j.migrate(ctx); err != nil {
		return nil, err
	}
	return j, nil
}

// Close waits for the writes already queued to commit, refuses new ones
// and closes the pool when Open made it.
func (j *Journal) Close() {
	j.batch.Close()
	j.inbox.Close()
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
	created_at, updated_at, lease_owner, lease_until, fence, sent, settle_reason, summary, resource_id`

func (j *Journal) sql(s string) string { return strings.ReplaceAll(s, "$T", j.table) }

// Reserve inserts e as pending unless (Scope, Reference) exists.
func (j *Journal) Reserve(ctx context.Context, e payonce.JournalEntry) (payonce.JournalEntry, bool, error) {
	if err := journal.CheckReserve(e); err != nil {
		return payonce.JournalEntry{}, false, err
	}
	w := &reserveWrite{e: journal.NormalizeReserve(e, time.Time{})}
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
// Fingerprint of the request Do will send (payonce.Client.Fingerprint; empty
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

// insertSQL reserves an entry; the times a caller left zero (NULL) and
// the lease are the database's now(). It returns the entry and true when
// it inserted it, else the entry already there and false, in one
// statement. It returns no row when the entry it conflicted with was
// committed after the statement's snapshot was taken: a new statement
// then reads it.
const insertSQL = `WITH ins AS (INSERT INTO $T (` + columns + `)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18,
		COALESCE($19, now()), COALESCE($20, $19, now()), $21::text,
		CASE WHEN $21::text <> '' THEN now() + $22::bigint * interval '1 microsecond' END, $23, $24, '', $25, '')
	ON CONFLICT (scope, reference) DO NOTHING RETURNING ` + columns + `)
	SELECT ` + columns + `, true FROM ins
	UNION ALL SELECT ` + columns + `, false FROM $T WHERE scope = $1 AND reference = $2 AND NOT EXISTS (SELECT FROM ins)`

// insertArgs are insertSQL's arguments for the normalized entry e.
func insertArgs(e payonce.JournalEntry) []any {
	return []any{e.Scope, e.Reference, e.Operation, e.Method, e.Path, e.Key, e.KeyCreated, e.Fingerprint, string(e.State), e.Result,
		e.StatusCode, e.RequestID, e.Replayed, e.ErrorKind, e.ErrorCode, e.ErrorMessage, e.Attempts, e.LastCause,
		optTime(e.CreatedAt), optTime(e.UpdatedAt), e.LeaseOwner, corekit.ReserveLease(e.Lease).Microseconds(), e.Fence, e.Sent, e.Summary}
}

// optTime is t, or NULL for the zero time (the database's now()).
func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func (j *Journal) reserve(ctx context.Context, q querier, e payonce.JournalEntry) (payonce.JournalEntry, bool, error) {
	e = journal.NormalizeReserve(e, time.Time{})
	rows, err := q.Query(ctx, j.sql(insertSQL), insertArgs(e)...)
	if err != nil {
		return payonce.JournalEntry{}, false, fmt.Errorf("pgjournal: reserve: %w", err)
	}
	got, created, found, err := scanReserved(rows)
	if err != nil || found {
		return got, created, err
	}
	got, err = j.get(ctx, q, e.Scope, e.Reference)
	return got, false, err
}

// scanReserved reads insertSQL's row, if any: the entry, whether the
// statement created it and whether there was a row.
func scanReserved(rows pgx.Rows) (e payonce.JournalEntry, created, found bool, err error) {
	defer rows.Close()
	if rows.Next() {
		if e, err = scanOne(rows, &created); err != nil {
			return payonce.JournalEntry{}, false, false, err
		}
		found = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return payonce.JournalEntry{}, false, false, fmt.Errorf("pgjournal: reserve: %w", err)
	}
	return e, created, found, nil
}

// Update records an outcome under the precedence and fence rules of
// payonce.Journal, stated in the UPDATE itself (updateSQL).
func (j *Journal) Update(ctx context.Context, e payonce.JournalEntry) error {
	if err := journal.CheckState(e.State); err != nil {
		return err
	}
	e.UpdatedAt = journal.StoredTime(e.UpdatedAt)
	return j.batch.Do(ctx, &updateWrite{e: e})
}

// updateSQL: a success lands on any entry not succeeded; every other
// write only on a pending entry whose fence is the writer's ($15).
const updateSQL = `UPDATE $T SET state = $3, result = $4, status_code = $5, request_id = $6, replayed = $7,
	error_kind = $8, error_code = $9, error_message = $10, attempts = GREATEST(attempts, $11), last_cause = $12,
	settle_reason = $13, updated_at = COALESCE($14, now()), lease_owner = '', lease_until = NULL, resource_id = $16
	WHERE scope = $1 AND reference = $2 AND state <> 'succeeded' AND ($3::text = 'succeeded' OR (state = 'pending' AND fence = $15))`

func updateArgs(e payonce.JournalEntry) []any {
	return []any{e.Scope, e.Reference, string(e.State), e.Result, e.StatusCode, e.RequestID, e.Replayed, e.ErrorKind, e.ErrorCode, e.ErrorMessage,
		e.Attempts, e.LastCause, e.SettleReason, optTime(e.UpdatedAt), e.Fence, e.ResourceID}
}

// takeSQL gives a pending entry to a run: the fence grows, the lease is
// the run's until now() plus the lease, an unbound fingerprint is bound.
const takeSQL = `UPDATE $T SET fence = fence + 1, lease_owner = $3, lease_until = now() + $4::bigint * interval '1 microsecond',
	updated_at = now(), fingerprint = CASE WHEN fingerprint = '' THEN $5 ELSE fingerprint END
	WHERE scope = $1 AND reference = $2 AND state = 'pending'
	AND ($5::text = '' OR fingerprint = '' OR fingerprint = $5)
	AND (lease_owner = '' OR lease_owner = $3 OR lease_until IS NULL OR lease_until <= now())
	RETURNING ` + columns

func takeArgs(r payonce.JournalEntry) []any {
	return []any{r.Scope, r.Reference, r.LeaseOwner, r.Lease.Microseconds(), r.Fingerprint}
}

// attemptSQL is the check before one attempt: pending, the run's fence;
// it marks the entry sent, counts the attempt and renews the lease.
const attemptSQL = `UPDATE $T SET sent = true, attempts = attempts + 1, lease_owner = $4,
	lease_until = now() + $5::bigint * interval '1 microsecond', updated_at = now()
	WHERE scope = $1 AND reference = $2 AND state = 'pending' AND fence = $3
	RETURNING ` + columns

func attemptArgs(r payonce.JournalEntry) []any {
	return []any{r.Scope, r.Reference, r.Fence, r.LeaseOwner, r.Lease.Microseconds()}
}

// rowSQL reads an entry and the database's now() after a guarded write
// that changed nothing, to name the rule it broke.
const rowSQL = `SELECT ` + columns + `, now() FROM $T WHERE scope = $1 AND reference = $2`

// Take gives a pending entry to the run r.LeaseOwner (payonce.Journal.Take).
func (j *Journal) Take(ctx context.Context, r payonce.JournalEntry) (payonce.JournalEntry, error) {
	if err := journal.CheckTake(r); err != nil {
		return payonce.JournalEntry{}, err
	}
	w := takeWrite(r)
	err := j.batch.Do(ctx, w)
	return w.out, err
}

// BeginAttempt checks and records, before an attempt is sent, that the
// run's fence is current (payonce.Journal.BeginAttempt).
func (j *Journal) BeginAttempt(ctx context.Context, r payonce.JournalEntry) (payonce.JournalEntry, error) {
	if err := journal.CheckAttempt(r); err != nil {
		return payonce.JournalEntry{}, err
	}
	w := attemptWrite(r)
	err := j.batch.Do(ctx, w)
	return w.out, err
}

// Now returns the database's now(): every lease and every time the
// journal fills in is on that clock, and the client measures key ages
// on it.
func (j *Journal) Now(ctx context.Context) (time.Time, error) {
	var t time.Time
	if err := j.pool.QueryRow(ctx, `SELECT now()`).Scan(&t); err != nil {
		return time.Time{}, fmt.Errorf("pgjournal: now: %w", err)
	}
	return journal.StoredTime(t), nil
}

// refusedWrite is the error of a guarded write that changed nothing,
// from the row then read (readErr pgx.ErrNoRows: no entry) and the rule
// it broke.
func refusedWrite(op, ref string, readErr, rule error) error {
	switch {
	case errors.Is(readErr, pgx.ErrNoRows):
		return fmt.Errorf("pgjournal: %s %q: %w", op, ref, journal.ErrNotFound)
	case readErr != nil:
		return fmt.Errorf("pgjournal: %s: %w", op, readErr)
	case rule == nil:
		return fmt.Errorf("pgjournal: %s %q changed nothing", op, ref)
	}
	return fmt.Errorf("pgjournal: %w", rule)
}

// scanRowNow reads rowSQL's single row.
func scanRowNow(rows pgx.Rows) (payonce.JournalEntry, time.Time, error) {
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return payonce.JournalEntry{}, time.Time{}, err
		}
		return payonce.JournalEntry{}, time.Time{}, pgx.ErrNoRows
	}
	var now time.Time
	e, err := scanOne(rows, &now)
	if err != nil {
		return payonce.JournalEntry{}, time.Time{}, err
	}
	rows.Close()
	return e, now.UTC(), rows.Err()
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
		return payonce.JournalEntry{}, fmt.Errorf("pgjournal: get %q: %w", reference, journal.ErrNotFound)
	}
	return es[0], nil
}

// Pending lists pending entries, oldest first.
func (j *Journal) Pending(ctx context.Context, q journal.PendingQuery) ([]payonce.JournalEntry, error) {
	var before *time.Time
	if !q.Before.IsZero() {
		b := journal.StoredTime(q.Before)
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
func (j *Journal) Claim(ctx context.Context, c journal.ClaimRequest) ([]payonce.JournalEntry, error) {
	if err := journal.CheckClaim(c.Owner, c.Lease); err != nil {
		return nil, err
	}
	rows, err := j.pool.Query(ctx, j.sql(`WITH c AS (
			SELECT scope, reference FROM $T
			WHERE state = 'pending' AND ($1 = '' OR scope = $1) AND (lease_owner = '' OR lease_until IS NULL OR lease_until <= now())
			ORDER BY created_at, scope, reference LIMIT $2
			FOR UPDATE SKIP LOCKED)
		UPDATE $T AS t SET lease_owner = $3, lease_until = now() + $4::bigint * interval '1 microsecond', fence = t.fence + 1
		FROM c WHERE t.scope = c.scope AND t.reference = c.reference
		RETURNING `+prefixed("t.", columns)), c.Scope, limit(c.Limit), c.Owner, c.Lease.Microseconds())
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
	tag, err := j.pool.Exec(ctx, j.sql(`DELETE FROM $T WHERE state IN ('succeeded', 'failed') AND updated_at < $1`), journal.StoredTime(settledBefore))
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
		e, err := scanOne(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pgjournal: scan: %w", err)
	}
	return out, nil
}

// scanOne scans the current row: the columns, then extra.
func scanOne(rows pgx.Rows, extra ...any) (payonce.JournalEntry, error) {
	var e payonce.JournalEntry
	var state string
	var leaseUntil *time.Time
	dest := []any{&e.Scope, &e.Reference, &e.Operation, &e.Method, &e.Path, &e.Key, &e.KeyCreated, &e.Fingerprint, &state, &e.Result,
		&e.StatusCode, &e.RequestID, &e.Replayed, &e.ErrorKind, &e.ErrorCode, &e.ErrorMessage, &e.Attempts, &e.LastCause,
		&e.CreatedAt, &e.UpdatedAt, &e.LeaseOwner, &leaseUntil, &e.Fence, &e.Sent, &e.SettleReason, &e.Summary, &e.ResourceID}
	if err := rows.Scan(append(dest, extra...)...); err != nil {
		return payonce.JournalEntry{}, fmt.Errorf("pgjournal: scan: %w", err)
	}
	e.State = payonce.JournalState(state)
	e.KeyCreated, e.CreatedAt, e.UpdatedAt = e.KeyCreated.UTC(), e.CreatedAt.UTC(), e.UpdatedAt.UTC()
	if leaseUntil != nil {
		e.LeaseUntil = leaseUntil.UTC()
	}
	return e, nil
}

// limit is a LIMIT argument: NULL (no limit) for n <= 0.
func limit(n int) *int {
	if n <= 0 {
		return nil
	}
	return &n
}
