package sqlitejournal

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/journalkit"
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
// or none.
func (j *Journal) MoveScope(ctx context.Context, from, to string) (int64, error) {
	if err := journalkit.CheckMoveScope(from, to); err != nil {
		return 0, err
	}
	var n int64
	err := j.inTx(ctx, func(tx *sql.Tx) error {
		var ref string
		err := tx.QueryRowContext(ctx, `SELECT a.reference FROM payonce_journal a JOIN payonce_journal b ON b.scope = ? AND b.reference = a.reference
			WHERE a.scope = ? ORDER BY a.reference LIMIT 1`, to, from).Scan(&ref)
		switch {
		case err == nil:
			return journalkit.CollisionError(from, to, ref)
		case !errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("sqlitejournal: move scope: %w", err)
		}
		err = tx.QueryRowContext(ctx, `SELECT reference FROM payonce_journal
			WHERE scope = ? AND state = 'pending' AND lease_owner <> '' AND lease_until > ? ORDER BY reference LIMIT 1`,
			from, micro(journalkit.Time(j.now()))).Scan(&ref)
		switch {
		case err == nil:
			return journalkit.LeasedError(from, ref)
		case !errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("sqlitejournal: move scope: %w", err)
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
	if err := journalkit.CheckReplaceFingerprint(old, fp); err != nil {
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
