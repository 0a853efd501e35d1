// Package journaltest is the conformance suite every journal.Store
// backend passes: Run it from the backend's tests.
package journaltest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/corekit"
	"github.com/payonce/payonce/journal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Entry returns a valid pending entry for reference ref in scope.
func Entry(scope, ref string) payonce.JournalEntry {
	now := time.Now().UTC()
	return payonce.JournalEntry{
		Scope: scope, Reference: ref,
		Operation: "charges.create", Method: "POST", Path: "/api/v1/bank/wallet/charge/",
		Key: "key-" + ref, KeyCreated: now,
		Fingerprint: corekit.Fingerprint("POST", "/api/v1/bank/wallet/charge/", []byte(`{"ref":"`+ref+`"}`)),
		State:       payonce.JournalPending,
		CreatedAt:   now, UpdatedAt: now,
	}
}

// Run runs the conformance suite. open returns a new, empty journal for
// each subtest (the backend cleans it up with t.Cleanup).
func Run(t *testing.T, open func(t *testing.T) journal.Store) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, j journal.Store)
	}{
		{"ReserveCreatesOnce", testReserveCreatesOnce},
		{"ReserveKeepsFirstKey", testReserveKeepsFirstKey},
		{"ReserveRefusesInvalid", testReserveRefusesInvalid},
		{"ScopesAreSeparate", testScopesAreSeparate},
		{"GetAbsent", testGetAbsent},
		{"UpdateAbsent", testUpdateAbsent},
		{"RoundTripsEveryField", testRoundTrip},
		{"UpdateKeepsImmutableFields", testUpdateKeepsImmutable},
		{"SummaryIsKept", testSummaryIsKept},
		{"NeverBackToPending", testNeverBackToPending},
		{"PendingUpdates", testPendingUpdates},
		{"ConcurrentReserve", testConcurrentReserve},
		{"PendingQuery", testPendingQuery},
		{"ClaimLeases", testClaimLeases},
		{"ClaimExpiredLease", testClaimExpiredLease},
		{"ConcurrentClaims", testConcurrentClaims},
		{"ClaimRefusesInvalid", testClaimRefusesInvalid},
		{"Purge", testPurge},
		{"CanceledContext", testCanceledContext},
	}
	tests = append(tests, fenceTests...)
	tests = append(tests, upgradeTests...)
	tests = append(tests, unsendTests...)
	tests = append(tests, finderTests...)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.fn(t, open(t))
		})
	}
}

func ctx(t *testing.T) context.Context { return t.Context() }

func reserve(t *testing.T, j journal.Store, e payonce.JournalEntry) payonce.JournalEntry {
	t.Helper()
	got, created, err := j.Reserve(ctx(t), e)
	require.NoError(t, err)
	require.True(t, created)
	return got
}

func testReserveCreatesOnce(t *testing.T, j journal.Store) {
	e := Entry("a55:c1", "order-1/charge")
	got, created, err := j.Reserve(ctx(t), e)
	require.NoError(t, err)
	assert.True(t, created)
	assert.Equal(t, payonce.JournalPending, got.State)
	assert.Equal(t, e.Key, got.Key)

	again, created, err := j.Reserve(ctx(t), e)
	require.NoError(t, err)
	assert.False(t, created)
	assert.Equal(t, got.Key, again.Key)
	assert.Equal(t, payonce.JournalPending, again.State)
}

func testReserveKeepsFirstKey(t *testing.T, j journal.Store) {
	e := Entry("s", "r")
	first := reserve(t, j, e)
	e2 := e
	e2.Key, e2.KeyCreated, e2.Fingerprint = "another-key-0000", time.Now().Add(time.Hour), "other"
	got, created, err := j.Reserve(ctx(t), e2)
	require.NoError(t, err)
	assert.False(t, created)
	assert.Equal(t, first.Key, got.Key, "the first reservation's key wins")
	assert.True(t, first.KeyCreated.Equal(got.KeyCreated))
	assert.Equal(t, e.Fingerprint, got.Fingerprint)
}

func testReserveRefusesInvalid(t *testing.T, j journal.Store) {
	for name, mut := range map[string]func(*payonce.JournalEntry){
		"no reference":   func(e *payonce.JournalEntry) { e.Reference = "" },
		"long reference": func(e *payonce.JournalEntry) { e.Reference = strings.Repeat("r", corekit.MaxReferenceLen+1) },
		"no key":         func(e *payonce.JournalEntry) { e.Key = "" },
		"no key time":    func(e *payonce.JournalEntry) { e.KeyCreated = time.Time{} },
		"no fingerprint": func(e *payonce.JournalEntry) { e.Fingerprint = "" },
		"settled":        func(e *payonce.JournalEntry) { e.State = payonce.JournalSucceeded },
	} {
		e := Entry("s", "invalid")
		mut(&e)
		_, _, err := j.Reserve(ctx(t), e)
		assert.Error(t, err, name)
	}
	_, err := j.Get(ctx(t), "s", "invalid")
	assert.ErrorIs(t, err, journal.ErrNotFound)
}

func testScopesAreSeparate(t *testing.T, j journal.Store) {
	a := reserve(t, j, Entry("a55:c1", "order-1"))
	e := Entry("a55:c2", "order-1")
	e.Key = "key-of-c2-000000"
	b := reserve(t, j, e)
	assert.NotEqual(t, a.Key, b.Key)
	got, err := j.Get(ctx(t), "a55:c2", "order-1")
	require.NoError(t, err)
	assert.Equal(t, "key-of-c2-000000", got.Key)
}

func testGetAbsent(t *testing.T, j journal.Store) {
	_, err := j.Get(ctx(t), "s", "absent")
	require.ErrorIs(t, err, journal.ErrNotFound)
}

func testUpdateAbsent(t *testing.T, j journal.Store) {
	e := Entry("s", "absent")
	e.State = payonce.JournalSucceeded
	require.ErrorIs(t, j.Update(ctx(t), e), journal.ErrNotFound)
	_, err := j.Get(ctx(t), "s", "absent")
	require.ErrorIs(t, err, journal.ErrNotFound, "Update never inserts")
}

func testRoundTrip(t *testing.T, j journal.Store) {
	created := time.Date(2026, 11, 28, 10, 0, 0, 123456000, time.UTC)
	e := Entry("coinepay:key-1", "job-7/apply")
	e.KeyCreated, e.CreatedAt, e.UpdatedAt = created.Add(-time.Minute), created, created
	got := reserve(t, j, e)
	assert.True(t, got.KeyCreated.Equal(e.KeyCreated), "KeyCreated %v != %v", got.KeyCreated, e.KeyCreated)

	up := got
	up.State = payonce.JournalFailed
	up.Result = []byte(`{"status":"declined"}`)
	up.StatusCode, up.RequestID, up.Replayed = 402, "req-9", true
	up.ErrorKind, up.ErrorCode, up.ErrorMessage = "card_declined", "CARD_DECLINED", "cartão recusado 卡被拒"
	up.Attempts, up.LastCause = 3, "Service Unavailable"
	up.UpdatedAt = created.Add(time.Hour)
	up.ResourceID = "ch_declined-7"
	require.NoError(t, j.Update(ctx(t), up))

	back, err := j.Get(ctx(t), e.Scope, e.Reference)
	require.NoError(t, err)
	assert.Equal(t, e.Scope, back.Scope)
	assert.Equal(t, e.Reference, back.Reference)
	assert.Equal(t, e.Operation, back.Operation)
	assert.Equal(t, e.Method, back.Method)
	assert.Equal(t, e.Path, back.Path)
	assert.Equal(t, e.Key, back.Key)
	assert.True(t, back.KeyCreated.Equal(e.KeyCreated))
	assert.Equal(t, e.Fingerprint, back.Fingerprint)
	assert.Equal(t, payonce.JournalFailed, back.State)
	assert.JSONEq(t, string(up.Result), string(back.Result))
	assert.Equal(t, 402, back.StatusCode)
	assert.Equal(t, "req-9", back.RequestID)
	assert.True(t, back.Replayed)
	assert.Equal(t, "card_declined", back.ErrorKind)
	assert.Equal(t, "CARD_DECLINED", back.ErrorCode)
	assert.Equal(t, up.ErrorMessage, back.ErrorMessage)
	assert.Equal(t, 3, back.Attempts)
	assert.Equal(t, "Service Unavailable", back.LastCause)
	assert.Equal(t, "ch_declined-7", back.ResourceID)
	assert.True(t, back.CreatedAt.Equal(created), "CreatedAt %v", back.CreatedAt)
	assert.True(t, back.UpdatedAt.Equal(up.UpdatedAt), "UpdatedAt %v", back.UpdatedAt)
	assert.Equal(t, time.UTC, back.UpdatedAt.Location())
}

func testUpdateKeepsImmutable(t *testing.T, j journal.Store) {
	e := reserve(t, j, Entry("s", "imm"))
	up := e
	up.Key, up.Fingerprint, up.Operation, up.Path, up.KeyCreated = "changed-key-0000", "changed", "x", "/x", time.Now().Add(time.Hour)
	up.Attempts = 1
	require.NoError(t, j.Update(ctx(t), up))
	back, err := j.Get(ctx(t), "s", "imm")
	require.NoError(t, err)
	assert.Equal(t, e.Key, back.Key)
	assert.Equal(t, e.Fingerprint, back.Fingerprint)
	assert.Equal(t, e.Operation, back.Operation)
	assert.Equal(t, e.Path, back.Path)
	assert.True(t, e.KeyCreated.Equal(back.KeyCreated))
	assert.Equal(t, 1, back.Attempts)
}

// The request summary given to Reserve comes back from Get, Take, Claim
// and BeginAttempt, and no later write changes it; an entry reserved
// without one has none.
func testSummaryIsKept(t *testing.T, j journal.Store) {
	const summary = `{"amount":"100.00","currency":"BRL","description":"pedido 42 — 订单"}`
	e := Entry("a55:c1", "order-42/charge")
	e.Summary = summary
	got := reserve(t, j, e)
	assert.Equal(t, summary, got.Summary)

	taken, err := j.Take(ctx(t), payonce.JournalEntry{Scope: e.Scope, Reference: e.Reference, LeaseOwner: "run-1", Lease: time.Minute})
	require.NoError(t, err)
	assert.Equal(t, summary, taken.Summary)
	began, err := j.BeginAttempt(ctx(t), payonce.JournalEntry{Scope: e.Scope, Reference: e.Reference, Fence: taken.Fence, LeaseOwner: "run-1", Lease: time.Minute})
	require.NoError(t, err)
	assert.Equal(t, summary, began.Summary)

	up := began
	up.Summary, up.LastCause = `{"amount":"1.00"}`, "transport"
	require.NoError(t, j.Update(ctx(t), up))
	claimed, err := j.Claim(ctx(t), journal.ClaimRequest{Scope: e.Scope, Owner: "worker-1", Lease: time.Minute})
	require.NoError(t, err)
	require.Len(t, claimed, 1)
	assert.Equal(t, summary, claimed[0].Summary, "Update leaves the summary as reserved")

	up = claimed[0]
	up.State, up.Result, up.Summary = payonce.JournalSucceeded, []byte(`{"id":"1"}`), ""
	require.NoError(t, j.Update(ctx(t), up))
	back, err := j.Get(ctx(t), e.Scope, e.Reference)
	require.NoError(t, err)
	assert.Equal(t, summary, back.Summary)

	bare := reserve(t, j, Entry("a55:c1", "order-43/charge"))
	assert.Empty(t, bare.Summary)
}

func testNeverBackToPending(t *testing.T, j journal.Store) {
	for _, st := range []payonce.JournalState{payonce.JournalSucceeded, payonce.JournalFailed} {
		e := reserve(t, j, Entry("s", "settle-"+string(st)))
		up := e
		up.State, up.Result, up.Attempts = st, []byte(`{"id":"1"}`), 1
		require.NoError(t, j.Update(ctx(t), up))

		back := up
		back.State, back.Attempts, back.Result = payonce.JournalPending, 9, nil
		require.ErrorIs(t, j.Update(ctx(t), back), journal.ErrSettled)
		// A settled entry takes no other failure; a succeeded one takes
		// nothing at all (a failed one may still become succeeded:
		// Precedence).
		other := up
		other.State = payonce.JournalFailed
		require.ErrorIs(t, j.Update(ctx(t), other), journal.ErrSettled)
		if st == payonce.JournalSucceeded {
			again := up
			again.Result = []byte(`{"id":"2"}`)
			require.ErrorIs(t, j.Update(ctx(t), again), journal.ErrSettled)
		}

		got, err := j.Get(ctx(t), "s", e.Reference)
		require.NoError(t, err)
		assert.Equal(t, st, got.State)
		assert.Equal(t, 1, got.Attempts)
		assert.JSONEq(t, `{"id":"1"}`, string(got.Result))
	}
	// An unknown state is refused.
	e := reserve(t, j, Entry("s", "bad-state"))
	e.State = "done"
	assert.Error(t, j.Update(ctx(t), e))
}

func testPendingUpdates(t *testing.T, j journal.Store) {
	e := reserve(t, j, Entry("s", "p"))
	for i := 1; i <= 3; i++ {
		up := e
		up.Attempts, up.LastCause, up.ErrorKind = i, fmt.Sprintf("cause %d", i), "server"
		require.NoError(t, j.Update(ctx(t), up))
	}
	got, err := j.Get(ctx(t), "s", "p")
	require.NoError(t, err)
	assert.Equal(t, payonce.JournalPending, got.State)
	assert.Equal(t, 3, got.Attempts)
	assert.Equal(t, "cause 3", got.LastCause)
}

func testConcurrentReserve(t *testing.T, j journal.Store) {
	const n = 50
	var wg sync.WaitGroup
	var mu sync.Mutex
	createdCount := 0
	keys := map[string]int{}
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e := Entry("s", "one-reference")
			e.Key = fmt.Sprintf("key-of-goroutine-%02d", i)
			got, created, err := j.Reserve(context.Background(), e)
			if err != nil {
				errs <- err
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if created {
				createdCount++
			}
			keys[got.Key]++
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	assert.Equal(t, 1, createdCount, "exactly one goroutine creates the entry")
	assert.Len(t, keys, 1, "every goroutine gets the same key")
}

func testPendingQuery(t *testing.T, j journal.Store) {
	base := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	for i := range 5 {
		e := Entry("a", fmt.Sprintf("p%d", i))
		e.CreatedAt = base.Add(time.Duration(i) * time.Minute)
		e.UpdatedAt = e.CreatedAt
		reserve(t, j, e)
	}
	other := Entry("b", "p9")
	other.CreatedAt, other.UpdatedAt = base, base
	reserve(t, j, other)
	// p1 succeeds: no longer pending.
	p1, err := j.Get(ctx(t), "a", "p1")
	require.NoError(t, err)
	p1.State, p1.UpdatedAt = payonce.JournalSucceeded, time.Now()
	require.NoError(t, j.Update(ctx(t), p1))

	all, err := j.Pending(ctx(t), journal.PendingQuery{})
	require.NoError(t, err)
	assert.Len(t, all, 5)

	a, err := j.Pending(ctx(t), journal.PendingQuery{Scope: "a"})
	require.NoError(t, err)
	require.Len(t, a, 4)
	assert.Equal(t, []string{"p0", "p2", "p3", "p4"}, refs(a), "oldest first")

	lim, err := j.Pending(ctx(t), journal.PendingQuery{Scope: "a", Limit: 2})
	require.NoError(t, err)
	assert.Equal(t, []string{"p0", "p2"}, refs(lim))

	before, err := j.Pending(ctx(t), journal.PendingQuery{Scope: "a", Before: base.Add(3 * time.Minute)})
	require.NoError(t, err)
	assert.Equal(t, []string{"p0", "p2"}, refs(before))
}

func refs(es []payonce.JournalEntry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Reference
	}
	return out
}

func testClaimLeases(t *testing.T, j journal.Store) {
	for i := range 3 {
		reserve(t, j, Entry("s", fmt.Sprintf("c%d", i)))
	}
	done := reserve(t, j, Entry("s", "done"))
	done.State = payonce.JournalSucceeded
	require.NoError(t, j.Update(ctx(t), done))

	got, err := j.Claim(ctx(t), journal.ClaimRequest{Scope: "s", Owner: "w1", Lease: time.Hour, Limit: 2})
	require.NoError(t, err)
	require.Len(t, got, 2)
	for _, e := range got {
		assert.Equal(t, "w1", e.LeaseOwner)
		assert.True(t, e.LeaseUntil.After(time.Now().Add(50*time.Minute)))
		stored, err := j.Get(ctx(t), "s", e.Reference)
		require.NoError(t, err)
		assert.Equal(t, "w1", stored.LeaseOwner)
	}
	rest, err := j.Claim(ctx(t), journal.ClaimRequest{Scope: "s", Owner: "w2", Lease: time.Hour})
	require.NoError(t, err)
	require.Len(t, rest, 1, "leased and settled entries are not claimed")
	assert.Equal(t, "w2", rest[0].LeaseOwner)
	none, err := j.Claim(ctx(t), journal.ClaimRequest{Scope: "s", Owner: "w3", Lease: time.Hour})
	require.NoError(t, err)
	assert.Empty(t, none)
	other, err := j.Claim(ctx(t), journal.ClaimRequest{Scope: "elsewhere", Owner: "w3", Lease: time.Hour})
	require.NoError(t, err)
	assert.Empty(t, other)
}

func testClaimExpiredLease(t *testing.T, j journal.Store) {
	reserve(t, j, Entry("s", "x"))
	got, err := j.Claim(ctx(t), journal.ClaimRequest{Owner: "w1", Lease: time.Millisecond})
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Eventually(t, func() bool {
		again, err := j.Claim(ctx(t), journal.ClaimRequest{Owner: "w2", Lease: time.Hour})
		return err == nil && len(again) == 1 && again[0].LeaseOwner == "w2"
	}, 30*time.Second, 5*time.Millisecond, "an expired lease is claimed again")
	stored, err := j.Get(ctx(t), "s", "x")
	require.NoError(t, err)
	assert.Equal(t, "w2", stored.LeaseOwner)
}

func testConcurrentClaims(t *testing.T, j journal.Store) {
	const entries, workers = 20, 8
	for i := range entries {
		reserve(t, j, Entry("s", fmt.Sprintf("e%02d", i)))
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	seen := map[string]string{}
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			owner := fmt.Sprintf("w%d", w)
			for {
				got, err := j.Claim(context.Background(), journal.ClaimRequest{Scope: "s", Owner: owner, Lease: time.Hour, Limit: 3})
				if err != nil {
					errs <- err
					return
				}
				if len(got) == 0 {
					return
				}
				mu.Lock()
				for _, e := range got {
					if prev, ok := seen[e.Reference]; ok {
						errs <- fmt.Errorf("%s claimed by %s and %s", e.Reference, prev, owner)
					}
					seen[e.Reference] = owner
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	assert.Len(t, seen, entries, "every entry is claimed exactly once")
}

func testClaimRefusesInvalid(t *testing.T, j journal.Store) {
	_, err := j.Claim(ctx(t), journal.ClaimRequest{Lease: time.Hour})
	assert.Error(t, err, "no owner")
	_, err = j.Claim(ctx(t), journal.ClaimRequest{Owner: "w"})
	assert.Error(t, err, "no lease")
}

func testPurge(t *testing.T, j journal.Store) {
	old := time.Now().UTC().Add(-48 * time.Hour)
	settle := func(ref string, st payonce.JournalState, at time.Time) {
		e := reserve(t, j, Entry("s", ref))
		if st != payonce.JournalPending {
			e.State, e.UpdatedAt = st, at
			require.NoError(t, j.Update(ctx(t), e))
		}
	}
	settle("old-ok", payonce.JournalSucceeded, old)
	settle("old-failed", payonce.JournalFailed, old)
	settle("new-ok", payonce.JournalSucceeded, time.Now())
	oldPending := Entry("s", "old-pending")
	oldPending.CreatedAt, oldPending.UpdatedAt = old, old
	reserve(t, j, oldPending)

	n, err := j.Purge(ctx(t), time.Now().Add(-24*time.Hour))
	require.NoError(t, err)
	assert.Equal(t, int64(2), n)
	for ref, present := range map[string]bool{"old-ok": false, "old-failed": false, "new-ok": true, "old-pending": true} {
		_, err := j.Get(ctx(t), "s", ref)
		if present {
			assert.NoError(t, err, ref)
		} else {
			assert.ErrorIs(t, err, journal.ErrNotFound, ref)
		}
	}
	n, err = j.Purge(ctx(t), time.Now().Add(-24*time.Hour))
	require.NoError(t, err)
	assert.Zero(t, n)
}

func testCanceledContext(t *testing.T, j journal.Store) {
	c, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err := j.Reserve(c, Entry("s", "canceled"))
	require.Error(t, err)
	_, err = j.Get(context.Background(), "s", "canceled")
	assert.ErrorIs(t, err, journal.ErrNotFound, "nothing reserved with a canceled context")
}
