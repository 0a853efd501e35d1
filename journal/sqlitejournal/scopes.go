package sqlitejournal

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/journal"
)

// Journal carries entries an earlier payonce wrote into today's forms.
var _ payonce.JournalUpgrader = (*Journal)(nil)

// Scopes counts the entries of every scope, or of only those given: with
// scopes given, by the primary key's prefix.
func (j *Journal) Scopes(ctx context.Context, only ...string) ([]payonce.ScopeCount, error) {
	q := `SELECT scope, SUM(state = 'pending'), SUM(state <> 'pending') FROM payonce_journal`
	args := make([]any, len(only))
	if len(only) > 0 {
		q += ` WHERE scope IN (?` + strings.Repeat(`, ?`, len(only)-1) + `)`
		for i, s := range only {
			args[i] = s
		}
	}
	rows, err := j.db.QueryContext(ctx, q+` GROUP BY scope ORDER BY scope`, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlitejournal: scopes: %w", err)
	}
	defer func() { _ = rows.Close() }()
	var out []payonce.ScopeCount
	for rows.Next() {
		var n payonce.ScopeCount
		if err := rows.Scan(&n.Scope, &n.Pending, &n.Settled); err != nil {
			return nil, fmt.Errorf("sqlitejournal: scopes: %w", err)
		}
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlitejournal: scopes: %w", err)
	}
	return out, nil
}

// MoveScope moves every entry of from into to in one write transaction,
// or none. An entry of to never sent gives way to from's entry of its
// reference (journal.GiveWayRefusal).
func (j *Journal) MoveScope(ctx context.Context, from, to string) (int64, error) {
	if err := journal.CheckMoveScope(from, to); err != nil {
		return 0, err
	}
	var n int64
	err := j.inTx(ctx, func(tx *sql.Tx) error {
		now := journal.StoredTime(j.now())
		rows, err := tx.QueryContext(ctx, `SELECT `+columns+` FROM payonce_journal
			WHERE scope = ? AND reference IN (SELECT reference FROM payonce_journal WHERE scope = ?) ORDER BY reference`, to, from)
		if err != nil {
			return fmt.Errorf("sqlitejournal: move scope: %w", err)
		}
		both, err := scanAll(rows)
		if err != nil {
			return fmt.Errorf("sqlitejournal: move scope: %w", err)
		}
		for _, d := range both {
			if err := journal.GiveWayRefusal(d, now, from, to); err != nil {
				return err
			}
		}
		var ref string
		err = tx.QueryRowContext(ctx, `SELECT reference FROM payonce_journal
			WHERE scope = ? AND state = 'pending' AND lease_owner <> '' AND lease_until > ? ORDER BY reference LIMIT 1`,
			from, micro(now)).Scan(&ref)
		switch {
		case err == nil:
			return journal.LeasedError(from, ref)
		case !errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("sqlitejournal: move scope: %w", err)
		}
		for _, d := range both {
			if _, err := tx.ExecContext(ctx, `DELETE FROM payonce_journal WHERE scope = ? AND reference = ?`, to, d.Reference); err != nil {
				return fmt.Errorf("sqlitejournal: move scope: %w", err)
			}
			if _, err := tx.ExecContext(ctx, `UPDATE payonce_journal SET fence = MAX(fence, ?) WHERE scope = ? AND reference = ?`,
				journal.MovedFence(0, d.Fence), from, d.Reference); err != nil {
				return fmt.Errorf("sqlitejournal: move scope: %w", err)
			}
		}
		res, err := tx.ExecContext(ctx, `UPDATE payonce_journal SET scope = ? WHERE scope = ?`, to, from)
		if err != nil {
			return fmt.Errorf("sqlitejournal: move scope: %w", err)
		}
		n, err = res.RowsAffected()
		if err != nil {
			return fmt.Errorf("sqlitejournal: move scope: %w", err)
		}
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
	if err := journal.CheckReplaceFingerprint(old, fp); err != nil {
		return false, err
	}
	var replaced bool
	err := j.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE payonce_journal SET fingerprint = ? WHERE scope = ? AND reference = ? AND fingerprint = ?`,
			fp, scope, reference, old)
		if err != nil {
			return fmt.Errorf("sqlitejournal: replace fingerprint: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("sqlitejournal: replace fingerprint: %w", err)
		}
		if replaced = n == 1; replaced {
			return nil
		}
		_, err = get(ctx, tx, scope, reference)
		return err // journal.ErrNotFound, or nil: another fingerprint now
	})
	return replaced, err
}
