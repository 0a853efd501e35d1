package journal

import (
	"context"

	"github.com/payonce/payonce"
)

// Unsend records a pending outcome and marks the entry never sent
// (payonce.JournalUnsender), in one step under the lock.
func (m *Memory) Unsend(ctx context.Context, e payonce.JournalEntry) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := CheckUnsend(e); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.updateLocked(e); err != nil {
		return err
	}
	old := m.entries[entryID{e.Scope, e.Reference}]
	old.Sent, old.Attempts = false, 0
	return nil
}

var _ payonce.JournalUnsender = (*Memory)(nil)
