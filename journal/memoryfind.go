package journal

import (
	"context"

	"github.com/payonce/payonce"
)

var _ payonce.JournalFinder = (*Memory)(nil)

// Holders returns the entries of scope holding resourceID as their
// outcome (payonce.JournalFinder).
func (m *Memory) Holders(ctx context.Context, scope, resourceID string) ([]payonce.JournalEntry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := CheckHolders(scope, resourceID); err != nil {
		return nil, err
	}
	return m.find(func(e *payonce.JournalEntry) bool { return e.Scope == scope && e.ResourceID == resourceID }, 0), nil
}

// LookAlikes returns the entries of q.Scope recording q.Operation that
// could have sent in [q.From, q.To] (payonce.JournalFinder).
func (m *Memory) LookAlikes(ctx context.Context, q payonce.LookAlikeQuery) ([]payonce.JournalEntry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	q, err := CheckLookAlikes(q)
	if err != nil {
		return nil, err
	}
	return m.find(func(e *payonce.JournalEntry) bool { return lookAlike(*e, q) }, q.Limit), nil
}

// find returns the entries keep selects, oldest first, at most limit (0:
// all).
func (m *Memory) find(keep func(*payonce.JournalEntry) bool, limit int) []payonce.JournalEntry {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []payonce.JournalEntry
	for _, e := range m.entries {
		if keep(e) {
			out = append(out, clone(*e))
		}
	}
	SortEntries(out)
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out
}
