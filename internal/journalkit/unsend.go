package journalkit

import (
	"fmt"

	"github.com/payonce/payonce"
)

// CheckUnsend validates an Unsend (payonce.JournalUnsender): it records
// a pending outcome.
func CheckUnsend(e payonce.JournalEntry) error {
	if e.State != payonce.JournalPending {
		return fmt.Errorf("%w: unsend records a pending outcome, not %q", ErrInvalidEntry, e.State)
	}
	return nil
}
