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
// is sent again, and the charge found is its answer. One charge, one
// attempt.
// It holds whether the server reports a charge's key (the fake's
// extension) or not (A55's documented answers: the charge is told by
// its fields).
func TestLostTimeoutIsLookedUpBeforeResend(t *testing.T) {
	for name, documented := range map[string]bool{"fake": false, "documented": true} {
		t.Run(name, func(t *testing.T) {
			srv, c := fakeAnswering(t, documented)
			lostTimeout(t, srv, "")
			ch, err := c.Charges.Create(t.Context(), settleCharge("42.00"))
			require.NoError(t, err)
			key := ch.Meta.Key.String()
			assert.Equal(t, 1, srv.Ledger().Count(key), "charged once")
			assert.Equal(t, 1, ch.Meta.Attempts, "nothing sent again under the key")
			assert.True(t, ch.Status.Is(a55.StatusConfirmed))
			assert.Equal(t, "order-1", ch.Description)
		})
	}
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
// journal, sending nothing.
func TestLostTimeoutIsRecordedFromTheLookup(t *testing.T) {
	srv := a55test.New(t)
	j := journal.NewMemory()
	c, err := srv.Client(payonce.WithJournal(j), payonce.WithRetryPolicy(fastPolicy()))
	require.NoError(t, err)
	lostTimeout(t, srv, "")
	ch, err := c.Charges.Create(t.Context(), settleCharge("42.00"), payonce.WithReference("order-1/charge"))
	require.NoError(t, err)
	key := ch.Meta.Key.String()
	assert.Equal(t, 1, srv.Ledger().Count(key), "charged once")
	e, err := j.Get(t.Context(), c.Core().Scope(), "order-1/charge")
	require.NoError(t, err)
	assert.Equal(t, payonce.JournalSucceeded, e.State)

	before := len(srv.Requests())
	again, err := c.Charges.Create(t.Context(), settleCharge("42.00"), payonce.WithReference("order-1/charge"))
	require.NoError(t, err)
	assert.Equal(t, ch.UUID, again.UUID)
	assert.Len(t, srv.Requests(), before, "answered from the journal")
	assert.Equal(t, 1, srv.Ledger().Count(key))
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
