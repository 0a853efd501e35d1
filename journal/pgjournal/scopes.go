package pgjournal

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/payonce/payonce"
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
// meanwhile, then to's entries of their references, each of which gives
// way to from's if it was never sent (journal.GiveWayRefusal).
func (j *Journal) MoveScope(ctx context.Context, from, to string) (int64, error) {
	if err := journal.CheckMoveScope(from, to); err != nil {
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
			return journal.LeasedError(from, leased)
		case !errors.Is(err, pgx.ErrNoRows):
			return fmt.Errorf("pgjournal: move scope: %w", err)
		}
		if err := j.giveWay(ctx, tx, from, to); err != nil {
			return err
		}
		// The UPDATE's snapshot is newer than the lock's: an entry
		// reserved under from meanwhile (a run of an earlier payonce) is
		// moved too, so every moved row is checked again here, locked.
		rows, err := tx.Query(ctx, j.sql(`UPDATE $T SET scope = $2 WHERE scope = $1
			RETURNING reference, COALESCE(state = 'pending' AND lease_owner <> '' AND lease_until > now(), false)`), from, to)
		if err != nil {
			return fmt.Errorf("pgjournal: move scope: %w", err)
		}
		leased = ""
		n = 0
		for rows.Next() {
			var ref string
			var live bool
			if err := rows.Scan(&ref, &live); err != nil {
				rows.Close()
				return fmt.Errorf("pgjournal: move scope: %w", err)
			}
			if live && (leased == "" || ref < leased) {
				leased = ref
			}
			n++
		}
		rows.Close()
		var pgErr *pgconn.PgError
		switch err := rows.Err(); {
		case errors.As(err, &pgErr) && pgErr.Code == "23505": // a reference reserved under to meanwhile
			return fmt.Errorf("%w: %q and %q both hold a reference", journal.ErrScopeCollision, from, to)
		case err != nil:
			return fmt.Errorf("pgjournal: move scope: %w", err)
		case leased != "":
			return journal.LeasedError(from, leased)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// giveWay deletes, in tx, to's entries of from's references, each of
// which must give way (journal.GiveWayRefusal), locked, and raises the
// fence of from's entry of each above the one it replaces.
func (j *Journal) giveWay(ctx context.Context, tx pgx.Tx, from, to string) error {
	rows, err := tx.Query(ctx, j.sql(`SELECT `+columns+` FROM $T WHERE scope = $2 AND reference IN (SELECT reference FROM $T WHERE scope = $1)
		ORDER BY reference COLLATE "C" FOR UPDATE`), from, to)
	if err != nil {
		return fmt.Errorf("pgjournal: move scope: %w", err)
	}
	both, err := scanAll(rows)
	if err != nil || len(both) == 0 {
		return err
	}
	var now time.Time
	if err := tx.QueryRow(ctx, `SELECT now()`).Scan(&now); err != nil {
		return fmt.Errorf("pgjournal: move scope: %w", err)
	}
	refs, fences := make([]string, len(both)), make([]int64, len(both))
	for i, d := range both {
		if err := journal.GiveWayRefusal(d, now.UTC(), from, to); err != nil {
			return err
		}
		refs[i], fences[i] = d.Reference, journal.MovedFence(0, d.Fence)
	}
	if _, err := tx.Exec(ctx, j.sql(`DELETE FROM $T WHERE scope = $1 AND reference = ANY($2::text[])`), to, refs); err != nil {
		return fmt.Errorf("pgjournal: move scope: %w", err)
	}
	if _, err := tx.Exec(ctx, j.sql(`UPDATE $T t SET fence = GREATEST(t.fence, r.fence) FROM unnest($2::text[], $3::bigint[]) AS r(reference, fence)
		WHERE t.scope = $1 AND t.reference = r.reference`), from, refs, fences); err != nil {
		return fmt.Errorf("pgjournal: move scope: %w", err)
	}
	return nil
}

// ReplaceFingerprint sets the fingerprint of (scope, reference) to fp when
// it is old.
func (j *Journal) ReplaceFingerprint(ctx context.Context, scope, reference, old, fp string) (bool, error) {
	if err := journal.CheckReplaceFingerprint(old, fp); err != nil {
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
