package payonce_test

import (
	"context"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payonce/payonce/payoncetest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/internal/corekit"
	"github.com/payonce/payonce/internal/testsupport/keytest"
	"github.com/payonce/payonce/journal"
)

// countingJournal counts the durable writes a run makes.
type countingJournal struct {
	*journal.Memory
	reserves, takes, attempts, updates atomic.Int32
}

func (j *countingJournal) Reserve(ctx context.Context, e payonce.JournalEntry) (payonce.JournalEntry, bool, error) {
	j.reserves.Add(1)
	return j.Memory.Reserve(ctx, e)
}

func (j *countingJournal) Take(ctx context.Context, r payonce.JournalEntry) (payonce.JournalEntry, error) {
	j.takes.Add(1)
	return j.Memory.Take(ctx, r)
}

func (j *countingJournal) BeginAttempt(ctx context.Context, r payonce.JournalEntry) (payonce.JournalEntry, error) {
	j.attempts.Add(1)
	return j.Memory.BeginAttempt(ctx, r)
}

func (j *countingJournal) Update(ctx context.Context, e payonce.JournalEntry) error {
	j.updates.Add(1)
	return j.Memory.Update(ctx, e)
}

// A new operation costs two durable writes (the reservation, which marks
// the entry sent and stands for its first attempt's check, and the
// outcome); every further attempt one check; a resumed entry a take and
// a check per attempt. Every attempt is counted before it is sent.
func TestJournaledRunWrites(t *testing.T) {
	j := &countingJournal{Memory: journal.NewMemory()}
	s := newStub(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if n <= 2 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		okCharge(n, w, r)
	})
	c := journalClient(t, s, j, newClock())
	_, err := c.Do(t.Context(), chargeReq("1.00"), nil, payonce.WithReference("order-w1"))
	require.NoError(t, err)
	assert.Equal(t, int32(1), j.reserves.Load())
	assert.Equal(t, int32(2), j.attempts.Load(), "the two retries are checked; the first attempt is the reservation's")
	assert.Equal(t, int32(1), j.updates.Load())
	e, err := j.Get(t.Context(), "a55:client-1", "order-w1")
	require.NoError(t, err)
	assert.Equal(t, 3, e.Attempts)
	assert.True(t, e.Sent)

	// A resumed entry: a take, then a check before its attempt.
	j2 := &countingJournal{Memory: journal.NewMemory()}
	fail := true
	s2 := newStub(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if fail {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		okCharge(n, w, r)
	})
	policy := payoncetest.FastRetryPolicy()
	policy.MaxAttempts = 1
	c2 := journalClient(t, s2, j2, newClock(), payonce.WithRetryPolicy(policy))
	_, err = c2.Do(t.Context(), chargeReq("1.00"), nil, payonce.WithReference("order-w2"))
	require.Error(t, err)
	fail = false
	_, err = c2.Do(t.Context(), chargeReq("1.00"), nil, payonce.WithReference("order-w2"))
	require.NoError(t, err)
	assert.Equal(t, int32(1), j2.takes.Load())
	assert.Equal(t, int32(1), j2.attempts.Load())
	e, err = j2.Get(t.Context(), "a55:client-1", "order-w2")
	require.NoError(t, err)
	assert.Equal(t, 2, e.Attempts)
}

// hookLimiter runs hook on its first Wait: just before the first attempt.
type hookLimiter struct {
	calls atomic.Int32
	hook  func()
}

func (l *hookLimiter) Wait(context.Context) error {
	if l.calls.Add(1) == 1 {
		l.hook()
	}
	return nil
}

// Another run of the same client takes and settles the entry between a
// run's reservation and its first attempt: the first run does not take
// its reservation for a check, finds the entry settled and sends nothing.
func TestRunTakenByItsOwnClientBeforeTheFirstAttemptChecks(t *testing.T) {
	j := journal.NewMemory()
	s := newStub(t, okCharge)
	var c *payonce.Client
	var second error
	lim := &hookLimiter{hook: func() {
		_, second = c.Do(context.Background(), chargeReq("1.00"), nil, payonce.WithReference("order-w3"))
	}}
	c = journalClient(t, s, j, newClock(), payonce.WithLimiter(lim))
	var out chargeOut
	meta, err := c.Do(t.Context(), chargeReq("1.00"), &out, payonce.WithReference("order-w3"))
	require.NoError(t, second)
	require.NoError(t, err)
	assert.True(t, meta.FromJournal, "answered from the entry the other run settled")
	assert.Equal(t, "ch_1", out.ID)
	assert.Equal(t, int32(1), s.calls.Load(), "one attempt sent, by the run that held the entry")
}

// A run whose lease ends while its attempt is in flight, and whose entry
// another worker takes meanwhile, gets a failure final for the key (a
// decline for insufficient funds). Neither provider keeps that answer, so
// the entry's holder may still send the same key and be charged: the run
// does not give the decline as the operation's outcome but says it lost
// the entry (ErrJournalFenced: call again for the outcome), and the entry
// stays pending for its holder.
func TestRunTakenOverMidAttemptDoesNotAnswerItsFinalFailure(t *testing.T) {
	clk := newClock()
	j := journal.NewMemory().WithClock(clk.Now)
	inflight, release := make(chan struct{}), make(chan struct{})
	s := newStub(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		close(inflight)
		<-release
		w.WriteHeader(http.StatusPaymentRequired)
		_, _ = io.WriteString(w, `{"charge_uuid":"c1","status":"error","message":[{"code":"INSUFFICIENT_FUNDS","source":"charge","description":"no funds"}]}`)
	})
	c := journalClient(t, s, j, clk, payonce.WithTestCodec(a55.Codec{}), payonce.WithJournalLease(time.Minute))
	took := make(chan error, 1)
	go func() {
		<-inflight
		clk.Advance(2 * time.Minute) // the run's lease ends while it waits
		_, err := j.Take(context.Background(), payonce.JournalEntry{Scope: "a55:client-1", Reference: "order-t1", LeaseOwner: "worker-2", Lease: time.Minute})
		took <- err
		close(release)
	}()
	_, err := c.Do(t.Context(), chargeReq("1.00"), nil, payonce.WithReference("order-t1"))
	require.NoError(t, <-took)
	var ae *payonce.APIError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, payonce.ErrJournalFenced, ae.Kind, "the run lost the entry: its decline is not the outcome")
	assert.NotErrorIs(t, err, a55.ErrCardDeclined)
	assert.NotEmpty(t, ae.Key)
	e, gerr := j.Get(t.Context(), "a55:client-1", "order-t1")
	require.NoError(t, gerr)
	assert.Equal(t, payonce.JournalPending, e.State)
	assert.Equal(t, "worker-2", e.LeaseOwner)
}

// Two clients of one process given the same lease owner (a worker's name,
// WithLeaseOwner) share the entry's lease, so the second takes at once an
// entry the first just reserved: the first client's run, whose registry
// of held entries never saw that take, still checks its fence before its
// first attempt, finds the entry settled and sends nothing.
func TestRunTakenBySameOwnerOfAnotherClientChecks(t *testing.T) {
	j := journal.NewMemory()
	s := newStub(t, okCharge)
	other := journalClient(t, s, j, newClock())
	var second error
	lim := &hookLimiter{hook: func() {
		_, second = other.Do(context.Background(), chargeReq("1.00"), nil, payonce.WithReference("order-w4"), payonce.WithLeaseOwner("worker-1"))
	}}
	c := journalClient(t, s, j, newClock(), payonce.WithLimiter(lim))
	var out chargeOut
	meta, err := c.Do(t.Context(), chargeReq("1.00"), &out, payonce.WithReference("order-w4"), payonce.WithLeaseOwner("worker-1"))
	require.NoError(t, second)
	require.NoError(t, err)
	assert.True(t, meta.FromJournal, "answered from the entry the other client settled")
	assert.Equal(t, int32(1), s.calls.Load(), "one attempt sent, by the run that held the entry")
}

// stallingJournal moves the clock by stall during every BeginAttempt: the
// check before an attempt waited that long (a lock, a stalled database).
type stallingJournal struct {
	*journal.Memory
	clk   *clock
	stall time.Duration
}

func (j *stallingJournal) BeginAttempt(ctx context.Context, r payonce.JournalEntry) (payonce.JournalEntry, error) {
	j.clk.Advance(j.stall)
	return j.Memory.BeginAttempt(ctx, r)
}

// A resumed entry whose key is inside its window when the check before
// the attempt starts, and past it when that check returns two hours later,
// is not sent: the key's age is measured again after the check.
func TestAttemptCheckThatOutlastsTheKeyWindowSendsNothing(t *testing.T) {
	clk := newClock()
	j := &stallingJournal{Memory: journal.NewMemory(), clk: clk}
	s := newStub(t, unavailable)
	c := journalClient(t, s, j, clk, payonce.WithRetryPolicy(func() payonce.RetryPolicy {
		p := payoncetest.FastRetryPolicy()
		p.MaxAttempts = 1
		return p
	}()))
	_, err := c.Do(t.Context(), chargeReq("1.00"), nil, payonce.WithReference("order-w5"))
	require.Error(t, err)
	sent := s.calls.Load()
	clk.Advance(22 * time.Hour) // inside the window less its margin (23 h)
	j.stall = 2 * time.Hour
	_, err = c.Do(t.Context(), chargeReq("1.00"), nil, payonce.WithReference("order-w5"))
	require.Error(t, err)
	assert.Equal(t, sent, s.calls.Load(), "nothing sent once the key is past its window")
	var ae *payonce.APIError
	require.ErrorAs(t, err, &ae)
	assert.NotEmpty(t, ae.Key)
	assert.False(t, ae.Key.Created().IsZero())
}

// A run that lost the entry to a claim (its lease ran out: a long pause)
// while it waited to retry sends nothing more: the next attempt's check in
// the journal refuses it.
func TestRunTakenOverSendsNothingMore(t *testing.T) {
	clk := newClock()
	j := journal.NewMemory().WithClock(clk.Now)
	s := newStub(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 1 {
			clk.Advance(time.Hour) // the run stalls past its lease
			got, err := j.Claim(context.Background(), journal.ClaimRequest{Owner: "worker-2", Lease: time.Hour})
			if err != nil || len(got) != 1 {
				panic("claim failed")
			}
		}
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	c := journalClient(t, s, j, clk)
	_, err := c.Do(t.Context(), chargeReq("1.00"), nil, payonce.WithReference("order-p3"))
	require.Error(t, err)
	assert.True(t, payonce.IsResumable(err), "call again: the journal's holder settles it")
	assert.Equal(t, int32(1), s.calls.Load(), "no attempt after the entry was taken over")
	e, err := j.Get(t.Context(), "a55:client-1", "order-p3")
	require.NoError(t, err)
	assert.Equal(t, "worker-2", e.LeaseOwner, "the stale run did not overwrite the claim")
	assert.Equal(t, 1, e.Attempts)
}

// A run whose entry was claimed while its attempt was in flight cannot
// record a final failure over the claimer's entry.
func TestStaleRunCannotRecordAFailure(t *testing.T) {
	clk := newClock()
	j := journal.NewMemory().WithClock(clk.Now)
	s := newStub(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 1 {
			clk.Advance(time.Hour) // the run stalls past its lease
			if _, err := j.Claim(context.Background(), journal.ClaimRequest{Owner: "worker-2", Lease: time.Hour}); err != nil {
				panic(err)
			}
		}
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error":{"code":"VALIDATION_ERROR"}}`)
	})
	c := journalClient(t, s, j, clk)
	_, err := c.Do(t.Context(), chargeReq("1.00"), nil, payonce.WithReference("order-p4"))
	var ae *payonce.APIError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, payonce.ErrJournalFenced, ae.Kind, "the claimer settles it: its answer is the outcome")
	assert.Equal(t, http.StatusBadRequest, ae.StatusCode, "the run reports what it saw")
	assert.Contains(t, err.Error(), "VALIDATION_ERROR")
	e, err := j.Get(t.Context(), "a55:client-1", "order-p4")
	require.NoError(t, err)
	assert.Equal(t, payonce.JournalPending, e.State, "the stale run's failure did not land")
	assert.Equal(t, "worker-2", e.LeaseOwner)
}

func unavailable(_ int, w http.ResponseWriter, _ *http.Request) {
	w.WriteHeader(http.StatusServiceUnavailable)
}

// A worker whose clock runs 48 h ahead reserves an entry (a journal on the
// machine's clock: SQLite, memory); 30 h later a worker with a correct
// clock comes to it. The stored creation time lies 18 h in its future:
// the key's age is unknown, so nothing is sent (the entry may have been
// sent: ErrOutcomeUnknown) rather than a key past the window.
func TestKeyCreatedByAFastClockIsNeverSentPastTheWindow(t *testing.T) {
	j := journal.NewMemory()
	fast, honest := newClock(), newClock()
	fast.Advance(48 * time.Hour)
	s := newStub(t, unavailable)
	_, err := journalClient(t, s, j, fast).Do(t.Context(), chargeReq("1.00"), nil, payonce.WithReference("order-c1"))
	require.ErrorIs(t, err, payonce.ErrRetriesExhausted)
	sent := s.calls.Load()

	honest.Advance(30 * time.Hour)
	_, err = journalClient(t, s, j, honest).Do(t.Context(), chargeReq("1.00"), nil, payonce.WithReference("order-c1"))
	require.ErrorIs(t, err, payonce.ErrOutcomeUnknown)
	assert.ErrorIs(t, err, payonce.ErrKeyCreatedInFuture, "the cause says why")
	assert.NotEmpty(t, payonce.KeyOf(err).String())
	assert.Equal(t, sent, s.calls.Load(), "nothing sent")
}

// On a journal with a clock of its own (PostgreSQL's now(); memory with
// WithClock here) a worker 48 h ahead creates its keys on the journal's
// clock: 30 h later a correct worker finds the key 30 h old, and nothing
// goes out. The fast worker itself sends nothing either: its own clock may
// only make a key older.
func TestKeyAgesOnTheJournalsClock(t *testing.T) {
	jclk := newClock()
	j := journal.NewMemory().WithClock(jclk.Now)
	fast := newClock()
	fast.Advance(48 * time.Hour)
	s := newStub(t, unavailable)
	_, err := journalClient(t, s, j, fast).Do(t.Context(), chargeReq("1.00"), nil, payonce.WithReference("order-c2"))
	require.Error(t, err)
	e, gerr := j.Get(t.Context(), "a55:client-1", "order-c2")
	require.NoError(t, gerr)
	assert.True(t, e.KeyCreated.Equal(jclk.Now()), "the key was created on the journal's clock")

	jclk.Advance(30 * time.Hour)
	honest := newClock()
	honest.Advance(30 * time.Hour)
	before := s.calls.Load()
	_, err = journalClient(t, s, j, honest).Do(t.Context(), chargeReq("1.00"), nil, payonce.WithReference("order-c2"))
	require.Error(t, err)
	assert.Equal(t, before, s.calls.Load(), "nothing sent past the window")
	assert.Zero(t, before, "the fast worker sent nothing: on its clock the key was already old")
}

// A stored key whose creation time lies in the future (edited, or made
// on a host whose clock runs ahead) is refused with ErrKeyCreatedInFuture
// carrying the key, nothing sent; the honest token of the same 30 h old
// key gets ErrKeyExpired. Within KeyClockTolerance a future time is taken
// as the present.
func TestFutureKeyNeverMakesAKeyYounger(t *testing.T) {
	clk := newClock()
	s := newStub(t, okCharge)
	c := journalClient(t, s, nil, clk)
	key := "order-c3-payment-key"
	honest := keytest.Key(t, key, clk.Now().Add(-30*time.Hour))
	_, err := c.Do(t.Context(), chargeReq("1.00"), nil, payonce.WithKey(honest))
	require.ErrorIs(t, err, payonce.ErrKeyExpired)

	edited := keytest.Key(t, key, clk.Now().Add(time.Hour))
	_, err = c.Do(t.Context(), chargeReq("1.00"), nil, payonce.WithKey(edited))
	require.ErrorIs(t, err, payonce.ErrKeyCreatedInFuture)
	assert.False(t, payonce.IsResumable(err))
	assert.Equal(t, key, payonce.KeyOf(err).String())
	assert.Zero(t, s.calls.Load(), "nothing sent")

	// Journaled: refused the same way, nothing reserved.
	j := journal.NewMemory()
	cj := journalClient(t, s, j, clk)
	_, err = cj.Do(t.Context(), chargeReq("1.00"), nil, payonce.WithKey(edited), payonce.WithReference("order-c3"))
	require.ErrorIs(t, err, payonce.ErrKeyCreatedInFuture)
	_, gerr := j.Get(t.Context(), "a55:client-1", "order-c3")
	require.ErrorIs(t, gerr, journal.ErrNotFound)

	slightly := keytest.Key(t, "order-c3-other-key-1", clk.Now().Add(corekit.KeyClockTolerance/2))
	meta, err := c.Do(t.Context(), chargeReq("1.00"), nil, payonce.WithKey(slightly))
	require.NoError(t, err)
	assert.True(t, meta.Key.Created().Equal(clk.Now()), "a clock a little ahead is the present")
	assert.Zero(t, s.calls.Load()-1)
}
