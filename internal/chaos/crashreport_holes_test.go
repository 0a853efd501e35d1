package chaos

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/payonce/payonce"
)

// The reconciliation must not accept an execution that is not the
// reference's own under the reference's key, nor an execution of a
// reference under a key its journal entry does not hold.
func TestReconcileCrashHoles(t *testing.T) {
	for _, tt := range []struct {
		name    string
		mutate  func(c *reconcileCase)
		problem string
	}{
		{"succeeded, but its key executed another amount", func(c *reconcileCase) {
			c.ledger[1].Amount = "99.99"
		}, "misrecorded: order-0/charge succeeded in the journal, but the ledger executed another operation under its key"},
		{"succeeded, but its key executed another kind", func(c *reconcileCase) {
			c.ledger[2].Kind = kindCardRecharge
		}, "misrecorded: order-1/apply succeeded in the journal, but the ledger executed another operation under its key"},
		{"in doubt, executed once under a key the journal does not hold", func(c *reconcileCase) {
			c.inDoubt("order-0/charge")
			c.ledger[1].IdempotencyKey = "k-fresh" // the journal's key never executed, a fresh one did
		}, "lost: order-0/charge executed under a key its journal entry does not hold"},
		{"in doubt, its key executed another amount", func(c *reconcileCase) {
			c.inDoubt("order-0/charge")
			c.ledger[1].Amount = "99.99"
		}, "lost: order-0/charge: the ledger executed another operation under its key"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := newReconcileCase()
			tt.mutate(c)
			rep := c.run()
			assert.False(t, rep.Passed(), "the reconciliation accepted it: %v", rep.Problems)
			assert.Positive(t, rep.Lost+rep.Duplicates+rep.Misrecorded)
			found := false
			for _, p := range rep.Problems {
				if strings.Contains(p, tt.problem) {
					found = true
				}
			}
			assert.True(t, found, "want %q in %v", tt.problem, rep.Problems)
		})
	}
}

// inDoubt leaves ref's entry pending, its delivery answered
// ErrOutcomeUnknown.
func (c *reconcileCase) inDoubt(ref string) {
	e := c.entries[ref]
	e.State = payonce.JournalPending
	c.entries[ref] = e
	c.refs[ref].reports = []doneReport{{ref: ref, status: statusUnknown, detail: "-"}}
}
