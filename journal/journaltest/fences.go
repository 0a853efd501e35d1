package journaltest

import (
	"context"
	"testing"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/corekit"
	"github.com/payonce/payonce/journal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fenceTests are the suite's checks of fences, precedence, leases and
// clocks.
var fenceTests = []struct {
	name string
	fn   func(t *testing.T, j journal.Store)
}{
	{"ReserveStartsTheFence", testReserveStartsTheFence},
	{"TakeRaisesTheFence", testTakeRaisesTheFence},
	{"TakeRespectsALiveLease", testTakeRespectsALiveLease},
	{"StaleFenceIsRefused", testStaleFenceIsRefused},
	{"BeginAttemptMarksSent", testBeginAttemptMarksSent},
	{"SuccessLandsWhateverTheFence", testSuccessLandsWhateverTheFence},
	{"SuccessReplacesFailed", testSuccessReplacesFailed},
	{"ClaimRaisesTheFence", testClaimRaisesTheFence},
	{"TakeRefusesAnotherFingerprint", testTakeRefusesAnotherFingerprint},
	{"AttemptsNeverDecrease", testAttemptsNeverDecrease},
	{"UpdateEndsTheLease", testUpdateEndsTheLease},
	{"TimesAreTheJournalsClock", testTimesAreTheJournalsClock},
	{"SettlementRoundTrips", testSettlementRoundTrips},
	{"ReserveTakesSentAndLease", testReserveTakesSentAndLease},
}

func testSettlementRoundTrips(t *testing.T, j journal.Store) {
	e := reserve(t, j, Entry("s", "f12"))
	up := e
	up.State, up.ErrorKind, up.SettleReason = payonce.JournalFailed, payonce.KindName(payonce.ErrNotExecuted), "nothing found at the provider: 卡"
	require.NoError(t, j.Update(ctx(t), up))
	got, err := j.Get(ctx(t), "s", "f12")
	require.NoError(t, err)
	assert.Equal(t, up.SettleReason, got.SettleReason)
	assert.True(t, got.NotExecuted())
	assert.True(t, got.Settled())
}

// A run reserving right before its first attempt marks the entry sent and
// counts that attempt, and leases it for its own lease.
func testReserveTakesSentAndLease(t *testing.T, j journal.Store) {
	e := Entry("s", "f13")
	e.Sent, e.Attempts, e.LeaseOwner, e.Lease = true, 1, "run-a", 3*time.Hour
	got := reserve(t, j, e)
	assert.True(t, got.Sent)
	assert.Equal(t, 1, got.Attempts)
	assert.WithinDuration(t, got.UpdatedAt.Add(3*time.Hour), got.LeaseUntil, time.Second)
	stored, err := j.Get(ctx(t), "s", "f13")
	require.NoError(t, err)
	assert.True(t, stored.Sent)
	assert.Zero(t, stored.Lease, "the lease length is not stored")
}

func take(t *testing.T, j journal.Store, ref, owner string) payonce.JournalEntry {
	t.Helper()
	got, err := j.Take(ctx(t), payonce.JournalEntry{Scope: "s", Reference: ref, LeaseOwner: owner, Lease: time.Hour})
	require.NoError(t, err)
	return got
}

func testReserveStartsTheFence(t *testing.T, j journal.Store) {
	e := Entry("s", "f0")
	e.LeaseOwner = "run-a"
	got := reserve(t, j, e)
	assert.Equal(t, int64(1), got.Fence, "a created entry is held by its first run")
	assert.False(t, got.Sent, "nothing sent yet")
	assert.Equal(t, "run-a", got.LeaseOwner)
	assert.True(t, got.LeaseUntil.After(got.CreatedAt), "leased for the run to reach its first attempt")
	_, err := j.Take(ctx(t), payonce.JournalEntry{Scope: "s", Reference: "f0", LeaseOwner: "run-b", Lease: time.Hour})
	require.ErrorIs(t, err, payonce.ErrJournalLeased)

	plain := reserve(t, j, Entry("s", "f0-plain"))
	assert.Equal(t, int64(1), plain.Fence)
	assert.Empty(t, plain.LeaseOwner)
}

func testTakeRaisesTheFence(t *testing.T, j journal.Store) {
	reserve(t, j, Entry("s", "f1"))
	a := take(t, j, "f1", "run-a")
	assert.Equal(t, int64(2), a.Fence)
	assert.Equal(t, "run-a", a.LeaseOwner)
	assert.True(t, a.LeaseUntil.After(a.UpdatedAt.Add(50*time.Minute)))
	again := take(t, j, "f1", "run-a")
	assert.Equal(t, int64(3), again.Fence, "every take raises it, the same owner's too")
	stored, err := j.Get(ctx(t), "s", "f1")
	require.NoError(t, err)
	assert.Equal(t, int64(3), stored.Fence)

	_, err = j.Take(ctx(t), payonce.JournalEntry{Scope: "s", Reference: "absent", LeaseOwner: "run-a", Lease: time.Hour})
	require.ErrorIs(t, err, journal.ErrNotFound)
	_, err = j.Take(ctx(t), payonce.JournalEntry{Scope: "s", Reference: "f1", Lease: time.Hour})
	require.Error(t, err, "no owner")
	_, err = j.Take(ctx(t), payonce.JournalEntry{Scope: "s", Reference: "f1", LeaseOwner: "w"})
	require.Error(t, err, "no lease")
}

func testTakeRespectsALiveLease(t *testing.T, j journal.Store) {
	reserve(t, j, Entry("s", "f2"))
	a := take(t, j, "f2", "run-a")
	got, err := j.Take(ctx(t), payonce.JournalEntry{Scope: "s", Reference: "f2", LeaseOwner: "run-b", Lease: time.Hour})
	require.ErrorIs(t, err, payonce.ErrJournalLeased)
	assert.Equal(t, "run-a", got.LeaseOwner, "the refusal returns the entry")
	stored, err := j.Get(ctx(t), "s", "f2")
	require.NoError(t, err)
	assert.Equal(t, a.Fence, stored.Fence, "a refused take changes nothing")

	// An expired lease is taken.
	reserve(t, j, Entry("s", "f2-short"))
	_, err = j.Take(ctx(t), payonce.JournalEntry{Scope: "s", Reference: "f2-short", LeaseOwner: "run-a", Lease: time.Millisecond})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		b, err := j.Take(ctx(t), payonce.JournalEntry{Scope: "s", Reference: "f2-short", LeaseOwner: "run-b", Lease: time.Hour})
		return err == nil && b.LeaseOwner == "run-b"
	}, 30*time.Second, 5*time.Millisecond)
}

func testStaleFenceIsRefused(t *testing.T, j journal.Store) {
	e := reserve(t, j, Entry("s", "f3"))
	a := take(t, j, "f3", "run-a") // fence 2
	b := take(t, j, "f3", "run-a") // fence 3: the first take is stale
	require.Equal(t, a.Fence+1, b.Fence)

	for _, st := range []payonce.JournalState{payonce.JournalPending, payonce.JournalFailed} {
		stale := e
		stale.Fence, stale.State, stale.LastCause, stale.ErrorKind = a.Fence, st, "stale", "invalid_request"
		require.ErrorIs(t, j.Update(ctx(t), stale), payonce.ErrJournalFenced, string(st))
	}
	_, err := j.BeginAttempt(ctx(t), payonce.JournalEntry{Scope: "s", Reference: "f3", Fence: a.Fence, LeaseOwner: "run-a", Lease: time.Hour})
	require.ErrorIs(t, err, payonce.ErrJournalFenced)
	stored, err := j.Get(ctx(t), "s", "f3")
	require.NoError(t, err)
	assert.Equal(t, payonce.JournalPending, stored.State)
	assert.Empty(t, stored.LastCause, "nothing of the stale writer landed")
	assert.False(t, stored.Sent)
	assert.Equal(t, b.Fence, stored.Fence)

	cur := e
	cur.Fence, cur.State, cur.ErrorKind = b.Fence, payonce.JournalFailed, "invalid_request"
	require.NoError(t, j.Update(ctx(t), cur), "the current fence writes")
}

func testBeginAttemptMarksSent(t *testing.T, j journal.Store) {
	e := Entry("s", "f4")
	e.LeaseOwner = "run-a"
	got := reserve(t, j, e)
	at, err := j.BeginAttempt(ctx(t), payonce.JournalEntry{Scope: "s", Reference: "f4", Fence: got.Fence, LeaseOwner: "run-a", Lease: time.Hour})
	require.NoError(t, err)
	assert.True(t, at.Sent)
	assert.Equal(t, 1, at.Attempts)
	assert.True(t, at.LeaseUntil.After(at.UpdatedAt.Add(50*time.Minute)), "the lease is renewed")
	at, err = j.BeginAttempt(ctx(t), payonce.JournalEntry{Scope: "s", Reference: "f4", Fence: got.Fence, LeaseOwner: "run-a", Lease: time.Hour})
	require.NoError(t, err)
	assert.Equal(t, 2, at.Attempts)
	stored, err := j.Get(ctx(t), "s", "f4")
	require.NoError(t, err)
	assert.True(t, stored.Sent, "durable")
	assert.Equal(t, 2, stored.Attempts)

	_, err = j.BeginAttempt(ctx(t), payonce.JournalEntry{Scope: "s", Reference: "absent", Fence: 1, LeaseOwner: "run-a", Lease: time.Hour})
	require.ErrorIs(t, err, journal.ErrNotFound)
	_, err = j.BeginAttempt(ctx(t), payonce.JournalEntry{Scope: "s", Reference: "f4", Fence: 1, Lease: time.Hour})
	require.Error(t, err, "no owner")
}

func testSuccessLandsWhateverTheFence(t *testing.T, j journal.Store) {
	e := reserve(t, j, Entry("s", "f5"))
	take(t, j, "f5", "run-b") // run of fence 1 is stale now
	ok := e
	ok.State, ok.Result, ok.StatusCode, ok.Fence = payonce.JournalSucceeded, []byte(`{"id":"ch_1"}`), 201, 1
	require.NoError(t, j.Update(ctx(t), ok), "a 2xx records what the provider did")
	got, err := j.Get(ctx(t), "s", "f5")
	require.NoError(t, err)
	assert.Equal(t, payonce.JournalSucceeded, got.State)
	assert.Empty(t, got.LeaseOwner)

	at, err := j.BeginAttempt(ctx(t), payonce.JournalEntry{Scope: "s", Reference: "f5", Fence: got.Fence, LeaseOwner: "run-b", Lease: time.Hour})
	require.ErrorIs(t, err, journal.ErrSettled, "a settled entry is not sent again")
	assert.Equal(t, payonce.JournalSucceeded, at.State, "the refusal returns the entry")
	tk, err := j.Take(ctx(t), payonce.JournalEntry{Scope: "s", Reference: "f5", LeaseOwner: "run-c", Lease: time.Hour})
	require.ErrorIs(t, err, journal.ErrSettled)
	assert.Equal(t, payonce.JournalSucceeded, tk.State)
}

func testSuccessReplacesFailed(t *testing.T, j journal.Store) {
	e := reserve(t, j, Entry("s", "f6"))
	b := take(t, j, "f6", "run-b")
	failed := e
	failed.State, failed.ErrorKind, failed.StatusCode, failed.Fence = payonce.JournalFailed, "invalid_request", 400, b.Fence
	require.NoError(t, j.Update(ctx(t), failed))

	ok := e
	ok.State, ok.Result, ok.StatusCode, ok.Fence = payonce.JournalSucceeded, []byte(`{"id":"ch_1"}`), 201, 1
	require.NoError(t, j.Update(ctx(t), ok), "a 2xx under the key wins over a recorded failure")
	got, err := j.Get(ctx(t), "s", "f6")
	require.NoError(t, err)
	assert.Equal(t, payonce.JournalSucceeded, got.State)
	assert.Equal(t, 201, got.StatusCode)
	assert.Empty(t, got.ErrorKind)

	failed.Fence = got.Fence
	require.ErrorIs(t, j.Update(ctx(t), failed), journal.ErrSettled, "succeeded is terminal")
}

func testClaimRaisesTheFence(t *testing.T, j journal.Store) {
	e := reserve(t, j, Entry("s", "f7"))
	got, err := j.Claim(ctx(t), journal.ClaimRequest{Scope: "s", Owner: "w1", Lease: time.Hour})
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, e.Fence+1, got[0].Fence)
	stale := e
	stale.LastCause = "late"
	require.ErrorIs(t, j.Update(ctx(t), stale), payonce.ErrJournalFenced, "a claim takes the entry from its last run")
	// The claimer's run takes the entry as the lease's owner.
	tk := take(t, j, "f7", "w1")
	assert.Equal(t, got[0].Fence+1, tk.Fence)
}

func testTakeRefusesAnotherFingerprint(t *testing.T, j journal.Store) {
	e := reserve(t, j, Entry("s", "f8"))
	_, err := j.Take(ctx(t), payonce.JournalEntry{Scope: "s", Reference: "f8", LeaseOwner: "run-a", Lease: time.Hour, Fingerprint: "other"})
	require.ErrorIs(t, err, payonce.ErrIdempotencyConflict)
	got, err := j.Take(ctx(t), payonce.JournalEntry{Scope: "s", Reference: "f8", LeaseOwner: "run-a", Lease: time.Hour, Fingerprint: e.Fingerprint})
	require.NoError(t, err)
	assert.Equal(t, e.Fingerprint, got.Fingerprint)
	assert.Equal(t, e.Fence+1, got.Fence, "the refused take did not raise the fence")
}

func testAttemptsNeverDecrease(t *testing.T, j journal.Store) {
	e := reserve(t, j, Entry("s", "f9"))
	up := e
	up.Attempts = 4
	require.NoError(t, j.Update(ctx(t), up))
	up.Attempts = 1
	require.NoError(t, j.Update(ctx(t), up))
	got, err := j.Get(ctx(t), "s", "f9")
	require.NoError(t, err)
	assert.Equal(t, 4, got.Attempts)
}

func testUpdateEndsTheLease(t *testing.T, j journal.Store) {
	e := reserve(t, j, Entry("s", "f10"))
	a := take(t, j, "f10", "run-a")
	up := e
	up.Fence, up.LastCause = a.Fence, "503"
	require.NoError(t, j.Update(ctx(t), up))
	got, err := j.Get(ctx(t), "s", "f10")
	require.NoError(t, err)
	assert.Empty(t, got.LeaseOwner, "the run is over")
	take(t, j, "f10", "run-b")
}

// The times a journal fills in are its clock's: Now's when it has one
// (PostgreSQL's now()), else the machine's.
func testTimesAreTheJournalsClock(t *testing.T, j journal.Store) {
	now, err := j.Now(ctx(t))
	require.NoError(t, err)
	e := Entry("s", "f11")
	e.CreatedAt, e.UpdatedAt = time.Time{}, time.Time{}
	got := reserve(t, j, e)
	require.False(t, got.CreatedAt.IsZero())
	assert.True(t, got.UpdatedAt.Equal(got.CreatedAt))
	ref := time.Now()
	if !now.IsZero() {
		ref = now
	}
	assert.WithinDuration(t, ref, got.CreatedAt, time.Minute)
	tk := take(t, j, "f11", "run-a")
	assert.WithinDuration(t, tk.UpdatedAt.Add(time.Hour), tk.LeaseUntil, time.Second, "the lease runs from the journal's now")
	after, err := j.Now(ctx(t))
	require.NoError(t, err)
	if !now.IsZero() {
		assert.False(t, after.Before(now), "the journal's clock does not run back")
		assert.False(t, tk.UpdatedAt.After(after.Add(time.Second)))
	}
}

// FingerprintBinding checks, for a backend's ReserveTx (reserveTx runs it
// in a transaction of its own and commits), that an entry reserved
// without a fingerprint is bound by the first Take that brings one, and
// from then on refuses another body.
func FingerprintBinding(t *testing.T, j journal.Store, reserveTx func(ctx context.Context, e payonce.JournalEntry) (payonce.JournalEntry, bool, error)) {
	t.Helper()
	e := Entry("s", "bind-1")
	e.Fingerprint = ""
	got, created, err := reserveTx(ctx(t), e)
	require.NoError(t, err)
	require.True(t, created)
	assert.Empty(t, got.Fingerprint)
	fp := corekit.Fingerprint("POST", "/charge/", []byte(`{"amount":"10.00"}`))
	tk, err := j.Take(ctx(t), payonce.JournalEntry{Scope: "s", Reference: "bind-1", LeaseOwner: "run-a", Lease: time.Hour, Fingerprint: fp})
	require.NoError(t, err)
	assert.Equal(t, fp, tk.Fingerprint, "the first run binds the body it sends")
	other := corekit.Fingerprint("POST", "/charge/", []byte(`{"amount":"99.00"}`))
	_, err = j.Take(ctx(t), payonce.JournalEntry{Scope: "s", Reference: "bind-1", LeaseOwner: "run-a", Lease: time.Hour, Fingerprint: other})
	require.ErrorIs(t, err, payonce.ErrIdempotencyConflict)
	stored, err := j.Get(ctx(t), "s", "bind-1")
	require.NoError(t, err)
	assert.Equal(t, fp, stored.Fingerprint)
	assert.Equal(t, tk.Fence, stored.Fence)
}
