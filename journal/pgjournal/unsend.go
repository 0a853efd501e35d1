package pgjournal

import (
	"context"
	"fmt"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/journal"
)

// unsendSQL records a pending outcome and marks the entry never sent:
// only a pending entry whose fence is the writer's ($12) changes.
const unsendSQL = `UPDATE $T SET result = $3, status_code = $4, request_id = $5, replayed = $6,
	error_kind = $7, error_code = $8, error_message = $9, attempts = 0, sent = false, last_cause = $10,
	settle_reason = $11, updated_at = COALESCE($13, now()), lease_owner = '', lease_until = NULL
	WHERE scope = $1 AND reference = $2 AND state = 'pending' AND fence = $12`

// Unsend records a pending outcome and marks the entry never sent
// (payonce.JournalUnsender), in one guarded UPDATE.
func (j *Journal) Unsend(ctx context.Context, e payonce.JournalEntry) error {
	if err := journal.CheckUnsend(e); err != nil {
		return err
	}
	e.UpdatedAt = journal.StoredTime(e.UpdatedAt)
	tag, err := j.pool.Exec(ctx, j.sql(unsendSQL), e.Scope, e.Reference, e.Result, e.StatusCode, e.RequestID, e.Replayed,
		e.ErrorKind, e.ErrorCode, e.ErrorMessage, e.LastCause, e.SettleReason, e.Fence, optTime(e.UpdatedAt))
	if err != nil {
		return fmt.Errorf("pgjournal: unsend: %w", err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	rows, err := j.pool.Query(ctx, j.sql(rowSQL), e.Scope, e.Reference)
	if err != nil {
		return fmt.Errorf("pgjournal: unsend: %w", err)
	}
	old, _, err := scanRowNow(rows)
	var rule error
	if err == nil {
		rule = journal.CheckUpdate(old, e)
	}
	return refusedWrite("unsend", e.Reference, err, rule)
}

var _ payonce.JournalUnsender = (*Journal)(nil)
