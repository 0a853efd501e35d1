package journal

import (
	"context"
	"time"

	"github.com/payonce/payonce"
)

// InboxStore is a payonce.Inbox an operator can also purge: every
// backend (NewMemory, sqlitejournal, pgjournal) is one, and the inbox's
// conformance suite (journaltest.RunInbox) runs on it.
type InboxStore interface {
	payonce.Inbox
	// PurgeEvents deletes handled events handled before handledBefore and
	// returns how many it deleted. Unhandled events are never purged.
	PurgeEvents(ctx context.Context, handledBefore time.Time) (int64, error)
}
