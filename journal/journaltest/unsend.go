package journaltest

import (
	"testing"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/journal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// unsendTests check payonce.JournalUnsender, for a backend that has it.
var unsendTests = []struct {
	name string
	fn   func(t *testing.T, j journal.Store)
}{
	{"UnsendMarksNeverSent", testUnsendMarksNeverSent},
	{"UnsendKeepsTheRules", testUnsendKeepsTheRules},
}

func unsender(t *testing.T, j journal.Store) payonce.JournalUnsender {
	t.Helper()
	u, ok := j.(payonce.JournalUnsender)
	if !ok {
		t.Skipf("%T has no Unsend", j)
	}
	return u
}

// A run that marked its entry sent and sent nothing records its pending
// outcome as never sent: Sent false, no attempt counted, the lease ended,
// the cause kept.
func testUnsendMarksNeverSent(t *testing.T, j journal.Store) {
	u := unsender(t, j)
	e := Entry("s", "u1")
	e.Sent, e.Attempts, e.LeaseOwner, e.Lease = true, 1, "run-a", time.Hour
	got := reserve(t, j, e)
	at, err := j.BeginAttempt(ctx(t), payonce.JournalEntry{Scope: "s", Reference: "u1", Fence: got.Fence, LeaseOwner: "run-a", Lease: time.Hour})
	require.NoError(t, err)
	require.Equal(t, 2, at.Attempts)
	up := got
	up.LastCause, up.ErrorKind = "sign: the token endpoint refused the credentials", "unauthorized"
	require.NoError(t, u.Unsend(ctx(t), up))
	stored, err := j.Get(ctx(t), "s", "u1")
	require.NoError(t, err)
	assert.Equal(t, payonce.JournalPending, stored.State)
	assert.False(t, stored.Sent)
	assert.Zero(t, stored.Attempts)
	assert.Empty(t, stored.LeaseOwner)
	assert.True(t, stored.LeaseUntil.IsZero())
	assert.Equal(t, up.LastCause, stored.LastCause)
	assert.Equal(t, got.Fence, stored.Fence)
	taken := take(t, j, "u1", "run-b")
	assert.False(t, taken.Sent, "the next run takes it as never sent")
}

// Unsend writes only what Update would: a pending entry under the
// writer's fence; a stale fence, a settled entry, an absent one or an
// outcome that is not pending are refused and change nothing.
func testUnsendKeepsTheRules(t *testing.T, j journal.Store) {
	u := unsender(t, j)
	e := Entry("s", "u2")
	e.Sent, e.Attempts = true, 1
	got := reserve(t, j, e)
	newer := take(t, j, "u2", "run-b")
	stale := got
	stale.LastCause = "stale"
	require.ErrorIs(t, u.Unsend(ctx(t), stale), payonce.ErrJournalFenced)
	stored, err := j.Get(ctx(t), "s", "u2")
	require.NoError(t, err)
	assert.True(t, stored.Sent, "a stale writer never clears the mark")
	assert.Empty(t, stored.LastCause)

	failed := newer
	failed.State = payonce.JournalFailed
	require.ErrorIs(t, u.Unsend(ctx(t), failed), journal.ErrInvalidEntry)
	done := newer
	done.State, done.Result, done.StatusCode = payonce.JournalSucceeded, []byte(`{"id":"ch_1"}`), 200
	require.NoError(t, j.Update(ctx(t), done))
	require.ErrorIs(t, u.Unsend(ctx(t), newer), journal.ErrSettled)
	stored, err = j.Get(ctx(t), "s", "u2")
	require.NoError(t, err)
	assert.Equal(t, payonce.JournalSucceeded, stored.State)
	assert.True(t, stored.Sent)

	absent := Entry("s", "u-absent")
	absent.Fence = 1
	require.ErrorIs(t, u.Unsend(ctx(t), absent), journal.ErrNotFound)
}
