package journaltest

import (
	"testing"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/journal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// finderTests are the suite's checks of payonce.JournalFinder: who holds
// a resource, and which entries of a scope could have sent in a span. A
// store without JournalFinder skips them.
var finderTests = []struct {
	name string
	fn   func(t *testing.T, j journal.Store)
}{
	{"HoldersFindTheOutcome", testHoldersFindTheOutcome},
	{"HoldersFollowTheOutcome", testHoldersFollowTheOutcome},
	{"LookAlikesAreLiveInTheSpan", testLookAlikesAreLiveInTheSpan},
	{"LookAlikesBySummary", testLookAlikesBySummary},
	{"FinderRefusesInvalid", testFinderRefusesInvalid},
}

func finder(t *testing.T, j journal.Store) payonce.JournalFinder {
	t.Helper()
	f, ok := j.(payonce.JournalFinder)
	if !ok {
		t.Skipf("%T does not implement payonce.JournalFinder: a settle by lookup through it is refused", j)
	}
	return f
}

// settle records st with resource on the reserved entry e.
func settle(t *testing.T, j journal.Store, e payonce.JournalEntry, st payonce.JournalState, resource string, at time.Time) {
	t.Helper()
	up := e
	up.State, up.ResourceID, up.UpdatedAt = st, resource, at
	if st == payonce.JournalSucceeded {
		up.Result = []byte(`{"id":"` + resource + `"}`)
	}
	require.NoError(t, j.Update(ctx(t), up))
}

// Holders finds the entries of one scope whose outcome is a resource, in
// any settled state, and nothing of another scope or of a pending entry.
func testHoldersFindTheOutcome(t *testing.T, j journal.Store) {
	f := finder(t, j)
	now := time.Now().UTC()
	a := reserve(t, j, Entry("a55:c1", "order-1/attempt-1"))
	b := reserve(t, j, Entry("a55:c1", "order-2/attempt-1"))
	other := reserve(t, j, Entry("a55:c2", "order-1/attempt-1"))
	p := Entry("a55:c1", "order-3/attempt-1")
	p.ResourceID = "ch_1" // a pending entry holds no outcome, whatever Reserve is given
	pending := reserve(t, j, p)
	assert.Empty(t, pending.ResourceID)
	settle(t, j, a, payonce.JournalSucceeded, "ch_1", now)
	settle(t, j, b, payonce.JournalFailed, "ch_2", now)
	settle(t, j, other, payonce.JournalSucceeded, "ch_1", now)

	got, err := f.Holders(ctx(t), "a55:c1", "ch_1")
	require.NoError(t, err)
	assert.Equal(t, []string{"order-1/attempt-1"}, refs(got))
	assert.Equal(t, "ch_1", got[0].ResourceID)
	assert.Equal(t, payonce.JournalSucceeded, got[0].State)
	got, err = f.Holders(ctx(t), "a55:c1", "ch_2")
	require.NoError(t, err)
	assert.Equal(t, []string{"order-2/attempt-1"}, refs(got), "a failed operation holds what it made")
	got, err = f.Holders(ctx(t), "a55:c2", "ch_1")
	require.NoError(t, err)
	assert.Equal(t, []string{"order-1/attempt-1"}, refs(got))
	assert.Equal(t, "a55:c2", got[0].Scope)
	got, err = f.Holders(ctx(t), "a55:c1", "ch_3")
	require.NoError(t, err)
	assert.Empty(t, got)
}

// The resource an entry holds is its last outcome's: a success over a
// failure replaces it, and a succeeded entry keeps it.
func testHoldersFollowTheOutcome(t *testing.T, j journal.Store) {
	f := finder(t, j)
	now := time.Now().UTC()
	e := reserve(t, j, Entry("s", "flip"))
	settle(t, j, e, payonce.JournalFailed, "ch_declined", now)
	settle(t, j, e, payonce.JournalSucceeded, "ch_ok", now)
	got, err := f.Holders(ctx(t), "s", "ch_declined")
	require.NoError(t, err)
	assert.Empty(t, got)
	got, err = f.Holders(ctx(t), "s", "ch_ok")
	require.NoError(t, err)
	assert.Equal(t, []string{"flip"}, refs(got))

	again := e
	again.State, again.ResourceID = payonce.JournalSucceeded, "ch_other"
	require.ErrorIs(t, j.Update(ctx(t), again), journal.ErrSettled)
	back, err := j.Get(ctx(t), "s", "flip")
	require.NoError(t, err)
	assert.Equal(t, "ch_ok", back.ResourceID)
}

// LookAlikes returns the entries of the scope and operation that were
// reserved at or before the span's end and are pending or settled at or
// after its start, oldest first; Since and Limit narrow it.
func testLookAlikesAreLiveInTheSpan(t *testing.T, j journal.Store) {
	f := finder(t, j)
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	at := func(ref string, created, updated time.Duration, mut func(*payonce.JournalEntry)) payonce.JournalEntry {
		e := Entry("a55:c1", ref)
		e.KeyCreated, e.CreatedAt, e.UpdatedAt = t0.Add(created), t0.Add(created), t0.Add(created)
		if mut != nil {
			mut(&e)
		}
		got := reserve(t, j, e)
		if updated != created {
			up := got
			up.LastCause, up.UpdatedAt = "transport", t0.Add(updated)
			require.NoError(t, j.Update(ctx(t), up))
		}
		return got
	}
	at("in", time.Minute, 2*time.Minute, nil)
	at("before-and-into", -time.Hour, 5*time.Minute, nil)
	at("pending-since-before", -2*time.Hour, -90*time.Minute, nil)
	settledBefore := at("settled-before", -time.Hour, -time.Hour, nil)
	settle(t, j, settledBefore, payonce.JournalFailed, "", t0.Add(-30*time.Minute))
	at("after", 2*time.Hour, 2*time.Hour, nil)
	settledIn := at("settled-in", 10*time.Minute, 10*time.Minute, nil)
	settle(t, j, settledIn, payonce.JournalSucceeded, "ch_9", t0.Add(11*time.Minute))
	at("other-operation", time.Minute, time.Minute, func(e *payonce.JournalEntry) { e.Operation = "cards.apply" })
	o := Entry("a55:c2", "other-scope")
	o.KeyCreated, o.CreatedAt, o.UpdatedAt = t0, t0, t0
	reserve(t, j, o)

	q := payonce.LookAlikeQuery{Scope: "a55:c1", Operation: "charges.create", From: t0, To: t0.Add(30 * time.Minute)}
	got, err := f.LookAlikes(ctx(t), q)
	require.NoError(t, err)
	assert.Equal(t, []string{"pending-since-before", "before-and-into", "in", "settled-in"}, refs(got),
		"a pending entry may still have an attempt on its way; a settled one only until it settled")
	assert.Equal(t, "ch_9", got[3].ResourceID)
	assert.Equal(t, payonce.JournalSucceeded, got[3].State)

	q.Since = t0.Add(-10 * time.Minute)
	got, err = f.LookAlikes(ctx(t), q)
	require.NoError(t, err)
	assert.Equal(t, []string{"in", "settled-in"}, refs(got), "Since drops entries reserved before it")

	q.Since, q.Limit = time.Time{}, 2
	got, err = f.LookAlikes(ctx(t), q)
	require.NoError(t, err)
	assert.Equal(t, []string{"pending-since-before", "before-and-into"}, refs(got), "the oldest first, at most Limit")

	q.Limit, q.From, q.To = 0, t0.Add(-time.Hour), t0.Add(-time.Hour)
	got, err = f.LookAlikes(ctx(t), q)
	require.NoError(t, err)
	assert.Equal(t, []string{"pending-since-before", "before-and-into", "settled-before"}, refs(got), "a span of one instant")
}

// With a summary, LookAlikes keeps the entries of that summary and those
// without one (which could be anything).
func testLookAlikesBySummary(t *testing.T, j journal.Store) {
	f := finder(t, j)
	now := time.Now().UTC()
	for ref, summary := range map[string]string{
		"same": `{"amount":"10.00","description":"order"}`, "other": `{"amount":"11.00","description":"order"}`, "none": "",
	} {
		e := Entry("s", ref)
		e.Summary = summary
		reserve(t, j, e)
	}
	q := payonce.LookAlikeQuery{Scope: "s", Operation: "charges.create", From: now.Add(-time.Minute), To: now.Add(time.Minute),
		Summary: `{"amount":"10.00","description":"order"}`}
	got, err := f.LookAlikes(ctx(t), q)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"same", "none"}, refs(got))
	q.Summary = ""
	got, err = f.LookAlikes(ctx(t), q)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"same", "other", "none"}, refs(got))
}

func testFinderRefusesInvalid(t *testing.T, j journal.Store) {
	f := finder(t, j)
	_, err := f.Holders(ctx(t), "s", "")
	assert.ErrorIs(t, err, journal.ErrInvalidEntry, "no resource")
	now := time.Now()
	for name, q := range map[string]payonce.LookAlikeQuery{
		"no scope":       {Operation: "charges.create", From: now, To: now},
		"no operation":   {Scope: "s", From: now, To: now},
		"no span":        {Scope: "s", Operation: "charges.create"},
		"reversed span":  {Scope: "s", Operation: "charges.create", From: now, To: now.Add(-time.Second)},
		"negative limit": {Scope: "s", Operation: "charges.create", From: now, To: now, Limit: -1},
	} {
		_, err := f.LookAlikes(ctx(t), q)
		assert.ErrorIs(t, err, journal.ErrInvalidEntry, name)
	}
}
