package payonce_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/corekit"
	"github.com/payonce/payonce/journal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// inDoubt leaves reference ref pending, sent, past its window: every call
// with it then returns ErrOutcomeUnknown.
func inDoubt(t *testing.T, j payonce.Journal, clk *clock, ref string) (*payonce.Client, *stub) {
	t.Helper()
	s := newStub(t, unavailable)
	c := journalClient(t, s, j, clk)
	_, err := c.Do(t.Context(), chargeReq("10.00"), nil, payonce.WithReference(ref))
	require.ErrorIs(t, err, payonce.ErrRetriesExhausted)
	clk.Advance(23*time.Hour + 30*time.Minute)
	_, err = c.Do(t.Context(), chargeReq("10.00"), nil, payonce.WithReference(ref))
	require.ErrorIs(t, err, payonce.ErrOutcomeUnknown)
	return c, s
}

// A merchant finds the in-doubt charge at the provider and settles the
// entry as succeeded with the provider's answer: later calls decode it
// from the journal, nothing sent, and the reason is kept.
func TestSettleSucceededAnswersFromTheJournal(t *testing.T) {
	j := journal.NewMemory()
	c, s := inDoubt(t, j, newClock(), "order-s1")
	sent := s.calls.Load()
	e, err := c.Settle(t.Context(), "order-s1", payonce.Settlement{State: payonce.JournalSucceeded,
		Result: []byte(`{"id":"ch_found","status":"confirmed","card":{"number":"4111111111111111"}}`), RequestID: "req-9",
		Reason: "found by listing charges: ch_found"})
	require.NoError(t, err)
	assert.Equal(t, payonce.JournalSucceeded, e.State)
	assert.Equal(t, 200, e.StatusCode)
	assert.Equal(t, "found by listing charges: ch_found", e.SettleReason)
	assert.NotContains(t, string(e.Result), "4111111111111111", "the result is redacted like any other")

	var out chargeOut
	meta, err := c.Do(t.Context(), chargeReq("10.00"), &out, payonce.WithReference("order-s1"))
	require.NoError(t, err)
	assert.True(t, meta.FromJournal)
	assert.Equal(t, "ch_found", out.ID)
	assert.Equal(t, sent, s.calls.Load(), "nothing sent")

	_, err = c.Settle(t.Context(), "order-s1", payonce.Settlement{State: payonce.JournalFailed, NotExecuted: true, Reason: "second thoughts"})
	require.ErrorIs(t, err, journal.ErrSettled, "succeeded is terminal")
	assert.Equal(t, e.Key, payonce.KeyOf(err).String())
}

// Settled as failed or not executed, later calls get a typed error that
// says so (never ErrOutcomeUnknown), nothing sent; a failed entry may
// still be settled as succeeded.
func TestSettleFailedAndNotExecuted(t *testing.T) {
	for _, tc := range []struct {
		settle payonce.Settlement
		kind   error
	}{{payonce.Settlement{State: payonce.JournalFailed}, payonce.ErrSettledFailed}, {payonce.Settlement{State: payonce.JournalFailed, NotExecuted: true}, payonce.ErrNotExecuted}} {
		t.Run(tc.kind.Error(), func(t *testing.T) {
			j := journal.NewMemory()
			c, s := inDoubt(t, j, newClock(), "order-s2")
			sent := s.calls.Load()
			_, err := c.Settle(t.Context(), "order-s2", func() payonce.Settlement {
				s := tc.settle
				s.Reason = "no charge at the provider for the key"
				return s
			}())
			require.NoError(t, err)
			_, err = c.Do(t.Context(), chargeReq("10.00"), nil, payonce.WithReference("order-s2"))
			require.ErrorIs(t, err, tc.kind)
			var fromJournal *payonce.APIError
			require.True(t, errors.As(err, &fromJournal) && fromJournal.FromJournal, "answered from the journal")
			assert.NotErrorIs(t, err, payonce.ErrOutcomeUnknown)
			assert.False(t, payonce.IsResumable(err))
			assert.Contains(t, err.Error(), "no charge at the provider for the key")
			assert.Equal(t, sent, s.calls.Load())

			_, err = c.Settle(t.Context(), "order-s2", payonce.Settlement{State: payonce.JournalFailed, Reason: "again"})
			require.ErrorIs(t, err, journal.ErrSettled)
			e, err := c.Settle(t.Context(), "order-s2", payonce.Settlement{State: payonce.JournalSucceeded,
				Result: []byte(`{"id":"ch_late"}`), Reason: "the charge showed up after all"})
			require.NoError(t, err, "a success found later wins over a failure")
			assert.Equal(t, payonce.JournalSucceeded, e.State)
		})
	}
}

func TestSettleRefusesBadInput(t *testing.T) {
	j := journal.NewMemory()
	c, _ := inDoubt(t, j, newClock(), "order-s3")
	for name, s := range map[string]payonce.Settlement{
		"no reason":           {State: payonce.JournalFailed, NotExecuted: true},
		"no outcome":          {Reason: "x"},
		"success, no result":  {State: payonce.JournalSucceeded, Reason: "x"},
		"success, not JSON":   {State: payonce.JournalSucceeded, Result: []byte("ch_1"), Reason: "x"},
		"success, not a 2xx":  {State: payonce.JournalSucceeded, Result: []byte(`{}`), StatusCode: 400, Reason: "x"},
		"failure with result": {State: payonce.JournalFailed, Result: []byte(`{}`), Reason: "x"},
		"reason control char": {State: payonce.JournalFailed, Reason: "a\nb"},
	} {
		_, err := c.Settle(t.Context(), "order-s3", s)
		require.ErrorIs(t, err, payonce.ErrInvalidRequest, name)
	}
	_, err := c.Settle(t.Context(), "absent", payonce.Settlement{State: payonce.JournalFailed, Reason: "x"})
	require.ErrorIs(t, err, journal.ErrNotFound)
	e, err := j.Get(t.Context(), "a55:client-1", "order-s3")
	require.NoError(t, err)
	assert.Equal(t, payonce.JournalPending, e.State, "a refused settlement changes nothing")

	noJournal := journalClient(t, newStub(t, okCharge), nil, newClock())
	_, err = noJournal.Settle(t.Context(), "order-s3", payonce.Settlement{State: payonce.JournalFailed, Reason: "x"})
	require.ErrorIs(t, err, payonce.ErrInvalidConfig)
}

// Settle takes the entry like a run: a run still holding a live lease
// refuses it (let the run finish), and once the entry is settled the late
// non-success write of a run that lost it is refused.
func TestSettleIsFenced(t *testing.T) {
	clk := newClock()
	j := journal.NewMemory().WithClock(clk.Now)
	var c *payonce.Client
	var leasedErr, settleErr error
	s := newStub(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		_, leasedErr = c.Settle(context.Background(), "order-s4", payonce.Settlement{State: payonce.JournalFailed, NotExecuted: true, Reason: "too early"})
		clk.Advance(time.Hour) // the run stalls past its lease
		_, settleErr = c.Settle(context.Background(), "order-s4", payonce.Settlement{State: payonce.JournalFailed, Reason: "found in error status"})
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	c = journalClient(t, s, j, clk)
	_, err := c.Do(t.Context(), chargeReq("10.00"), nil, payonce.WithReference("order-s4"))
	require.ErrorIs(t, err, payonce.ErrSettledFailed, "the run stops and answers the settled outcome")
	require.ErrorIs(t, leasedErr, payonce.ErrJournalLeased)
	require.NoError(t, settleErr)
	assert.Equal(t, int32(1), s.calls.Load(), "nothing sent after the entry was settled")
	e, gerr := j.Get(t.Context(), "a55:client-1", "order-s4")
	require.NoError(t, gerr)
	assert.Equal(t, payonce.JournalFailed, e.State)
	assert.Equal(t, "settled_failed", e.ErrorKind)
	assert.Equal(t, "found in error status", e.SettleReason)
}

// An entry whose key is past its window before anything was ever sent
// under it (a first delivery of a job reserved long ago) is recorded as not
// executed, never in doubt: the first call gets ErrKeyExpired, later ones
// say it never ran.
func TestEntryNeverSentIsNotInDoubt(t *testing.T) {
	j := journal.NewMemory()
	clk := newClock()
	s := newStub(t, okCharge)
	c := journalClient(t, s, j, clk)
	_, _, err := j.Reserve(t.Context(), payonce.JournalEntry{Scope: "a55:client-1", Reference: "order-s5", Operation: "charges.create",
		Method: http.MethodPost, Path: "/charge/", Key: "order-s5-reserved-key", KeyCreated: clk.Now().Add(-30 * time.Hour),
		Fingerprint: corekit.Fingerprint(http.MethodPost, "/charge/", []byte(`{"amount":"1.00"}`))})
	require.NoError(t, err)

	_, err = c.Do(t.Context(), chargeReq("1.00"), nil, payonce.WithReference("order-s5"))
	require.Error(t, err)
	assert.NotErrorIs(t, err, payonce.ErrOutcomeUnknown, "nothing was ever sent: not in doubt")
	assert.ErrorIs(t, err, payonce.ErrKeyExpired)
	e, gerr := j.Get(t.Context(), "a55:client-1", "order-s5")
	require.NoError(t, gerr)
	assert.Equal(t, payonce.JournalFailed, e.State, "recorded as not sent")

	_, err = c.Do(t.Context(), chargeReq("1.00"), nil, payonce.WithReference("order-s5"))
	require.Error(t, err)
	assert.NotErrorIs(t, err, payonce.ErrOutcomeUnknown)
	assert.ErrorIs(t, err, payonce.ErrNotExecuted)
	assert.Zero(t, s.calls.Load(), "nothing sent")
}
