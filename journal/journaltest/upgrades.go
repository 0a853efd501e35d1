package journaltest

import (
	"slices"
	"testing"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/journal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// upgradeTests are the suite's checks of payonce.JournalUpgrader, run on
// a backend that implements it (every backend of this module does; a
// third-party Store without it skips them).
var upgradeTests = []struct {
	name string
	fn   func(t *testing.T, j journal.Store)
}{
	{"ScopesCountEntries", testScopesCountEntries},
	{"MoveScopeMovesEveryEntry", testMoveScopeMovesEveryEntry},
	{"MoveScopeRefusesACollision", testMoveScopeRefusesACollision},
	{"MoveScopeReplacesAnEntryNeverSent", testMoveScopeReplacesAnEntryNeverSent},
	{"MoveScopeRefusesALiveLease", testMoveScopeRefusesALiveLease},
	{"MoveScopeRefusesALiveLeaseOnTheEntryReplaced", testMoveScopeRefusesALiveLeaseOnTheEntryReplaced},
	{"MoveScopeRefusesInvalid", testMoveScopeRefusesInvalid},
	{"ReplaceFingerprintComparesAndSwaps", testReplaceFingerprint},
}

// upgrader is j's payonce.JournalUpgrader, or skips the test.
func upgrader(t *testing.T, j journal.Store) payonce.JournalUpgrader {
	t.Helper()
	u, ok := j.(payonce.JournalUpgrader)
	if !ok {
		t.Skipf("%T is not a payonce.JournalUpgrader", j)
	}
	return u
}

// settleSucceeded records a success on the entry (scope, ref).
func settleSucceeded(t *testing.T, j journal.Store, e payonce.JournalEntry) payonce.JournalEntry {
	t.Helper()
	e.State, e.Result, e.StatusCode = payonce.JournalSucceeded, []byte(`{"id":"ch_1"}`), 200
	require.NoError(t, j.Update(ctx(t), e))
	got, err := j.Get(ctx(t), e.Scope, e.Reference)
	require.NoError(t, err)
	return got
}

func testScopesCountEntries(t *testing.T, j journal.Store) {
	u := upgrader(t, j)
	all, err := u.Scopes(ctx(t))
	require.NoError(t, err)
	assert.Empty(t, all)
	settleSucceeded(t, j, reserve(t, j, Entry("a55:c1", "r1")))
	reserve(t, j, Entry("a55:c1", "r2"))
	reserve(t, j, Entry("a55:c1@https://api.example", "r1"))
	all, err = u.Scopes(ctx(t))
	require.NoError(t, err)
	assert.Equal(t, []payonce.ScopeCount{
		{Scope: "a55:c1", Pending: 1, Settled: 1},
		{Scope: "a55:c1@https://api.example", Pending: 1},
	}, all)
	some, err := u.Scopes(ctx(t), "a55:c1@https://api.example", "coinepay:absent")
	require.NoError(t, err)
	assert.Equal(t, []payonce.ScopeCount{{Scope: "a55:c1@https://api.example", Pending: 1}}, some)
}

func testMoveScopeMovesEveryEntry(t *testing.T, j journal.Store) {
	u := upgrader(t, j)
	done := settleSucceeded(t, j, reserve(t, j, Entry("old", "r1")))
	e := Entry("old", "r2")
	e.Sent, e.Attempts = true, 2
	pending := reserve(t, j, e) // no lease: a crashed run's
	reserve(t, j, Entry("other", "r1"))

	n, err := u.MoveScope(ctx(t), "old", "new")
	require.NoError(t, err)
	assert.EqualValues(t, 2, n)
	for _, was := range []payonce.JournalEntry{done, pending} {
		_, err := j.Get(ctx(t), "old", was.Reference)
		require.ErrorIs(t, err, journal.ErrNotFound)
		got, err := j.Get(ctx(t), "new", was.Reference)
		require.NoError(t, err)
		assert.Equal(t, "new", got.Scope)
		assert.Equal(t, was.Key, got.Key, "an entry keeps its meaning")
		assert.True(t, was.KeyCreated.Equal(got.KeyCreated))
		assert.Equal(t, was.Fingerprint, got.Fingerprint)
		assert.Equal(t, was.State, got.State)
		assert.Equal(t, was.Sent, got.Sent)
		assert.Equal(t, string(was.Result), string(got.Result))
	}
	got, err := j.Get(ctx(t), "new", "r2")
	require.NoError(t, err)
	assert.Equal(t, pending.Fence, got.Fence, "the fence moves with the entry")
	other, err := j.Get(ctx(t), "other", "r1")
	require.NoError(t, err)
	assert.Equal(t, "other", other.Scope, "other scopes stay")
	n, err = u.MoveScope(ctx(t), "old", "new")
	require.NoError(t, err)
	assert.Zero(t, n, "an empty scope moves nothing")
}

// A reference both scopes hold is a collision when to's entry may have
// run: one a run may have sent under, or a settled one. Nothing moves.
func testMoveScopeRefusesACollision(t *testing.T, j journal.Store) {
	u := upgrader(t, j)
	for name, to := range map[string]func(e payonce.JournalEntry) payonce.JournalEntry{
		"sent": func(e payonce.JournalEntry) payonce.JournalEntry {
			e.Sent, e.Attempts = true, 1
			return reserve(t, j, e)
		},
		"attempt counted": func(e payonce.JournalEntry) payonce.JournalEntry {
			e.Attempts = 1
			return reserve(t, j, e)
		},
		"succeeded": func(e payonce.JournalEntry) payonce.JournalEntry { return settleSucceeded(t, j, reserve(t, j, e)) },
		"failed": func(e payonce.JournalEntry) payonce.JournalEntry {
			got := reserve(t, j, e)
			got.State, got.ErrorKind = payonce.JournalFailed, payonce.KindName(payonce.ErrNotExecuted)
			require.NoError(t, j.Update(ctx(t), got))
			return got
		},
	} {
		from, into := "old-"+name, "new-"+name
		reserve(t, j, Entry(from, "r1"))
		reserve(t, j, Entry(from, "r2"))
		e := Entry(into, "r2")
		e.Key = "key-new-r2-000000"
		to(e)
		_, err := u.MoveScope(ctx(t), from, into)
		require.ErrorIs(t, err, journal.ErrScopeCollision, name)
		assert.Contains(t, err.Error(), `"r2"`, "the error names the reference")
		counts, err := u.Scopes(ctx(t), from, into)
		require.NoError(t, err)
		assert.Len(t, counts, 2, name)
		assert.EqualValues(t, 2, counts[slices.IndexFunc(counts, func(c payonce.ScopeCount) bool { return c.Scope == from })].Pending, "%s: nothing moved", name)
		got, err := j.Get(ctx(t), into, "r2")
		require.NoError(t, err)
		assert.Equal(t, "key-new-r2-000000", got.Key, name)
	}
}

// An entry of to that is pending, was never sent (no attempt counted)
// and no live run holds gives way to from's entry of its reference: its
// key never left, and from's entry, which may have run, is the
// reference's. The moved entry's fence is above the replaced one's, so
// that a run still holding that one is fenced.
func testMoveScopeReplacesAnEntryNeverSent(t *testing.T, j journal.Store) {
	u := upgrader(t, j)
	e := Entry("old", "r2")
	e.Sent, e.Attempts = true, 1
	was := reserve(t, j, e)
	reserve(t, j, Entry("old", "r1"))
	idle := Entry("new", "r2")
	idle.Key = "key-new-r2-000000"
	reserve(t, j, idle)
	var stale payonce.JournalEntry
	for range 3 { // taken and given back: fence 4, its lease ended, never sent
		taken, err := j.Take(ctx(t), payonce.JournalEntry{Scope: "new", Reference: "r2", LeaseOwner: "run-a", Lease: time.Hour})
		require.NoError(t, err)
		taken.State = payonce.JournalPending
		require.NoError(t, j.Update(ctx(t), taken))
		stale = taken
	}
	require.EqualValues(t, 4, stale.Fence)

	n, err := u.MoveScope(ctx(t), "old", "new")
	require.NoError(t, err)
	assert.EqualValues(t, 2, n)
	got, err := j.Get(ctx(t), "new", "r2")
	require.NoError(t, err)
	assert.Equal(t, was.Key, got.Key, "the moved entry is the reference's")
	assert.True(t, got.Sent)
	assert.Equal(t, 1, got.Attempts)
	assert.Greater(t, got.Fence, stale.Fence, "above the replaced entry's fence")
	_, err = j.BeginAttempt(ctx(t), payonce.JournalEntry{Scope: "new", Reference: "r2", Fence: stale.Fence, LeaseOwner: "run-a", Lease: time.Hour})
	require.ErrorIs(t, err, payonce.ErrJournalFenced, "a run holding the replaced entry is fenced")
	stale.State = payonce.JournalPending
	require.ErrorIs(t, j.Update(ctx(t), stale), payonce.ErrJournalFenced)
	r1, err := j.Get(ctx(t), "new", "r1")
	require.NoError(t, err)
	assert.EqualValues(t, 1, r1.Fence, "an entry that replaced none keeps its fence")
	counts, err := u.Scopes(ctx(t))
	require.NoError(t, err)
	assert.Equal(t, []payonce.ScopeCount{{Scope: "new", Pending: 2}}, counts)
}

func testMoveScopeRefusesALiveLease(t *testing.T, j journal.Store) {
	u := upgrader(t, j)
	reserve(t, j, Entry("old", "r1"))
	taken, err := j.Take(ctx(t), payonce.JournalEntry{Scope: "old", Reference: "r1", LeaseOwner: "run-a", Lease: time.Hour})
	require.NoError(t, err)
	_, err = u.MoveScope(ctx(t), "old", "new")
	require.ErrorIs(t, err, payonce.ErrJournalLeased)
	_, err = j.Get(ctx(t), "old", "r1")
	require.NoError(t, err, "nothing moved")

	up := taken
	up.State, up.ErrorKind = payonce.JournalFailed, payonce.KindName(payonce.ErrNotExecuted)
	require.NoError(t, j.Update(ctx(t), up)) // ends the lease
	n, err := u.MoveScope(ctx(t), "old", "new")
	require.NoError(t, err)
	assert.EqualValues(t, 1, n)
}

// An entry never sent that a live run holds (taken, its first attempt on
// its way) does not give way: the run may be about to send under it.
func testMoveScopeRefusesALiveLeaseOnTheEntryReplaced(t *testing.T, j journal.Store) {
	u := upgrader(t, j)
	reserve(t, j, Entry("old", "r1"))
	reserve(t, j, Entry("new", "r1"))
	taken, err := j.Take(ctx(t), payonce.JournalEntry{Scope: "new", Reference: "r1", LeaseOwner: "run-a", Lease: time.Hour})
	require.NoError(t, err)
	_, err = u.MoveScope(ctx(t), "old", "new")
	require.ErrorIs(t, err, payonce.ErrJournalLeased)
	assert.Contains(t, err.Error(), `"r1"`)
	got, err := j.Get(ctx(t), "new", "r1")
	require.NoError(t, err)
	assert.Equal(t, taken.Fence, got.Fence, "nothing moved")
	_, err = j.Get(ctx(t), "old", "r1")
	require.NoError(t, err)
}

func testMoveScopeRefusesInvalid(t *testing.T, j journal.Store) {
	u := upgrader(t, j)
	reserve(t, j, Entry("old", "r1"))
	for name, scopes := range map[string][2]string{
		"same":        {"old", "old"},
		"empty from":  {"", "new"},
		"empty to":    {"old", ""},
		"control":     {"old", "new\x1b[2J"},
		"invalid utf": {"old", "new\xff"},
	} {
		_, err := u.MoveScope(ctx(t), scopes[0], scopes[1])
		require.ErrorIs(t, err, journal.ErrInvalidEntry, name)
	}
	_, err := j.Get(ctx(t), "old", "r1")
	require.NoError(t, err)
}

func testReplaceFingerprint(t *testing.T, j journal.Store) {
	u := upgrader(t, j)
	e := Entry("s", "r1")
	e.Fingerprint = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	done := settleSucceeded(t, j, reserve(t, j, e))

	ok, err := u.ReplaceFingerprint(ctx(t), "s", "r1", "another-old", "hmac-sha256:new")
	require.NoError(t, err)
	assert.False(t, ok, "only the old fingerprint is replaced")
	ok, err = u.ReplaceFingerprint(ctx(t), "s", "r1", e.Fingerprint, "hmac-sha256:new")
	require.NoError(t, err)
	assert.True(t, ok)
	got, err := j.Get(ctx(t), "s", "r1")
	require.NoError(t, err)
	assert.Equal(t, "hmac-sha256:new", got.Fingerprint)
	got.Fingerprint = done.Fingerprint
	assert.Equal(t, done, got, "nothing else changes, a succeeded entry's state included")

	_, err = u.ReplaceFingerprint(ctx(t), "s", "absent", e.Fingerprint, "hmac-sha256:new")
	require.ErrorIs(t, err, journal.ErrNotFound)
	_, err = u.ReplaceFingerprint(ctx(t), "s", "r1", "hmac-sha256:new", "")
	require.ErrorIs(t, err, journal.ErrInvalidEntry)
}
