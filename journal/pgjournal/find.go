package pgjournal

import (
	"context"
	"fmt"
	"time"

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
	rows, err := j.pool.Query(ctx, j.sql(`SELECT `+columns+` FROM $T
		WHERE scope = $1 AND resource_id = $2 AND resource_id <> ''
		ORDER BY created_at, scope, reference`), scope, resourceID)
	if err != nil {
		return nil, fmt.Errorf("pgjournal: holders: %w", err)
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
	var since *time.Time
	if !q.Since.IsZero() {
		since = &q.Since
	}
	const match = ` AND scope = $1 AND operation = $2 AND ($3 = '' OR summary = $3 OR summary = '')
		AND created_at <= $4 AND ($6::timestamptz IS NULL OR created_at >= $6)`
	rows, err := j.pool.Query(ctx, j.sql(`SELECT `+columns+` FROM $T WHERE state = 'pending'`+match+`
		UNION ALL
		SELECT `+columns+` FROM $T WHERE state <> 'pending' AND updated_at >= $5`+match+`
		ORDER BY created_at, scope, reference LIMIT $7`), q.Scope, q.Operation, q.Summary, q.To, q.From, since, limit(q.Limit))
	if err != nil {
		return nil, fmt.Errorf("pgjournal: look-alikes: %w", err)
	}
	return scanAll(rows)
}
