package simcheck

import (
	"fmt"

	"github.com/payonce/payonce"
)

// entryExtra is the part of an entry's state the journal's fences add.
func entryExtra(_ *world, e payonce.JournalEntry) string {
	return fmt.Sprintf(" fence=%d sent=%t settle=%s", e.Fence, e.Sent, e.SettleReason)
}
