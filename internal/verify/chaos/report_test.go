package chaos

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce/internal/fake/fakeserver"
)

// done is a record of an operation its client believes executed as id.
func done(provider, kind, key, id string) *opRecord {
	return &opRecord{provider: provider, kind: kind, key: key, id: id, ids: map[string]bool{id: true}, done: true}
}

func entry(provider, kind, key, id string) fakeserver.Operation {
	return fakeserver.Operation{Provider: provider, Kind: kind, IdempotencyKey: key, ID: id}
}

func TestReconcileClean(t *testing.T) {
	ops := []*opRecord{
		done(providerA55, kindChargeCreate, "k1", "ch1"),
		done(providerCoinepay, kindCardApply, "k1", "card1"), // same key, other provider: another operation
	}
	ledger := []fakeserver.Operation{
		entry(providerA55, kindChargeCreate, "k1", "ch1"),
		entry(providerCoinepay, kindCardApply, "k1", "card1"),
	}
	rep := reconcile(ops, ledger)
	assert.True(t, rep.Passed(), rep.Problems)
	assert.Equal(t, 2, rep.Operations)
	assert.Empty(t, rep.Problems)
	assert.Equal(t, []KindCount{
		{Provider: providerA55, Kind: kindChargeCreate, Count: 1, Ledger: 1},
		{Provider: providerCoinepay, Kind: kindCardApply, Count: 1, Ledger: 1},
	}, rep.ByKind)
}

func TestReconcileFails(t *testing.T) {
	tests := []struct {
		name          string
		ops           []*opRecord
		ledger        []fakeserver.Operation
		dups, lost    int
		failed        int
		problemPrefix string
	}{
		{
			name:          "ledger holds two entries for one key",
			ops:           []*opRecord{done(providerA55, kindChargeCreate, "k1", "ch1")},
			ledger:        []fakeserver.Operation{entry(providerA55, kindChargeCreate, "k1", "ch1"), entry(providerA55, kindChargeCreate, "k1", "ch2")},
			dups:          1,
			problemPrefix: "duplicate: a55 charge.create key k1 executed 2 times",
		},
		{
			name: "one key executed three times counts one operation",
			ops:  []*opRecord{done(providerA55, kindChargeCreate, "k1", "ch1")},
			ledger: []fakeserver.Operation{entry(providerA55, kindChargeCreate, "k1", "ch1"),
				entry(providerA55, kindChargeCreate, "k1", "ch2"), entry(providerA55, kindChargeCreate, "k1", "ch3")},
			dups:          1,
			problemPrefix: "duplicate: a55 charge.create key k1 executed 3 times",
		},
		{
			name: "submissions answered with different resources",
			ops: []*opRecord{{provider: providerCoinepay, kind: kindCardApply, key: "k1", id: "c1",
				ids: map[string]bool{"c1": true, "c2": true}, done: true}},
			ledger:        []fakeserver.Operation{entry(providerCoinepay, kindCardApply, "k1", "c1")},
			dups:          1,
			problemPrefix: "duplicate: coinepay card.apply key k1 answered with 2 different resources",
		},
		{
			name:          "client-done operation missing from the ledger",
			ops:           []*opRecord{done(providerA55, kindChargeCreate, "k1", "ch1")},
			lost:          1,
			problemPrefix: "lost: a55 charge.create key k1 done for the client, missing from the ledger",
		},
		{
			name:          "ledger entry no client knows",
			ops:           []*opRecord{done(providerA55, kindChargeCreate, "k1", "ch1")},
			ledger:        []fakeserver.Operation{entry(providerA55, kindChargeCreate, "k1", "ch1"), entry(providerA55, kindChargeRefund, "k9", "rf9")},
			lost:          1,
			problemPrefix: "lost: a55 charge.refund key k9 in the ledger, but no client learned of it",
		},
		{
			name:          "same key under another provider is not the client's",
			ops:           []*opRecord{done(providerA55, kindChargeCreate, "k1", "ch1")},
			ledger:        []fakeserver.Operation{entry(providerA55, kindChargeCreate, "k1", "ch1"), entry(providerCoinepay, kindCardApply, "k1", "c1")},
			lost:          1,
			problemPrefix: "lost: coinepay card.apply key k1 in the ledger, but no client learned of it",
		},
		{
			name:          "id mismatch",
			ops:           []*opRecord{done(providerA55, kindChargeCreate, "k1", "ch1")},
			ledger:        []fakeserver.Operation{entry(providerA55, kindChargeCreate, "k1", "ch2")},
			lost:          1,
			problemPrefix: "lost: a55 charge.create key k1: client has ch1, ledger has ch2",
		},
		{
			name:          "failed operation the ledger holds",
			ops:           []*opRecord{{provider: providerA55, kind: kindChargeCapture, key: "k1", ids: map[string]bool{}, failed: true}},
			ledger:        []fakeserver.Operation{entry(providerA55, kindChargeCapture, "k1", "ch1")},
			lost:          1,
			failed:        1,
			problemPrefix: "lost: a55 charge.capture key k1 executed, but its client was told it failed",
		},
		{
			name:          "operation that never settled",
			ops:           []*opRecord{{provider: providerA55, kind: kindChargeCreate, key: "k1", ids: map[string]bool{}}},
			lost:          1,
			problemPrefix: "lost: a55 charge.create key k1 never settled",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := reconcile(tt.ops, tt.ledger)
			assert.False(t, rep.Passed())
			assert.Equal(t, tt.dups, rep.Duplicates, "duplicates")
			assert.Equal(t, tt.lost, rep.Lost, "lost")
			assert.Equal(t, tt.failed, rep.Failed, "failed")
			require.NotEmpty(t, rep.Problems)
			assert.Equal(t, tt.problemPrefix, rep.Problems[0])
			assert.Len(t, rep.Problems, tt.dups+tt.lost)
		})
	}
}

// A failed operation the ledger does not hold is no loss: its client was
// told the truth.
func TestReconcileFailedNotExecutedPasses(t *testing.T) {
	rep := reconcile([]*opRecord{{provider: providerA55, kind: kindChargeCreate, key: "k1", ids: map[string]bool{}, failed: true}}, nil)
	assert.True(t, rep.Passed())
	assert.Equal(t, 1, rep.Failed)
}

func TestReconcileCountsEveryBadOperation(t *testing.T) {
	var ops []*opRecord
	var ledger []fakeserver.Operation
	for _, k := range []string{"a", "b", "c"} {
		ops = append(ops, done(providerA55, kindChargeCreate, k, "ch-"+k))
		for range 3 {
			ledger = append(ledger, entry(providerA55, kindChargeCreate, k, "ch-"+k))
		}
	}
	for i := range 30 {
		ops = append(ops, done(providerCoinepay, kindCardRecharge, "lost-"+strconv.Itoa(i), "x"))
	}
	rep := reconcile(ops, ledger)
	assert.Equal(t, 3, rep.Duplicates, "three operations ran more than once, whatever the extra runs")
	assert.Equal(t, 30, rep.Lost)
	assert.Len(t, rep.Problems, maxProblems, "problems are capped")
}

// TestReconcilerInParts: the run's check taken part by part, each with the
// ledger entries its operations added, finds what one check of the whole
// finds; a key a later part executes again shows as unknown to the clients.
func TestReconcilerInParts(t *testing.T) {
	part1 := []*opRecord{done(providerA55, kindChargeCreate, "k1", "ch1"), done(providerA55, kindChargeCreate, "k2", "ch2")}
	ledger1 := []fakeserver.Operation{entry(providerA55, kindChargeCreate, "k1", "ch1"), entry(providerA55, kindChargeCreate, "k2", "ch2")}
	part2 := []*opRecord{done(providerCoinepay, kindCardApply, "k3", "card3"), done(providerCoinepay, kindCardApply, "k4", "card4")}
	ledger2 := []fakeserver.Operation{entry(providerCoinepay, kindCardApply, "k3", "card3"), entry(providerA55, kindChargeCreate, "k1", "ch1-again")}

	c := newReconciler()
	c.add(part1, ledger1)
	c.add(part2, ledger2)
	rep := c.finish()
	assert.False(t, rep.Passed())
	assert.Equal(t, 4, rep.Operations)
	assert.Equal(t, 2, rep.Lost, "k4 missing from the ledger, k1 executed again in a later part")
	assert.Equal(t, []KindCount{
		{Provider: providerA55, Kind: kindChargeCreate, Count: 2, Ledger: 3},
		{Provider: providerCoinepay, Kind: kindCardApply, Count: 2, Ledger: 1},
	}, rep.ByKind)
	require.Len(t, rep.Problems, 2)
	assert.Contains(t, rep.Problems[1], "key k1 in the ledger, but no client learned of it")
}
