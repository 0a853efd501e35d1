package pgjournal

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/journalkit"
	"github.com/payonce/payonce/journal"
)

// Journal carries entries an earlier payonce wrote into today's forms.
var _ payonce.JournalUpgrader = (*Journal)(nil)

// Scopes counts the entries of every scope, or of only those given: with
// scopes given, by the primary key's prefix.
func (j *Journal) Scopes(ctx context.Context, only ...string) ([]payonce.ScopeCount, error) {
	var rows pgx.Rows
	var err error
	if len(only) == 0 {
		rows, err = j.pool.Query(ctx, j.sql(`SELECT scope, count(*) FILTER (WHERE state = 'pending'), count(*) FILTER (WHERE state <> 'pending')
			FROM $T GROUP BY scope ORDER BY scope COLLATE "C"`))
	} else {
		// One index probe per scope asked for, whatever plan a
		// prepared statement gets: a client asks at its first use.
		rows, err = j.pool.Query(ctx, j.sql(`SELECT s.scope, c.pending, c.settled FROM (SELECT DISTINCT unnest($1::text[]) AS scope) s
			CROSS JOIN LATERAL (SELECT count(*) FILTER (WHERE t.state = 'pending') AS pending, count(*) FILTER (WHERE t.state <> 'pending') AS settled
				FROM $T t WHERE t.scope = s.scope) c
			WHERE c.pending + c.settled > 0 ORDER BY s.scope COLLATE "C"`), only)
	}
	if err != nil {
		return nil, fmt.Errorf("pgjournal: scopes: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (payonce.ScopeCount, error) {
		var n payonce.ScopeCount
		err := r.Scan(&n.Scope, &n.Pending, &n.Settled)
		return n, err
	})
	if err != nil {
		return nil, fmt.Errorf("pgjournal: scopes: %w", err)
	}
	return out, nil
}

// MoveScope moves every entry of from into to in one transaction, or
// none: from's entries are locked first, so no run takes or settles one
// meanwhile.
func (j *Journal) MoveScope(ctx context.Context, from, to string) (int64, error) {
	if err := journalkit.CheckMoveScope(from, to); err != nil {
		return 0, err
	}
	var n int64
	err := pgx.BeginFunc(ctx, j.pool, func(tx pgx.Tx) error {
		var leased string
		err := tx.QueryRow(ctx, j.sql(`WITH locked AS (SELECT reference, state, lease_owner, lease_until FROM $T WHERE scope = $1 FOR UPDATE)
			SELECT reference FROM locked WHERE state = 'pending' AND lease_owner <> '' AND lease_until > now()
			ORDER BY reference COLLATE "C" LIMIT 1`), from).Scan(&leased)
		switch {
		case err == nil:
			return journalkit.LeasedError(from, leased)
		case !errors.Is(err, pgx.ErrNoRows):
			return fmt.Errorf("pgjournal: move scope: %w", err)
		}
		var ref string
		err = tx.QueryRow(ctx, j.sql(`SELECT a.reference FROM $T a JOIN $T b ON b.scope = $2 AND b.reference = a.reference
			WHERE a.scope = $1 ORDER BY a.reference COLLATE "C" LIMIT 1`), from, to).Scan(&ref)
		switch {
		case err == nil:
			return journalkit.CollisionError(from, to, ref)
		case !errors.Is(err, pgx.ErrNoRows):
			return fmt.Errorf("pgjournal: move scope: %w", err)
		}
		tag, err := tx.Exec(ctx, j.sql(`UPDATE $T SET scope = $2 WHERE scope = $1`), from, to)
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "23505" { // a reference reserved under to meanwhile
			return fmt.Errorf("%w: %q and %q both hold a reference", journal.ErrScopeCollision, from, to)
		}
		if err != nil {
			return fmt.Errorf("pgjournal: move scope: %w", err)
		}
		n = tag.RowsAffected()
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// ReplaceFingerprint sets the fingerprint of (scope, reference) to fp when
// it is old.
func (j *Journal) ReplaceFingerprint(ctx context.Context, scope, reference, old, fp string) (bool, error) {
	if err := journalkit.CheckReplaceFingerprint(old, fp); err != nil {
		return false, err
	}
	var replaced, found bool
	err := j.pool.QueryRow(ctx, j.sql(`WITH u AS (UPDATE $T SET fingerprint = $4 WHERE scope = $1 AND reference = $2 AND fingerprint = $3 RETURNING 1)
		SELECT EXISTS (SELECT 1 FROM u), EXISTS (SELECT 1 FROM $T WHERE scope = $1 AND reference = $2)`),
		scope, reference, old, fp).Scan(&replaced, &found)
	switch {
	case err != nil:
		return false, fmt.Errorf("pgjournal: replace fingerprint: %w", err)
	case !found:
		return false, fmt.Errorf("pgjournal: replace fingerprint %q: %w", reference, journal.ErrNotFound)
	}
	return replaced, nil
}
