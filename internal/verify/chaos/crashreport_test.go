package chaos

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/fake/fakeserver"
)

// reconcileCase is a two-reference world: a card charge (order-0) and a
// card issue (order-1), both settled and in the ledger once.
type reconcileCase struct {
	plan    []planItem
	refs    map[string]*refState
	entries map[string]payonce.JournalEntry
	ledger  []fakeserver.Operation
	setup   map[string]bool
	settled map[string]settledEntry
}

func newReconcileCase() *reconcileCase {
	charge := planItem{index: 0, work: workCharge, ref: "order-0/charge"}
	apply := planItem{index: 1, work: workApply, ref: "order-1/apply"}
	amount, _ := payonce.AmountFromMinor(itemAmount(charge))
	return &reconcileCase{
		plan: []planItem{charge, apply},
		refs: map[string]*refState{
			charge.ref: {item: charge, deliveries: 1, settled: true, reports: []doneReport{{ref: charge.ref, status: statusOK, detail: "ch-1", attempts: 1}}},
			apply.ref:  {item: apply, deliveries: 1, settled: true, reports: []doneReport{{ref: apply.ref, status: statusOK, detail: "card-1", attempts: 1}}},
		},
		entries: map[string]payonce.JournalEntry{
			charge.ref: {Reference: charge.ref, Key: "k-charge", State: payonce.JournalSucceeded},
			apply.ref:  {Reference: apply.ref, Key: "k-apply", State: payonce.JournalSucceeded},
		},
		ledger: []fakeserver.Operation{
			{Provider: providerA55, Kind: kindWalletCreate, IdempotencyKey: "k-wallet", ID: "w-1"},
			{Provider: providerA55, Kind: kindChargeCreate, IdempotencyKey: "k-charge", ID: "ch-1", Amount: amount.String()},
			{Provider: providerCoinepay, Kind: kindCardApply, IdempotencyKey: "k-apply", ID: "card-1", Amount: "1.00"},
		},
		setup: map[string]bool{"k-wallet": true},
	}
}

func (c *reconcileCase) run() *CrashReport {
	return reconcileCrash(c.plan, c.refs, c.entries, c.ledger, c.setup, c.settled)
}

func TestReconcileCrashClean(t *testing.T) {
	rep := newReconcileCase().run()
	assert.True(t, rep.Passed(), rep.Problems)
	assert.Equal(t, 2, rep.Succeeded)
	assert.Equal(t, 2, rep.Attempts)
	assert.Empty(t, rep.Problems)
}

func TestReconcileCrashFindsDuplicatesAndLosses(t *testing.T) {
	for _, tt := range []struct {
		name       string
		mutate     func(c *reconcileCase)
		dups, lost int
		problem    string
	}{
		{"same key executed twice", func(c *reconcileCase) {
			c.ledger = append(c.ledger, c.ledger[1])
		}, 1, 0, "duplicate: order-0/charge executed 2 times"},
		{"executed again under another key", func(c *reconcileCase) {
			again := c.ledger[1]
			again.IdempotencyKey, again.ID = "k-new", "ch-2"
			c.ledger = append(c.ledger, again)
		}, 1, 0, "duplicate: order-0/charge executed 2 times"},
		{"issued again under a key no entry has", func(c *reconcileCase) {
			again := c.ledger[2]
			again.IdempotencyKey, again.ID = "k-new", "card-2"
			c.ledger = append(c.ledger, again)
		}, 0, 1, "no reference explains it"},
		{"succeeded but not in the ledger", func(c *reconcileCase) {
			c.ledger = c.ledger[:2]
		}, 0, 0, "misrecorded: order-1/apply succeeded in the journal, missing from the ledger"},
		{"failed but executed", func(c *reconcileCase) {
			e := c.entries["order-0/charge"]
			e.State, e.ErrorKind = payonce.JournalFailed, "card_declined"
			c.entries["order-0/charge"] = e
			c.refs["order-0/charge"].reports[0] = doneReport{ref: "order-0/charge", status: statusFailed, detail: "card_declined"}
		}, 0, 0, "misrecorded: order-0/charge failed in the journal (card_declined), but the ledger executed it"},
		{"told of another resource", func(c *reconcileCase) {
			c.refs["order-1/apply"].reports = append(c.refs["order-1/apply"].reports, doneReport{status: statusJournal, detail: "card-x"})
		}, 0, 1, "workers were told of another resource"},
		{"never settled", func(c *reconcileCase) {
			c.refs["order-1/apply"].settled = false
		}, 0, 1, "lost: order-1/apply never settled"},
		{"no journal entry", func(c *reconcileCase) {
			delete(c.entries, "order-1/apply")
		}, 0, 2, "lost: order-1/apply has no journal entry"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := newReconcileCase()
			tt.mutate(c)
			rep := c.run()
			assert.Equal(t, tt.dups, rep.Duplicates, rep.Problems)
			assert.Equal(t, tt.lost, rep.Lost, rep.Problems)
			assert.False(t, rep.Passed())
			assert.Contains(t, rep.Problems[0], tt.problem)
		})
	}
}

// An entry left pending past the key's window is in doubt, not lost: the
// run settles it against the ledger.
func TestReconcileCrashInDoubt(t *testing.T) {
	c := newReconcileCase()
	for ref, e := range c.entries {
		e.State = payonce.JournalPending
		c.entries[ref] = e
		c.refs[ref].reports = []doneReport{{ref: ref, status: statusUnknown, detail: "-"}}
	}
	c.ledger = c.ledger[:2] // the charge ran before the crash, the card issue did not
	rep := c.run()
	assert.True(t, rep.Passed(), rep.Problems)
	assert.Equal(t, 2, rep.InDoubt)
	assert.Equal(t, 1, rep.InDoubtExecuted)
	assert.Equal(t, 1, rep.InDoubtNotExecuted)

	// Settled through the settle API as the ledger says: the charge ran,
	// the card issue did not.
	ok := c.entries["order-0/charge"]
	ok.State, ok.Result = payonce.JournalSucceeded, []byte(`{"charge_uuid":"ch-1"}`)
	no := c.entries["order-1/apply"]
	no.State, no.ErrorKind = payonce.JournalFailed, payonce.KindName(payonce.ErrNotExecuted)
	c.settled = map[string]settledEntry{"order-0/charge": {entry: ok, how: settledByLookup}, "order-1/apply": {entry: no, how: settledByHand}}
	rep = c.run()
	assert.True(t, rep.Passed(), rep.Problems)
	assert.Equal(t, 2, rep.InDoubtSettled)
	assert.Equal(t, 1, rep.InDoubtLookedUp)
	// A settle that disagrees with the ledger is misrecorded.
	c.settled["order-0/charge"] = settledEntry{entry: no, how: settledByLookup}
	rep = c.run()
	assert.Equal(t, 1, rep.Misrecorded)
	assert.Contains(t, rep.Problems[0], "misrecorded: order-0/charge settled (lookup) as not_executed, but the ledger executed it")
	// One left pending is lost.
	c.settled["order-0/charge"] = settledEntry{entry: c.entries["order-0/charge"], how: settledByLookup}
	assert.Equal(t, 1, c.run().Lost)
	c.settled = nil

	// In doubt, but its client was told it succeeded: the records disagree.
	c.refs["order-0/charge"].reports[0].status = statusOK
	assert.Equal(t, 1, c.run().Lost)
}

func TestCrashReportSentWhenSettledFails(t *testing.T) {
	c := newReconcileCase()
	c.refs["order-0/charge"].sentSettled = true
	rep := c.run()
	assert.Equal(t, 1, rep.SentWhenSettled)
	assert.False(t, rep.Passed())
}

func TestCrashReportWorkerFailureFails(t *testing.T) {
	rep := newReconcileCase().run()
	require.True(t, rep.Passed())
	rep.WorkerFailures = 1
	assert.False(t, rep.Passed(), "a worker that died unplanned fails the run")
}

// The reconciliation must not accept an execution that is not the
// reference's own under the reference's key, nor an execution of a
// reference under a key its journal entry does not hold.
func TestReconcileCrashRefusesAnotherOperationOrKey(t *testing.T) {
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

// Each journal state is checked against how the reference's last
// delivery ended and, for one in doubt, against how the run settled it.
func TestReconcileCrashChecksEndingsAndSettles(t *testing.T) {
	// Succeeded in the journal, but the worker was told it failed.
	c := newReconcileCase()
	c.refs["order-0/charge"].reports = []doneReport{{ref: "order-0/charge", status: statusFailed, detail: "declined"}}
	rep := c.run()
	assert.Equal(t, 1, rep.Lost, rep.Problems)
	require.Len(t, rep.Problems, 1)
	assert.Equal(t, "lost: order-0/charge succeeded, but its last delivery ended failed", rep.Problems[0])

	// Failed in the journal, not executed, but the worker was told it succeeded.
	c = newReconcileCase()
	c.entries["order-1/apply"] = payonce.JournalEntry{Reference: "order-1/apply", Key: "k-apply", State: payonce.JournalFailed, ErrorKind: "declined"}
	c.ledger = c.ledger[:2]
	rep = c.run()
	assert.Equal(t, 1, rep.Lost, rep.Problems)
	assert.Equal(t, 0, rep.Misrecorded, rep.Problems)
	require.Len(t, rep.Problems, 1)
	assert.Equal(t, "lost: order-1/apply failed with declined, but its last delivery ended ok card-1", rep.Problems[0])

	// In doubt, then settled as succeeded: the card issue never ran, the
	// charge ran with another resource than the settled result names.
	c = newReconcileCase()
	for ref, e := range c.entries {
		e.State = payonce.JournalPending
		c.entries[ref] = e
		c.refs[ref].reports = []doneReport{{ref: ref, status: statusUnknown, detail: "-"}}
	}
	c.ledger = c.ledger[:2]
	charge, apply := c.entries["order-0/charge"], c.entries["order-1/apply"]
	charge.State, charge.Result = payonce.JournalSucceeded, []byte(`{"charge_uuid":"ch-9"}`)
	apply.State = payonce.JournalSucceeded
	c.settled = map[string]settledEntry{"order-0/charge": {entry: charge, how: settledByLookup}, "order-1/apply": {entry: apply, how: settledByHand}}
	rep = c.run()
	assert.Equal(t, 2, rep.Misrecorded, rep.Problems)
	assert.Equal(t, []string{
		"misrecorded: order-0/charge settled (lookup) with another result than the ledger's ch-1",
		"misrecorded: order-1/apply settled (hand) as succeeded, but the ledger never executed it",
	}, rep.Problems)
}
