package payonce_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/corekit"
	"github.com/payonce/payonce/internal/keytest"
	"github.com/payonce/payonce/journal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
	assert.NotEmpty(t, payonce.KeyOf(err).ID())
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
// key gets ErrKeyExpired. Within a minute a future time is taken
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
	assert.Equal(t, key, payonce.KeyOf(err).ID())
	assert.Zero(t, s.calls.Load(), "nothing sent")

	// Journaled: refused the same way, nothing reserved.
	j := journal.NewMemory()
	cj := journalClient(t, s, j, clk)
	_, err = cj.Do(t.Context(), chargeReq("1.00"), nil, payonce.WithKey(edited), payonce.WithReference("order-c3"))
	require.ErrorIs(t, err, payonce.ErrKeyCreatedInFuture)
	_, gerr := j.Get(t.Context(), "a55:client-1", "order-c3")
	require.ErrorIs(t, gerr, payonce.ErrJournalNotFound)

	slightly := keytest.Key(t, "order-c3-other-key-1", clk.Now().Add(corekit.KeyClockTolerance/2))
	meta, err := c.Do(t.Context(), chargeReq("1.00"), nil, payonce.WithKey(slightly))
	require.NoError(t, err)
	assert.True(t, meta.Key.Created().Equal(clk.Now()), "a clock a little ahead is the present")
	assert.Zero(t, s.calls.Load()-1)
}
