package journal_test

import (
	"testing"

	"github.com/payonce/payonce/journal"
	"github.com/payonce/payonce/journal/journaltest"
)

func TestMemoryInboxConformance(t *testing.T) {
	journaltest.RunInbox(t, func(t *testing.T) journal.InboxStore { return journal.NewMemory() })
}
