package sqlitejournal

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/journal"
)

// Unsend records a pending outcome and marks the entry never sent
// (payonce.JournalUnsender), in one guarded UPDATE: only a pending entry
// whose fence is the writer's changes.
func (j *Journal) Unsend(ctx context.Context, e payonce.JournalEntry) error {
	if err := journal.CheckUnsend(e); err != nil {
		return err
	}
	upd := journal.StoredTime(e.UpdatedAt)
	if upd.IsZero() {
		upd = journal.StoredTime(j.now())
	}
	return j.commitWrite(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := j.prepared(tx).ExecContext(ctx, `UPDATE payonce_journal SET result = ?, status_code = ?, request_id = ?, replayed = ?,
			error_kind = ?, error_code = ?, error_message = ?, attempts = 0, sent = 0, last_cause = ?, settle_reason = ?,
			updated_at = ?, lease_owner = '', lease_until = 0
			WHERE scope = ? AND reference = ? AND state = 'pending' AND fence = ?`,
			e.Result, e.StatusCode, e.RequestID, e.Replayed, e.ErrorKind, e.ErrorCode, e.ErrorMessage,
			e.LastCause, e.SettleReason, micro(upd), e.Scope, e.Reference, e.Fence)
		if err != nil {
			return fmt.Errorf("sqlitejournal: unsend: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil || n == 1 {
			if err != nil {
				return fmt.Errorf("sqlitejournal: unsend: %w", err)
			}
			return nil
		}
		old, err := get(ctx, j.prepared(tx), e.Scope, e.Reference)
		if err != nil {
			return err
		}
		return refused(journal.CheckUpdate(old, e), "unsend", e.Reference)
	})
}

var _ payonce.JournalUnsender = (*Journal)(nil)
