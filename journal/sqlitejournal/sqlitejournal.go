// Package sqlitejournal is the embedded payonce.Journal a merchant opens
// with Open(ctx, path) and gives to payonce.WithJournal: one SQLite file
// (pure Go, modernc.org/sqlite) in WAL mode, safe for several goroutines
// and several processes sharing the file. Writes take SQLite's write lock
// up front (BEGIN IMMEDIATE) and wait for it up to the busy timeout.
package sqlitejournal

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/corekit"
	"github.com/payonce/payonce/journal"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// DefaultBusyTimeout is how long a write waits for another connection or
// process holding the file's write lock.
const DefaultBusyTimeout = 10 * time.Second

// Journal is a payonce.Journal in one SQLite file. It is safe for
// concurrent use by goroutines and processes.
type Journal struct {
	db    *sql.DB
	now   func() time.Time
	busy  time.Duration           // the busy timeout, also begin's budget for retries
	batch *journal.Batcher[write] // group commit of Reserve and Update (group.go)
	stmts stmtCache               // the writes' prepared statements (stmtcache.go)
	file  *journalFile            // the file opened, checked before each write (file.go)
}

// Option configures Open.
type Option func(*config) error

type config struct {
	busy       time.Duration
	now        func() time.Time
	syncNormal bool
}

// WithSynchronousNormal trades durability against power loss for speed:
// SQLite's synchronous=NORMAL in WAL mode survives any process crash, but
// an operating-system crash or power loss may drop the last commits (a
// pending entry among them, whose operation could then run again under a
// new key). The default, synchronous=FULL, syncs every commit.
func WithSynchronousNormal() Option {
	return func(c *config) error { c.syncNormal = true; return nil }
}

// WithBusyTimeout sets how long a write waits for the write lock (default
// DefaultBusyTimeout), at least a millisecond: SQLite counts it in whole
// milliseconds, and less would be no wait at all.
func WithBusyTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d < time.Millisecond {
			return fmt.Errorf("%w: sqlitejournal: busy timeout must be at least 1 ms", payonce.ErrInvalidConfig)
		}
		c.busy = d
		return nil
	}
}

// WithClock sets the clock leases are measured against (tests).
func WithClock(now func() time.Time) Option {
	return func(c *config) error {
		if now == nil {
			return fmt.Errorf("%w: sqlitejournal: nil clock", payonce.ErrInvalidConfig)
		}
		c.now = now
		return nil
	}
}

// Open opens (creating when absent) the journal file at path, switches it
// to WAL and migrates its schema to the current version.
func Open(ctx context.Context, path string, opts ...Option) (*Journal, error) {
	cfg := config{busy: DefaultBusyTimeout, now: time.Now}
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	if path == "" {
		return nil, fmt.Errorf("%w: sqlitejournal: empty path", payonce.ErrInvalidConfig)
	}
	// The absolute path: a process that changes directory keeps to the
	// file it opened, with every connection the pool opens later.
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("sqlitejournal: open: %w", err)
	}
	path = abs
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", cfg.busy.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	if cfg.syncNormal {
		q.Add("_pragma", "synchronous(NORMAL)")
	} else {
		q.Add("_pragma", "synchronous(FULL)")
	}
	q.Add("_pragma", "foreign_keys(ON)")
	q.Set("_txlock", "immediate")
	dsn := (&url.URL{Scheme: "file", Opaque: url.PathEscape(path), RawQuery: q.Encode()}).String()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlitejournal: open: %w", err)
	}
	db.SetMaxOpenConns(8)
	db.SetMaxIdleConns(8) // a connection kept open need not run the pragmas again
	j := &Journal{db: db, now: cfg.now, busy: cfg.busy, stmts: stmtCache{db: db}}
	j.batch = newBatcher(j)
	if err := j.migrate(ctx); err != nil {
		_ = db.Close()
		return nil, err
	}
	info, err := os.Stat(path)
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("sqlitejournal: open: %w", err)
	}
	j.file = &journalFile{path: path, info: info}
	return j, nil
}

// Close waits for the writes already queued to commit, refuses new ones
// and closes the database.
func (j *Journal) Close() error {
	j.batch.Close()
	j.stmts.close()
	return j.db.Close()
}

// DB returns the underlying database, for a merchant keeping its own
// tables in the same file (see ReserveTx).
func (j *Journal) DB() *sql.DB { return j.db }

const columns = `scope, reference, operation, method, path, idem_key, key_created, fingerprint, state, result,
	status_code, request_id, replayed, error_kind, error_code, error_message, attempts, last_cause,
	created_at, updated_at, lease_owner, lease_until, fence, sent, settle_reason, summary, resource_id`

type queryer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Reserve inserts e as pending unless (Scope, Reference) exists.
func (j *Journal) Reserve(ctx context.Context, e payonce.JournalEntry) (payonce.JournalEntry, bool, error) {
	if err := journal.CheckReserve(e); err != nil {
		return payonce.JournalEntry{}, false, err
	}
	var out payonce.JournalEntry
	var created bool
	err := j.commitWrite(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var err error
		out, created, err = j.reserve(ctx, j.prepared(tx), e)
		return err
	})
	if err != nil {
		return payonce.JournalEntry{}, false, err
	}
	return out, created, nil
}

// ReserveTx reserves e inside the caller's transaction on this journal's
// database (DB), so that the merchant's own rows (the order) and the intent
// to run the operation commit or roll back together. A later Do with the
// reference finds the pending entry and uses its key. e needs Scope (the
// client's, see payonce.Client.Scope), Reference, Method, Path, Key,
// KeyCreated and the Fingerprint of the request Do will send
// (payonce.Client.Fingerprint of the marshalled body; empty skips the journal's
// body check for this entry).
func (j *Journal) ReserveTx(ctx context.Context, tx *sql.Tx, e payonce.JournalEntry) (payonce.JournalEntry, bool, error) {
	if tx == nil {
		return payonce.JournalEntry{}, false, fmt.Errorf("%w: sqlitejournal: nil transaction", payonce.ErrInvalidConfig)
	}
	if err := journal.CheckReserveTx(e); err != nil {
		return payonce.JournalEntry{}, false, err
	}
	if err := j.file.check(); err != nil {
		return payonce.JournalEntry{}, false, err
	}
	return j.reserve(ctx, tx, e)
}

func (j *Journal) reserve(ctx context.Context, q queryer, e payonce.JournalEntry) (payonce.JournalEntry, bool, error) {
	now := journal.StoredTime(j.now())
	e = journal.NormalizeReserve(e, now)
	var until int64
	if e.LeaseOwner != "" {
		until = micro(now.Add(corekit.ReserveLease(e.Lease)))
	}
	res, err := q.ExecContext(ctx, `INSERT INTO payonce_journal (`+columns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '', ?, '')
		ON CONFLICT (scope, reference) DO NOTHING`,
		e.Scope, e.Reference, e.Operation, e.Method, e.Path, e.Key, micro(e.KeyCreated), e.Fingerprint, string(e.State), e.Result,
		e.StatusCode, e.RequestID, e.Replayed, e.ErrorKind, e.ErrorCode, e.ErrorMessage, e.Attempts, e.LastCause,
		micro(e.CreatedAt), micro(e.UpdatedAt), e.LeaseOwner, until, e.Fence, e.Sent, e.Summary)
	if err != nil {
		return payonce.JournalEntry{}, false, fmt.Errorf("sqlitejournal: reserve: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return payonce.JournalEntry{}, false, fmt.Errorf("sqlitejournal: reserve: %w", err)
	}
	if n == 1 {
		return inserted(e, until), true, nil
	}
	got, err := get(ctx, q, e.Scope, e.Reference)
	if err != nil {
		return payonce.JournalEntry{}, false, err
	}
	return got, false, nil
}

// inserted is the entry as the row reserve inserted from the normalized
// e and the lease end until holds it, the values scanAll would read
// back: no read follows the INSERT.
func inserted(e payonce.JournalEntry, until int64) payonce.JournalEntry {
	e.KeyCreated, e.CreatedAt, e.UpdatedAt = fromMicro(micro(e.KeyCreated)), fromMicro(micro(e.CreatedAt)), fromMicro(micro(e.UpdatedAt))
	e.LeaseUntil, e.SettleReason, e.Lease = fromMicro(until), "", 0
	if len(e.Result) == 0 {
		e.Result = nil // an empty BLOB reads back as NULL
	} else {
		e.Result = bytes.Clone(e.Result)
	}
	return e
}

// Update records an outcome under the precedence and fence rules of
// payonce.Journal, stated in the UPDATE itself: a success lands on any
// entry not succeeded, every other write only on a pending entry whose
// fence is the writer's.
func (j *Journal) Update(ctx context.Context, e payonce.JournalEntry) error {
	if err := journal.CheckState(e.State); err != nil {
		return err
	}
	upd := journal.StoredTime(e.UpdatedAt)
	if upd.IsZero() {
		upd = journal.StoredTime(j.now())
	}
	return j.commitWrite(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := j.prepared(tx).ExecContext(ctx, `UPDATE payonce_journal SET state = ?, result = ?, status_code = ?, request_id = ?, replayed = ?,
			error_kind = ?, error_code = ?, error_message = ?, attempts = MAX(attempts, ?), last_cause = ?, settle_reason = ?,
			updated_at = ?, lease_owner = '', lease_until = 0, resource_id = ?
			WHERE scope = ? AND reference = ? AND state <> 'succeeded' AND (? = 'succeeded' OR (state = 'pending' AND fence = ?))`,
			string(e.State), e.Result, e.StatusCode, e.RequestID, e.Replayed, e.ErrorKind, e.ErrorCode, e.ErrorMessage,
			e.Attempts, e.LastCause, e.SettleReason, micro(upd), e.ResourceID, e.Scope, e.Reference, string(e.State), e.Fence)
		if err != nil {
			return fmt.Errorf("sqlitejournal: update: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil || n == 1 {
			if err != nil {
				return fmt.Errorf("sqlitejournal: update: %w", err)
			}
			return nil
		}
		old, err := get(ctx, j.prepared(tx), e.Scope, e.Reference)
		if err != nil {
			return err
		}
		return refused(journal.CheckUpdate(old, e), "update", e.Reference)
	})
}

// refused is the error of a guarded write that changed nothing: the rule
// the stored row broke, as the shared check names it.
func refused(rule error, op, ref string) error {
	if rule == nil {
		return fmt.Errorf("sqlitejournal: %s %q changed nothing", op, ref)
	}
	return fmt.Errorf("sqlitejournal: %w", rule)
}

// Take gives a pending entry to the run r.LeaseOwner (payonce.Journal.Take):
// one guarded UPDATE raises the fence, leases the entry and binds the
// fingerprint to an entry reserved without one.
func (j *Journal) Take(ctx context.Context, r payonce.JournalEntry) (payonce.JournalEntry, error) {
	if err := journal.CheckTake(r); err != nil {
		return payonce.JournalEntry{}, err
	}
	var out payonce.JournalEntry
	err := j.commitWrite(ctx, func(ctx context.Context, tx *sql.Tx) error {
		now := journal.StoredTime(j.now())
		res, err := j.prepared(tx).ExecContext(ctx, `UPDATE payonce_journal SET fence = fence + 1, lease_owner = ?, lease_until = ?, updated_at = ?,
			fingerprint = CASE WHEN fingerprint = '' THEN ? ELSE fingerprint END
			WHERE scope = ? AND reference = ? AND state = 'pending'
			AND (? = '' OR fingerprint = '' OR fingerprint = ?)
			AND (lease_owner = '' OR lease_owner = ? OR lease_until <= ?)`,
			r.LeaseOwner, micro(now.Add(r.Lease)), micro(now), r.Fingerprint, r.Scope, r.Reference, r.Fingerprint, r.Fingerprint, r.LeaseOwner, micro(now))
		if err != nil {
			return fmt.Errorf("sqlitejournal: take: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("sqlitejournal: take: %w", err)
		}
		if out, err = get(ctx, j.prepared(tx), r.Scope, r.Reference); err != nil {
			return err
		}
		if n == 1 {
			return nil
		}
		return refused(journal.TakeRefusal(out, r, now), "take", r.Reference)
	})
	return out, err
}

// BeginAttempt checks and records, before an attempt is sent, that the
// run's fence is current (payonce.Journal.BeginAttempt), in one guarded
// UPDATE committed through the group commit.
func (j *Journal) BeginAttempt(ctx context.Context, r payonce.JournalEntry) (payonce.JournalEntry, error) {
	if err := journal.CheckAttempt(r); err != nil {
		return payonce.JournalEntry{}, err
	}
	var out payonce.JournalEntry
	err := j.commitWrite(ctx, func(ctx context.Context, tx *sql.Tx) error {
		now := journal.StoredTime(j.now())
		res, err := j.prepared(tx).ExecContext(ctx, `UPDATE payonce_journal SET sent = 1, attempts = attempts + 1, lease_owner = ?, lease_until = ?, updated_at = ?
			WHERE scope = ? AND reference = ? AND state = 'pending' AND fence = ?`,
			r.LeaseOwner, micro(now.Add(r.Lease)), micro(now), r.Scope, r.Reference, r.Fence)
		if err != nil {
			return fmt.Errorf("sqlitejournal: attempt: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("sqlitejournal: attempt: %w", err)
		}
		if out, err = get(ctx, j.prepared(tx), r.Scope, r.Reference); err != nil {
			return err
		}
		if n == 1 {
			return nil
		}
		return refused(journal.AttemptRefusal(out, r), "attempt", r.Reference)
	})
	return out, err
}

// Now returns the zero time: SQLite has no clock of its own, so leases and
// key ages are measured with the machine's clock (one machine's processes
// share it).
func (j *Journal) Now(ctx context.Context) (time.Time, error) {
	return time.Time{}, ctx.Err()
}

// Get returns the entry of (scope, reference).
func (j *Journal) Get(ctx context.Context, scope, reference string) (payonce.JournalEntry, error) {
	return get(ctx, &j.stmts, scope, reference)
}

func get(ctx context.Context, q interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}, scope, reference string) (payonce.JournalEntry, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+columns+` FROM payonce_journal WHERE scope = ? AND reference = ?`, scope, reference)
	if err != nil {
		return payonce.JournalEntry{}, fmt.Errorf("sqlitejournal: get: %w", err)
	}
	es, err := scanAll(rows)
	if err != nil {
		return payonce.JournalEntry{}, err
	}
	if len(es) == 0 {
		return payonce.JournalEntry{}, fmt.Errorf("sqlitejournal: get %q: %w", reference, journal.ErrNotFound)
	}
	return es[0], nil
}

// Pending lists pending entries, oldest first.
func (j *Journal) Pending(ctx context.Context, q journal.PendingQuery) ([]payonce.JournalEntry, error) {
	before := int64(0)
	if !q.Before.IsZero() {
		before = micro(journal.StoredTime(q.Before))
	}
	rows, err := j.db.QueryContext(ctx, `SELECT `+columns+` FROM payonce_journal
		WHERE state = 'pending' AND (? = '' OR scope = ?) AND (? = 0 OR updated_at < ?)
		ORDER BY created_at, scope, reference LIMIT ?`,
		q.Scope, q.Scope, before, before, limit(q.Limit))
	if err != nil {
		return nil, fmt.Errorf("sqlitejournal: pending: %w", err)
	}
	return scanAll(rows)
}

// Claim leases free or expired pending entries to c.Owner until now plus
// c.Lease. The write lock makes concurrent claims, in any process, see
// each other: an entry is leased to one owner at a time.
func (j *Journal) Claim(ctx context.Context, c journal.ClaimRequest) ([]payonce.JournalEntry, error) {
	if err := journal.CheckClaim(c.Owner, c.Lease); err != nil {
		return nil, err
	}
	var out []payonce.JournalEntry
	err := j.inTx(ctx, func(tx *sql.Tx) error {
		now := journal.StoredTime(j.now())
		rows, err := tx.QueryContext(ctx, `SELECT `+columns+` FROM payonce_journal
			WHERE state = 'pending' AND (? = '' OR scope = ?) AND (lease_owner = '' OR lease_until <= ?)
			ORDER BY created_at, scope, reference LIMIT ?`, c.Scope, c.Scope, micro(now), limit(c.Limit))
		if err != nil {
			return fmt.Errorf("sqlitejournal: claim: %w", err)
		}
		es, err := scanAll(rows)
		if err != nil {
			return err
		}
		until := now.Add(c.Lease)
		for i := range es {
			if _, err := tx.ExecContext(ctx, `UPDATE payonce_journal SET lease_owner = ?, lease_until = ?, fence = fence + 1 WHERE scope = ? AND reference = ?`,
				c.Owner, micro(until), es[i].Scope, es[i].Reference); err != nil {
				return fmt.Errorf("sqlitejournal: claim: %w", err)
			}
			es[i].LeaseOwner, es[i].LeaseUntil = c.Owner, until
			es[i].Fence++
		}
		out = es
		return nil
	})
	return out, err
}

// Purge deletes settled entries last updated before settledBefore.
func (j *Journal) Purge(ctx context.Context, settledBefore time.Time) (int64, error) {
	if err := j.file.check(); err != nil {
		return 0, err
	}
	res, err := j.db.ExecContext(ctx, `DELETE FROM payonce_journal WHERE state IN ('succeeded', 'failed') AND updated_at < ?`,
		micro(journal.StoredTime(settledBefore)))
	if err != nil {
		return 0, fmt.Errorf("sqlitejournal: purge: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("sqlitejournal: purge: %w", err)
	}
	return n, nil
}

// inTx runs fn in a write transaction (BEGIN IMMEDIATE).
func (j *Journal) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := j.begin(ctx)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return j.commit(tx)
}

func scanAll(rows *sql.Rows) ([]payonce.JournalEntry, error) {
	defer func() { _ = rows.Close() }()
	var out []payonce.JournalEntry
	for rows.Next() {
		var e payonce.JournalEntry
		var state string
		var keyCreated, created, updated, leaseUntil int64
		if err := rows.Scan(&e.Scope, &e.Reference, &e.Operation, &e.Method, &e.Path, &e.Key, &keyCreated, &e.Fingerprint, &state, &e.Result,
			&e.StatusCode, &e.RequestID, &e.Replayed, &e.ErrorKind, &e.ErrorCode, &e.ErrorMessage, &e.Attempts, &e.LastCause,
			&created, &updated, &e.LeaseOwner, &leaseUntil, &e.Fence, &e.Sent, &e.SettleReason, &e.Summary, &e.ResourceID); err != nil {
			return nil, fmt.Errorf("sqlitejournal: scan: %w", err)
		}
		e.State = payonce.JournalState(state)
		e.KeyCreated, e.CreatedAt, e.UpdatedAt, e.LeaseUntil = fromMicro(keyCreated), fromMicro(created), fromMicro(updated), fromMicro(leaseUntil)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlitejournal: scan: %w", err)
	}
	return out, nil
}

func micro(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMicro()
}

func fromMicro(us int64) time.Time {
	if us == 0 {
		return time.Time{}
	}
	return time.UnixMicro(us).UTC()
}

func limit(n int) int {
	if n <= 0 {
		return -1 // SQLite: no limit
	}
	return n
}
