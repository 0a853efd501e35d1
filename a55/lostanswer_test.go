package a55_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/journal"
	"github.com/payonce/payonce/payoncetest"
)

// lostTimeout has srv's next charge create answer TIMEOUT after the
// charge was made (then), and that answer lost on the way: A55 keeps no
// answer under the key, so a blind re-send runs the charge again.
func lostTimeout(t *testing.T, srv *a55test.Server, then string) {
	t.Helper()
	require.NoError(t, srv.AddAnswer(a55test.Answer{Code: a55test.AnswerTimeout, Executed: true, Then: then, Path: a55test.ChargePath, Count: 1}))
	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: a55test.ChargePath, Count: 1}))
}

// chargesOf counts the charges the fake made under key, whatever their
// status (a declined charge is no ledger operation but is still a charge).
func chargesOf(t *testing.T, c *a55.Client, key string) int {
	t.Helper()
	n := 0
	for ch, err := range c.Charges.All(t.Context(), &a55.ChargeListOptions{IdempotencyKey: key}) {
		require.NoError(t, err)
		if ch.IdempotencyKey == key {
			n++
		}
	}
	return n
}

// A TIMEOUT that made the charge, whose answer is lost on the way, leaves
// nothing stored under the key: the create is looked up before anything
// is sent again, and the charge found, which reports the key (the fake's
// extension), is its answer. One charge, one attempt.
func TestLostTimeoutIsLookedUpBeforeResend(t *testing.T) {
	srv, c := fakeAnswering(t, false)
	lostTimeout(t, srv, "")
	ch, err := c.Charges.Create(t.Context(), settleCharge("42.00"))
	require.NoError(t, err)
	key := ch.Meta.Key.String()
	assert.Equal(t, 1, srv.Ledger().Count(key), "charged once")
	assert.Equal(t, 1, ch.Meta.Attempts, "nothing sent again under the key")
	assert.True(t, ch.Status.Is(a55.StatusConfirmed))
	assert.Equal(t, "order-1", ch.Description)
}

// Answering as A55 documents (no key in a charge), the one charge that
// matches a call without a journal cannot be told from another order's
// of the same amount and description: the create stops in doubt with its
// key, naming the charge, and nothing is sent again. Charged once.
func TestLostTimeoutWithoutAJournalNamesTheCandidate(t *testing.T) {
	srv, c := fakeAnswering(t, true)
	lostTimeout(t, srv, "")
	_, err := c.Charges.Create(t.Context(), settleCharge("42.00"))
	require.ErrorIs(t, err, payonce.ErrOutcomeUnknown)
	assert.False(t, payonce.IsResumable(err), "never re-sent blindly")
	key := payonce.KeyOf(err).String()
	require.NotEmpty(t, key)
	assert.Equal(t, 1, srv.Ledger().Count(key), "sent once")
	ops := srv.Ledger().ByKey(key)
	require.Len(t, ops, 1)
	assert.Contains(t, err.Error(), ops[0].ID, "the error names the candidate")
	assert.Contains(t, err.Error(), "none carries its key")
}

// fakeAnswering is newFake, answering as A55 documents (no key in a
// charge) when documented.
func fakeAnswering(t *testing.T, documented bool) (*a55test.Server, *a55.Client) {
	t.Helper()
	opts := []payoncetest.Option{payoncetest.WithSeed(7)}
	if documented {
		opts = append(opts, payoncetest.WithDocumentedAnswers())
	}
	srv := a55test.New(t, opts...)
	c, err := srv.Client(payonce.WithRetryPolicy(fastPolicy()))
	require.NoError(t, err)
	return srv, c
}

// The same with a journal: the charge found is recorded as the entry's
// outcome, and the next call with the reference answers it from the
// journal, sending nothing. Answering as A55 documents, the one match no
// other entry holds or could have made is the entry's.
func TestLostTimeoutIsRecordedFromTheLookup(t *testing.T) {
	for name, documented := range map[string]bool{"fake": false, "documented": true} {
		t.Run(name, func(t *testing.T) {
			opts := []payoncetest.Option{payoncetest.WithSeed(7)}
			if documented {
				opts = append(opts, payoncetest.WithDocumentedAnswers())
			}
			srv := a55test.New(t, opts...)
			j := journal.NewMemory()
			c, err := srv.Client(payonce.WithJournal(j), payonce.WithRetryPolicy(fastPolicy()))
			require.NoError(t, err)
			lostTimeout(t, srv, "")
			ch, err := c.Charges.Create(t.Context(), settleCharge("42.00"), payonce.WithReference("order-1/charge"))
			require.NoError(t, err)
			key := ch.Meta.Key.String()
			assert.Equal(t, 1, srv.Ledger().Count(key), "charged once")
			assert.Equal(t, 1, ch.Meta.Attempts, "nothing sent again under the key")
			e, err := j.Get(t.Context(), c.Core().Scope(), "order-1/charge")
			require.NoError(t, err)
			assert.Equal(t, payonce.JournalSucceeded, e.State)
			assert.Equal(t, ch.UUID, e.ResourceID)

			before := len(srv.Requests())
			again, err := c.Charges.Create(t.Context(), settleCharge("42.00"), payonce.WithReference("order-1/charge"))
			require.NoError(t, err)
			assert.Equal(t, ch.UUID, again.UUID)
			assert.Len(t, srv.Requests(), before, "answered from the journal")
			assert.Equal(t, 1, srv.Ledger().Count(key))
		})
	}
}

// A lost TIMEOUT whose charge was declined is the create's failure, with
// the charge; nothing is sent again.
func TestLostTimeoutDeclinedIsTheFailure(t *testing.T) {
	srv, c := newFake(t)
	lostTimeout(t, srv, a55test.StatusDeclined)
	_, err := c.Charges.Create(t.Context(), settleCharge("42.00"))
	require.ErrorIs(t, err, a55.ErrCardDeclined)
	got, ok := a55.ChargeFromError(err)
	require.True(t, ok)
	assert.True(t, got.Status.Is(a55.StatusDeclined))
	assert.Equal(t, 1, chargesOf(t, c, payonce.KeyOf(err).String()), "one charge, declined")
}

// A lost answer whose lookup finds nothing (nothing ran: the connection
// was reset before the body was read) is sent again under the key, once.
func TestLostAnswerWithNothingFoundIsSentAgain(t *testing.T) {
	srv, c := newFake(t)
	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultResetBeforeRead, Path: a55test.ChargePath, Count: 1}))
	ch, err := c.Charges.Create(t.Context(), settleCharge("42.00"))
	require.NoError(t, err)
	assert.Equal(t, 2, ch.Meta.Attempts)
	assert.Equal(t, 1, srv.Ledger().Count(ch.Meta.Key.String()))
}

// Two charges matching the request in the key's window (another order
// with the same description and amount, made just before): the lookup
// cannot tell which is the create's, so nothing is sent again and the
// create is in doubt, with its key.
func TestLostAnswerAmbiguousLookupStopsInDoubt(t *testing.T) {
	srv, c := fakeAnswering(t, true)
	_, err := c.Charges.Create(t.Context(), settleCharge("42.00"))
	require.NoError(t, err)
	lostTimeout(t, srv, "")
	_, err = c.Charges.Create(t.Context(), settleCharge("42.00"))
	require.ErrorIs(t, err, payonce.ErrOutcomeUnknown)
	assert.False(t, payonce.IsResumable(err), "never re-sent blindly")
	key := payonce.KeyOf(err).String()
	require.NotEmpty(t, key)
	assert.Equal(t, 1, srv.Ledger().Count(key), "sent once")
}

// lostBeforeCommit has srv's next charge create lose its answer having
// made nothing: the connection is reset before the body is read.
func lostBeforeCommit(t *testing.T, srv *a55test.Server) {
	t.Helper()
	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultResetBeforeRead, Path: a55test.ChargePath, Count: 1}))
}

// documentedJournaled is a fake answering as A55 documents (no key in a
// charge) and a client of it on a memory journal.
func documentedJournaled(t *testing.T) (*a55test.Server, *journal.Memory, *a55.Client) {
	t.Helper()
	srv := a55test.New(t, payoncetest.WithSeed(7), payoncetest.WithDocumentedAnswers())
	j := journal.NewMemory()
	c, err := srv.Client(payonce.WithJournal(j), payonce.WithRetryPolicy(fastPolicy()))
	require.NoError(t, err)
	return srv, j, c
}

// Order B, of the same amount and description, is charged and recorded;
// order A's create then loses its answer having made nothing. The only
// charge the lookup finds is B's, which the journal holds as B's
// outcome: it is left out, nothing of A's ran, and A is sent again under
// its key and charged once, with its own charge.
func TestLostAnswerNeverTakesAChargeAnotherEntryHolds(t *testing.T) {
	srv, j, c := documentedJournaled(t)
	b, err := c.Charges.Create(t.Context(), settleCharge("42.00"), payonce.WithReference("order-B/charge"))
	require.NoError(t, err)

	lostBeforeCommit(t, srv)
	a, err := c.Charges.Create(t.Context(), settleCharge("42.00"), payonce.WithReference("order-A/charge"))
	require.NoError(t, err)
	assert.NotEqual(t, b.UUID, a.UUID, "A is not paid with B's charge")
	assert.Equal(t, 2, a.Meta.Attempts, "sent again under A's key")
	assert.Equal(t, 1, srv.Ledger().Count(a.Meta.Key.String()), "A charged once")
	assert.Equal(t, 1, srv.Ledger().Count(b.Meta.Key.String()), "B charged once")

	e, err := j.Get(t.Context(), c.Core().Scope(), "order-A/charge")
	require.NoError(t, err)
	assert.Equal(t, payonce.JournalSucceeded, e.State)
	assert.Equal(t, a.UUID, e.ResourceID, "A's entry holds A's charge")
}

// Order B's charge is made but B is still in doubt (its TIMEOUT named a
// charge still pending); order A's create then loses its answer having
// made nothing. B's charge could be either's: A stops in doubt, nothing
// sent again and nothing recorded, never settled with B's charge.
func TestLostAnswerContestedByAnEntryInDoubtStopsInDoubt(t *testing.T) {
	srv, j, c := documentedJournaled(t)
	require.NoError(t, srv.AddAnswer(a55test.Answer{Code: a55test.AnswerTimeout, Executed: true, Hold: true, Path: a55test.ChargePath, Count: 1}))
	_, err := c.Charges.Create(t.Context(), settleCharge("42.00"), payonce.WithReference("order-B/charge"))
	require.ErrorIs(t, err, payonce.ErrOutcomeUnknown, "B in doubt: its charge is pending")
	bCharge, ok := a55.ChargeFromError(err)
	require.True(t, ok)

	lostBeforeCommit(t, srv)
	_, err = c.Charges.Create(t.Context(), settleCharge("42.00"), payonce.WithReference("order-A/charge"))
	require.ErrorIs(t, err, payonce.ErrOutcomeUnknown)
	assert.False(t, payonce.IsResumable(err), "never re-sent blindly")
	key := payonce.KeyOf(err).String()
	require.NotEmpty(t, key)
	assert.Zero(t, srv.Ledger().Count(key), "nothing of A's ran, and nothing was sent again")
	assert.Contains(t, err.Error(), bCharge.UUID, "the error names the charge it could not attribute")
	if ch, ok := a55.ChargeFromError(err); ok {
		assert.NotEqual(t, bCharge.UUID, ch.UUID, "B's charge is not given as A's")
	}

	e, err := j.Get(t.Context(), c.Core().Scope(), "order-A/charge")
	require.NoError(t, err)
	assert.Equal(t, payonce.JournalPending, e.State, "A stays in doubt")
	assert.Empty(t, e.ResourceID)
}

// Without a journal, order B's charge, of the same amount and
// description, is made by another client; order A's create then loses
// its answer having made nothing. A55's charges carry no key, so the one
// charge that matches cannot be told from another order's: A stops in
// doubt with its key, naming the charge, and nothing is sent again.
func TestLostAnswerWithoutAJournalNeverTakesAnotherOrdersCharge(t *testing.T) {
	srv, c := fakeAnswering(t, true)
	other, err := srv.Client(payonce.WithRetryPolicy(fastPolicy()))
	require.NoError(t, err)
	b, err := other.Charges.Create(t.Context(), settleCharge("42.00"))
	require.NoError(t, err)

	lostBeforeCommit(t, srv)
	a, err := c.Charges.Create(t.Context(), settleCharge("42.00"))
	if err == nil {
		assert.NotEqual(t, b.UUID, a.UUID, "A returned B's charge as its own")
		return
	}
	require.ErrorIs(t, err, payonce.ErrOutcomeUnknown)
	assert.False(t, payonce.IsResumable(err))
	key := payonce.KeyOf(err).String()
	require.NotEmpty(t, key)
	assert.Zero(t, srv.Ledger().Count(key), "nothing sent again under A's key")
	assert.Contains(t, err.Error(), b.UUID, "the error names the candidate charge")
	if ch, ok := a55.ChargeFromError(err); ok {
		assert.NotEqual(t, b.UUID, ch.UUID, "B's charge is not given as A's")
	}
}

// The attempt whose answer is lost is the last the policy allows: a 503
// before anything ran, a reset before the body was read, then a TIMEOUT
// that made the charge, its answer lost on the way. The create is looked
// up before the call ends, as before a retry: ending resumable with its
// key instead would have a job queue send the key again, and A55, which
// keeps nothing but a 2xx under it, charge the order twice. Found (the
// fake reports the key), the charge is the create's; answering as A55
// documents, the call stops in doubt, not resumable. Either way the
// create is resumed as a job queue does, while IsResumable says so, and
// the order is charged once.
func TestLostAnswerOnTheLastAttemptIsLookedUpBeforeTheCallEnds(t *testing.T) {
	for name, documented := range map[string]bool{"fake": false, "documented": true} {
		t.Run(name, func(t *testing.T) {
			opts := []payoncetest.Option{payoncetest.WithSeed(7)}
			if documented {
				opts = append(opts, payoncetest.WithDocumentedAnswers())
			}
			srv := a55test.New(t, opts...)
			p := fastPolicy()
			p.MaxAttempts = 3
			c, err := srv.Client(payonce.WithRetryPolicy(p))
			require.NoError(t, err)
			require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultErrorBeforeCommit, Path: a55test.ChargePath, Nth: 1}))
			require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultResetBeforeRead, Path: a55test.ChargePath, Nth: 2}))
			require.NoError(t, srv.AddAnswer(a55test.Answer{Code: a55test.AnswerTimeout, Executed: true, Path: a55test.ChargePath, Count: 1}))
			require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: a55test.ChargePath, Nth: 3}))

			ch, err := c.Charges.Create(t.Context(), settleCharge("42.00"))
			var key payonce.Key
			for resumes := 0; err != nil && payonce.IsResumable(err) && resumes < 3; resumes++ {
				key = payonce.KeyOf(err)
				ch, err = c.Charges.Create(t.Context(), settleCharge("42.00"), payonce.WithKey(key))
			}
			if documented {
				require.ErrorIs(t, err, payonce.ErrOutcomeUnknown)
				assert.False(t, payonce.IsResumable(err), "never re-sent blindly")
				key = payonce.KeyOf(err)
			} else {
				require.NoError(t, err)
				key = ch.Meta.Key
				assert.Equal(t, 3, ch.Meta.Attempts, "nothing sent after the lost answer")
				assert.Equal(t, "order-1", ch.Description)
			}
			require.False(t, key.IsZero())
			assert.Equal(t, 1, srv.Ledger().Count(key.String()), "charged once")
			sent := 0
			for _, a := range srv.Requests() {
				if a.IdempotencyKey == key.String() {
					sent++
				}
			}
			assert.Equal(t, 3, sent, "three attempts, none after the lost answer")
		})
	}
}
