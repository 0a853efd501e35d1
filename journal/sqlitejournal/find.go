package sqlitejournal

import (
	"context"
	"fmt"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/journal"
)

var _ payonce.JournalFinder = (*Journal)(nil)

// Holders returns the entries of scope holding resourceID as their
// outcome (payonce.JournalFinder), through the partial index on
// (scope, resource_id).
func (j *Journal) Holders(ctx context.Context, scope, resourceID string) ([]payonce.JournalEntry, error) {
	if err := journal.CheckHolders(scope, resourceID); err != nil {
		return nil, err
	}
	rows, err := j.db.QueryContext(ctx, `SELECT `+columns+` FROM payonce_journal
		WHERE scope = ? AND resource_id = ? AND resource_id <> ''
		ORDER BY created_at, scope, reference`, scope, resourceID)
	if err != nil {
		return nil, fmt.Errorf("sqlitejournal: holders: %w", err)
	}
	return scanAll(rows)
}

// LookAlikes returns the entries of q.Scope recording q.Operation that
// could have sent in [q.From, q.To] (payonce.JournalFinder): pending
// entries by the pending index (reserved in [q.Since, q.To], whenever
// they last changed: an attempt may still be on its way), settled ones
// by the settled index (changed since q.From).
func (j *Journal) LookAlikes(ctx context.Context, q payonce.LookAlikeQuery) ([]payonce.JournalEntry, error) {
	q, err := journal.CheckLookAlikes(q)
	if err != nil {
		return nil, err
	}
	pending := []any{q.Scope, q.Operation, q.Summary, q.Summary, micro(q.To), micro(q.Since)}
	settled := append(append([]any{}, pending...), micro(q.From))
	rows, err := j.db.QueryContext(ctx, lookAlikesSQL, append(append(pending, settled...), limit(q.Limit))...)
	if err != nil {
		return nil, fmt.Errorf("sqlitejournal: look-alikes: %w", err)
	}
	return scanAll(rows)
}

// lookAlikesMatch is what both halves of lookAlikesSQL select by.
const lookAlikesMatch = `scope = ? AND operation = ? AND (? = '' OR summary = ? OR summary = '')
	AND created_at <= ? AND created_at >= ?`

// lookAlikesSQL reads pending entries by the pending index (reserved in
// the range, whenever they last changed: an attempt may still be on its
// way) and settled ones, changed since the span's start, by the settled
// index: named, since without statistics SQLite would rather read the
// scope's whole range of the primary key.
const lookAlikesSQL = `SELECT ` + columns + ` FROM payonce_journal INDEXED BY payonce_journal_pending_created
		WHERE state = 'pending' AND ` + lookAlikesMatch + `
	UNION ALL
	SELECT ` + columns + ` FROM payonce_journal INDEXED BY payonce_journal_settled_updated
		WHERE state IN ('succeeded', 'failed') AND ` + lookAlikesMatch + ` AND updated_at >= ?
	ORDER BY created_at, scope, reference LIMIT ?`
