package payonce_test

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/journal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A run's attempt is in flight when a second run of the same reference
// takes the entry, gets a refusal the table calls final and records
// failed; then the first attempt's 201 arrives (the provider ran it). The
// 2xx wins: the run that got it returns the charge, the journal records
// it, and every later call answers it from the journal.
func TestSuccessArrivingAfterARecordedFailureWins(t *testing.T) {
	j := journal.NewMemory()
	clk := newClock()
	var s *stub
	var c *payonce.Client
	var bErr error
	s = newStub(t, func(n int, w http.ResponseWriter, r *http.Request) {
		switch n {
		case 1:
			// While A's attempt is at the provider, B runs the same
			// reference and is refused.
			_, bErr = c.Do(context.Background(), chargeReq("10.00"), nil, payonce.WithReference("order-p1"))
			okCharge(n, w, r)
		default:
			w.WriteHeader(http.StatusUnprocessableEntity)
			_, _ = io.WriteString(w, `{"error":{"code":"VALIDATION_ERROR","message":"try later"}}`)
		}
	})
	c = journalClient(t, s, j, clk)
	var out chargeOut
	meta, err := c.Do(t.Context(), chargeReq("10.00"), &out, payonce.WithReference("order-p1"))
	require.NoError(t, err, "the caller whose attempt got the 2xx gets the success")
	assert.Equal(t, "ch_1", out.ID)
	assert.False(t, meta.FromJournal)
	// B took over an entry A may have sent under: its refusal is not the
	// outcome (A's attempt may still run, and here it does).
	require.ErrorIs(t, bErr, payonce.ErrOutcomeUnknown, "B's refusal is not final while A's attempt may run")
	assert.NotErrorIs(t, bErr, payonce.ErrInvalidRequest)
	assert.Contains(t, bErr.Error(), "VALIDATION_ERROR", "B's refusal is named")

	e, err := j.Get(t.Context(), "a55:client-1", "order-p1")
	require.NoError(t, err)
	assert.Equal(t, payonce.JournalSucceeded, e.State, "the journal says what the provider did")

	var again chargeOut
	m2, err := c.Do(t.Context(), chargeReq("10.00"), &again, payonce.WithReference("order-p1"))
	require.NoError(t, err)
	assert.True(t, m2.FromJournal)
	assert.Equal(t, "ch_1", again.ID)
	assert.Equal(t, int32(2), s.calls.Load())
}

// A 4xx that the provider does not keep and a later same-key attempt may
// turn into success (an insufficient balance, refused permissions, a
// conflict) leaves the entry pending; a deterministic refusal of the body
// is recorded failed.
func TestOnlyFailuresFinalForTheKeyAreRecordedFailed(t *testing.T) {
	for _, tc := range []struct {
		status int
		body   string
		want   payonce.JournalState
	}{
		{http.StatusBadRequest, `{"message_key":"insufficient_balance"}`, payonce.JournalPending},
		{http.StatusForbidden, `{"error":{"code":"FORBIDDEN"}}`, payonce.JournalPending},
		{http.StatusConflict, `{"message_key":"openapi_idempotency_answer_not_kept"}`, payonce.JournalPending},
		{http.StatusUnauthorized, `{"message_key":"openapi_signature_invalid"}`, payonce.JournalPending},
		{http.StatusBadRequest, `{"error":{"code":"VALIDATION_ERROR"}}`, payonce.JournalFailed},
		{http.StatusNotFound, `{"error":{"code":"NOT_FOUND"}}`, payonce.JournalFailed},
		{http.StatusPaymentRequired, `{"error":{"code":"CARD_DECLINED"}}`, payonce.JournalFailed},
	} {
		t.Run(tc.body, func(t *testing.T) {
			j := journal.NewMemory()
			s := newStub(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, tc.body)
			})
			c := journalClient(t, s, j, newClock())
			_, err := c.Do(t.Context(), chargeReq("1.00"), nil, payonce.WithReference("order-p2"))
			require.Error(t, err)
			e, err := j.Get(t.Context(), "a55:client-1", "order-p2")
			require.NoError(t, err)
			assert.Equal(t, tc.want, e.State)
		})
	}
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

// A redelivery that takes over an entry an earlier run may have sent under
// (that run crashed or stalled after its check) and is then refused with
// a failure final for the key neither records failed nor tells its caller
// "declined": the earlier attempt may still execute. The entry stays
// pending and the caller gets ErrOutcomeUnknown with the refusal's text.
func TestTakeOverRefusedFinallyIsNotTheOutcome(t *testing.T) {
	clk := newClock()
	j := journal.NewMemory().WithClock(clk.Now)
	s := newStub(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusPaymentRequired)
		_, _ = io.WriteString(w, `{"error":{"code":"CARD_DECLINED","message":"declined by the issuer"}}`)
	})
	c := journalClient(t, s, j, clk)
	// The first worker reserved the entry and may have sent its attempt,
	// then died: its lease runs out.
	first := payonce.JournalEntry{Scope: "a55:client-1", Reference: "order-p9", Operation: "charges.create",
		Method: http.MethodPost, Path: "/charge/", Key: "inherited-key-0123456789", KeyCreated: clk.Now(),
		Fingerprint: c.Fingerprint(http.MethodPost, "/charge/", []byte(`{"amount":"1.00"}`)),
		State:       payonce.JournalPending, LeaseOwner: "worker-1", Sent: true, Attempts: 1, Lease: time.Minute}
	_, created, err := j.Reserve(t.Context(), first)
	require.NoError(t, err)
	require.True(t, created)
	clk.Advance(2 * time.Minute)

	_, err = c.Do(t.Context(), chargeReq("1.00"), nil, payonce.WithReference("order-p9"))
	require.Error(t, err)
	assert.ErrorIs(t, err, payonce.ErrOutcomeUnknown)
	assert.NotErrorIs(t, err, payonce.ErrCardDeclined, "the caller must not read 'nothing charged'")
	assert.Equal(t, "inherited-key-0123456789", payonce.KeyOf(err).ID())
	assert.Contains(t, err.Error(), "CARD_DECLINED", "the refusal's text stays")
	assert.Equal(t, int32(1), s.calls.Load())
	e, err := j.Get(t.Context(), "a55:client-1", "order-p9")
	require.NoError(t, err)
	assert.Equal(t, payonce.JournalPending, e.State, "never failed while an earlier attempt may run")
	assert.Contains(t, e.LastCause, "earlier run's attempt may still execute")
}
