package journal_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/coinepay"
	"github.com/payonce/payonce/coinepay/coinepaytest"
	"github.com/payonce/payonce/journal"
	"github.com/payonce/payonce/journal/pgjournal"
	"github.com/payonce/payonce/journal/sqlitejournal"
	"github.com/payonce/payonce/payoncetest"
)

// backend opens a journal; "process" is a second handle on the same
// storage, as another process would open it.
type backend struct {
	name string
	open func(t *testing.T) (journal.Store, func(t *testing.T) journal.Store)
	// dump returns every column of every row of j, as text.
	dump func(t *testing.T, j journal.Store) string
}

func backends(t *testing.T) []backend {
	bs := []backend{
		{"memory", func(t *testing.T) (journal.Store, func(t *testing.T) journal.Store) {
			m := &rowRecorder{Store: journal.NewMemory()}
			return m, func(*testing.T) journal.Store { return m }
		}, dumpMemory},
		{"sqlite", func(t *testing.T) (journal.Store, func(t *testing.T) journal.Store) {
			path := filepath.Join(t.TempDir(), "journal.db")
			open := func(t *testing.T) journal.Store {
				j, err := sqlitejournal.Open(t.Context(), path)
				require.NoError(t, err)
				t.Cleanup(func() { _ = j.Close() })
				return j
			}
			return open(t), open
		}, dumpSQLite},
	}
	if url := os.Getenv("PAYONCE_POSTGRES_URL"); url != "" {
		bs = append(bs, backend{"postgres", func(t *testing.T) (journal.Store, func(t *testing.T) journal.Store) {
			pool, err := pgxpool.New(t.Context(), url)
			require.NoError(t, err)
			t.Cleanup(pool.Close)
			schema := fmt.Sprintf("payonce_e2e_%d", time.Now().UnixNano())
			t.Cleanup(func() {
				_, _ = pool.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
			})
			open := func(t *testing.T) journal.Store {
				j, err := pgjournal.Open(t.Context(), url, pgjournal.WithSchema(schema))
				require.NoError(t, err)
				t.Cleanup(j.Close)
				return j
			}
			return open(t), open
		}, dumpPostgres})
	} else {
		t.Log("PAYONCE_POSTGRES_URL is not set: the end-to-end tests run without PostgreSQL")
	}
	return bs
}

func a55Client(t *testing.T, srv *a55test.Server, j journal.Store, extra ...payonce.Option) *a55.Client {
	t.Helper()
	opts := []payonce.Option{payonce.WithRetryPolicy(payoncetest.FastRetryPolicy()), payoncetest.ClientClock(srv.Clock().Now)}
	if j != nil {
		opts = append(opts, payonce.WithJournal(j))
	}
	c, err := srv.Client(append(opts, extra...)...)
	require.NoError(t, err)
	return c
}

func coinepayClient(t *testing.T, srv *coinepaytest.Server, j journal.Store) *coinepay.Client {
	t.Helper()
	opts := []payonce.Option{payonce.WithRetryPolicy(payoncetest.FastRetryPolicy()), payoncetest.ClientClock(srv.Clock().Now),
		payonce.WithSigner(srv.Signer())}
	if j != nil {
		opts = append(opts, payonce.WithJournal(j))
	}
	c, err := srv.Client(opts...)
	require.NoError(t, err)
	return c
}

// coinepayScope is the scope coinepayClient records under.
func coinepayScope(t *testing.T, srv *coinepaytest.Server) string {
	t.Helper()
	s, err := coinepay.Scope(srv.APIKey(), srv.Secret(), srv.URL)
	require.NoError(t, err)
	return s
}

func chargeRequest(number string) *a55.ChargeCreateRequest {
	amount, _ := payonce.ParseAmount("100.00")
	return a55test.Complete(&a55.ChargeCreateRequest{
		InstallmentValue: amount, Currency: payonce.BRL, TypeCharge: a55.TypeCreditCard,
		Card: &payonce.Card{Number: payonce.CardNumber(number), HolderName: "TEST", ExpirationMonth: "12", ExpirationYear: "2099", CVV: "987"},
	})
}

// Story: an A55 charge resumed 25 hours later with the journal returns the
// stored result; the customer is charged once.
func TestA55ChargeResumed25HoursLaterIsAnsweredByTheJournal(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			srv := a55test.New(t)
			j, reopen := b.open(t)
			ch, err := a55Client(t, srv, j).Charges.Create(t.Context(), chargeRequest("4111111111111111"), payonce.WithReference("order-42/charge"))
			require.NoError(t, err)
			require.True(t, srv.Ledger().ExecutedOnce(ch.Meta.Key.String()))

			srv.Clock().Advance(25 * time.Hour) // the server has forgotten the key
			again, err := a55Client(t, srv, reopen(t)).Charges.Create(t.Context(), chargeRequest("4111111111111111"), payonce.WithReference("order-42/charge"))
			require.NoError(t, err)
			assert.True(t, again.Meta.FromJournal)
			assert.Equal(t, ch.UUID, again.UUID)
			assert.Equal(t, ch.Status, again.Status)
			assert.Equal(t, ch.Meta.Key, again.Meta.Key)
			assert.Equal(t, 1, srv.Ledger().Len(), "charged once")
		})
	}
}

// Story: a queue job redelivered 25 hours later to a fresh process opens
// no second card: with a journal the stored result answers; with only
// the job's key (NewKey with the job's creation time) the key-age guard refuses (ErrKeyExpired), nothing sent.
func TestCoinepayJobRedelivered25HoursLaterOpensNoSecondCard(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			srv := coinepaytest.New(t)
			j, reopen := b.open(t)
			jobCreated := srv.Clock().Now()
			key, err := payonce.NewKey(jobCreated, "openapi:apply", "job-42")
			require.NoError(t, err)
			ctx, job := t.Context(), payonce.WithKey(key)
			req := &coinepay.ApplyRequest{HeaderID: "h1", PackageID: "p1"}
			res, err := coinepayClient(t, srv, j).Cards.Apply(ctx, req, job, payonce.WithReference("job-42"))
			require.NoError(t, err)
			assert.Equal(t, "openapi:apply:job-42", res.Meta.Key.String())

			srv.Clock().Advance(25 * time.Hour)
			again, err := coinepayClient(t, srv, reopen(t)).Cards.Apply(ctx, req, job, payonce.WithReference("job-42"))
			require.NoError(t, err)
			assert.True(t, again.Meta.FromJournal)
			assert.Equal(t, res.Card.CardID, again.Card.CardID)
			assert.Equal(t, 1, srv.Ledger().Count("openapi:apply:job-42"), "one card")

			// Without a journal, the job's creation time still protects.
			_, err = coinepayClient(t, srv, nil).Cards.Apply(ctx, req, job)
			require.ErrorIs(t, err, payonce.ErrKeyExpired)
			assert.Equal(t, 1, srv.Ledger().Len(), "one card")
		})
	}
}

// Story: a key stored by its text form in one process is resumed in
// another with its creation time: 23.5 hours on, the guard refuses it.
func TestStoredKeyFromAnotherProcessKeepsTheGuard(t *testing.T) {
	srv := a55test.New(t)
	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultErrorBeforeCommit, Path: a55test.ChargePath, Count: 100, Status: 503}))
	_, err := a55Client(t, srv, nil).Charges.Create(t.Context(), chargeRequest("4111111111111111"))
	require.ErrorIs(t, err, payonce.ErrRetriesExhausted)
	stored, merr := payonce.KeyOf(err).MarshalText()
	require.NoError(t, merr)
	srv.ClearFaults()

	srv.Clock().Advance(23*time.Hour + 30*time.Minute)
	before := len(srv.Requests())
	key, perr := payonce.ParseKey(string(stored))
	require.NoError(t, perr)
	_, err = a55Client(t, srv, nil).Charges.Create(t.Context(), chargeRequest("4111111111111111"), payonce.WithKey(key))
	require.ErrorIs(t, err, payonce.ErrKeyExpired)
	assert.Equal(t, before, len(srv.Requests()), "nothing sent")
	assert.Zero(t, srv.Ledger().Len())
}

// Crash between send and answer: the charge committed but neither the
// answer nor the journal's record survived. The next run with the
// reference resumes with the recorded key: the server replays, one charge.
func TestCrashBetweenSendAndAnswerChargesOnce(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			srv := a55test.New(t)
			j, reopen := b.open(t)
			// The answer is lost after the commit, no retry is allowed,
			// and the lookup that follows a lost answer fails too: the
			// entry is left in doubt, to be looked up first.
			policy := payoncetest.FastRetryPolicy()
			policy.MaxAttempts = 1
			require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: a55test.ChargePath, Count: 1}))
			require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultErrorBeforeCommit, Path: a55.PathChargeList, Count: 1}))
			_, err := a55Client(t, srv, j, payonce.WithRetryPolicy(policy)).Charges.Create(t.Context(), chargeRequest("4111111111111111"), payonce.WithReference("order-7"))
			require.ErrorIs(t, err, payonce.ErrOutcomeUnknown)
			require.Equal(t, 1, srv.Ledger().Len())

			// The next run with the reference looks the charge up and
			// records it: nothing sent under the key again.
			ch, err := a55Client(t, srv, reopen(t)).Charges.Create(t.Context(), chargeRequest("4111111111111111"), payonce.WithReference("order-7"))
			require.NoError(t, err)
			assert.Equal(t, 1, srv.Ledger().Len(), "charged once")
			assert.True(t, srv.Ledger().ExecutedOnce(ch.Meta.Key.String()))
			e, err := reopen(t).Get(t.Context(), "a55:"+srv.ClientID()+"@"+srv.URL, "order-7")
			require.NoError(t, err)
			assert.Equal(t, payonce.JournalSucceeded, e.State)
			assert.Equal(t, 1, e.Attempts, "looked up, never sent again")
		})
	}
}

func TestSameReferenceOtherBodyDeclinedAndOutcomeUnknown(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			srv := a55test.New(t)
			j, _ := b.open(t)
			c := a55Client(t, srv, j)
			ctx := t.Context()

			// Same reference, another body: a conflict before sending.
			_, err := c.Charges.Create(ctx, chargeRequest("4111111111111111"), payonce.WithReference("order-1"))
			require.NoError(t, err)
			other := chargeRequest("4111111111111111")
			other.Description = "another order"
			sent := len(srv.Requests())
			_, err = c.Charges.Create(ctx, other, payonce.WithReference("order-1"))
			require.ErrorIs(t, err, payonce.ErrIdempotencyConflict)
			assert.Equal(t, sent, len(srv.Requests()))

			// Declined: recorded as failed, the same typed error again.
			_, err1 := c.Charges.Create(ctx, chargeRequest("4000000000000002"), payonce.WithReference("order-2"))
			require.ErrorIs(t, err1, a55.ErrCardDeclined)
			sent = len(srv.Requests())
			_, err2 := c.Charges.Create(ctx, chargeRequest("4000000000000002"), payonce.WithReference("order-2"))
			require.ErrorIs(t, err2, a55.ErrCardDeclined)
			assert.Equal(t, sent, len(srv.Requests()), "nothing sent")
			var a1, a2 *payonce.APIError
			require.ErrorAs(t, err1, &a1)
			require.ErrorAs(t, err2, &a2)
			assert.Equal(t, a1.Code, a2.Code)
			assert.Equal(t, a1.StatusCode, a2.StatusCode)

			// Pending past the guard: ErrOutcomeUnknown, nothing sent.
			require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultErrorBeforeCommit, Path: a55test.ChargePath, Count: 100, Status: 503}))
			_, err = c.Charges.Create(ctx, chargeRequest("4111111111111111"), payonce.WithReference("order-3"))
			require.ErrorIs(t, err, payonce.ErrRetriesExhausted)
			srv.ClearFaults()
			srv.Clock().Advance(23*time.Hour + 30*time.Minute)
			sent = len(srv.Requests())
			_, err = c.Charges.Create(ctx, chargeRequest("4111111111111111"), payonce.WithReference("order-3"))
			require.ErrorIs(t, err, payonce.ErrOutcomeUnknown)
			assert.Equal(t, sent, len(srv.Requests()))
			entry, ok := payonce.JournalEntryOf(err)
			require.True(t, ok)
			assert.Equal(t, payonce.JournalPending, entry.State)

			// Recovery lists it.
			pending, err := j.Pending(ctx, journal.PendingQuery{Scope: "a55:" + srv.ClientID() + "@" + srv.URL})
			require.NoError(t, err)
			require.Len(t, pending, 1)
			assert.Equal(t, "order-3", pending[0].Reference)
		})
	}
}

// Recovery in a fleet: workers claim pending entries with a lease, one
// worker per entry; even two workers resuming one entry execute it once.
func TestWorkersClaimAndResumePendingEntriesOnce(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			srv := a55test.New(t)
			j, reopen := b.open(t)
			// Three connections reset before anything ran: three entries
			// pending, resumable with their keys.
			require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultResetBeforeRead, Path: a55test.ChargePath, Count: 3}))
			policy := payoncetest.FastRetryPolicy()
			policy.MaxAttempts = 1
			c := a55Client(t, srv, j, payonce.WithRetryPolicy(policy))
			order := func(ref string) *a55.ChargeCreateRequest {
				r := chargeRequest("4111111111111111")
				r.Description = ref // a description per order: lookups tell them apart
				return r
			}
			for i := range 3 {
				ref := fmt.Sprintf("order-%d", i)
				_, err := c.Charges.Create(t.Context(), order(ref), payonce.WithReference(ref))
				require.Error(t, err)
			}
			require.Zero(t, srv.Ledger().Len())

			w1, err := j.Claim(t.Context(), journal.ClaimRequest{Owner: "worker-1", Lease: time.Minute, Limit: 2})
			require.NoError(t, err)
			w2, err := reopen(t).Claim(t.Context(), journal.ClaimRequest{Owner: "worker-2", Lease: time.Minute})
			require.NoError(t, err)
			require.Len(t, w1, 2)
			require.Len(t, w2, 1)
			assert.NotEqual(t, w1[0].Reference, w2[0].Reference)
			assert.NotEqual(t, w1[1].Reference, w2[0].Reference)

			// Each worker resumes its entries as their lease owner; worker 2
			// also (wrongly) resumes one of worker 1's: worker 1's lease
			// refuses it (nothing sent), or worker 1 has finished and the
			// journal answers. Either way one execution.
			resume := func(j journal.Store, ref, owner string) error {
				_, err := a55Client(t, srv, j).Charges.Create(context.Background(), order(ref),
					payonce.WithReference(ref), payonce.WithLeaseOwner(owner))
				return err
			}
			errs := make(chan error, 3)
			for _, e := range w1 {
				go func() { errs <- resume(j, e.Reference, "worker-1") }()
			}
			go func() { errs <- resume(reopen(t), w2[0].Reference, "worker-2") }()
			wrong := resume(reopen(t), w1[0].Reference, "worker-2")
			if wrong != nil {
				require.ErrorIs(t, wrong, payonce.ErrJournalLeased)
				assert.True(t, payonce.IsResumable(wrong))
			}
			for range 3 {
				require.NoError(t, <-errs)
			}
			assert.Equal(t, 3, srv.Ledger().Len(), "three orders, three charges")
			pending, err := j.Pending(t.Context(), journal.PendingQuery{})
			require.NoError(t, err)
			assert.Empty(t, pending)
		})
	}
}

// An insufficient balance stays pending (the server does not store that
// answer): after a top-up the same reference resumes with the same key and
// the card is issued once.
func TestInsufficientBalanceStaysPendingAndResumesAfterTopUp(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			srv := coinepaytest.New(t)
			j, reopen := b.open(t)
			srv.SetBalance(srv.APIKey(), payoncetest.Amount("0.00"))
			req := &coinepay.ApplyRequest{HeaderID: "h1", PackageID: "p1"}
			_, err := coinepayClient(t, srv, j).Cards.Apply(t.Context(), req, payonce.WithReference("job-9"))
			require.ErrorIs(t, err, coinepay.ErrInsufficientBalance)
			e, err := j.Get(t.Context(), coinepayScope(t, srv), "job-9")
			require.NoError(t, err)
			assert.Equal(t, payonce.JournalPending, e.State)
			assert.Equal(t, "insufficient_balance", e.ErrorKind)

			srv.SetBalance(srv.APIKey(), payoncetest.Amount("1000.00"))
			res, err := coinepayClient(t, srv, reopen(t)).Cards.Apply(t.Context(), req, payonce.WithReference("job-9"))
			require.NoError(t, err)
			assert.Equal(t, e.Key, res.Meta.Key.String())
			assert.Equal(t, 1, srv.Ledger().Count(e.Key), "one card")
		})
	}
}

// skewedJournal is a journal whose clock (Now) runs offset from the
// machine's, as a PostgreSQL server's does from a worker's.
type skewedJournal struct {
	journal.Store
	offset time.Duration
}

func (s skewedJournal) Now(context.Context) (time.Time, error) {
	return time.Now().Add(s.offset), nil
}

// Story: a worker whose clock is a few minutes ahead of (or a day behind)
// the journal's runs a fresh order without a key of its own: the key made
// for it is created on the journal's clock, so it is sent once, neither
// refused as created in the future nor as past its window.
func TestFreshKeyOnASkewedWorkerIsSentOnce(t *testing.T) {
	for _, skew := range []time.Duration{5 * time.Minute, -30 * time.Hour} {
		cases := []backend{{name: "memory-clock", open: func(t *testing.T) (journal.Store, func(t *testing.T) journal.Store) {
			j := skewedJournal{journal.NewMemory(), 0}
			return j, func(*testing.T) journal.Store { return j }
		}}}
		for _, b := range backends(t) {
			if b.name == "postgres" {
				cases = append(cases, b)
			}
		}
		for _, b := range cases {
			t.Run(fmt.Sprintf("%s/%s", b.name, skew), func(t *testing.T) {
				srv := a55test.New(t)
				srv.Clock().Advance(skew) // the worker's (and the fake's) clock
				j, _ := b.open(t)
				c := a55Client(t, srv, j)
				ch, err := c.Charges.Create(t.Context(), chargeRequest("4111111111111111"),
					payonce.WithReference("order-7/charge"))
				require.NoError(t, err)
				assert.True(t, srv.Ledger().ExecutedOnce(ch.Meta.Key.String()))
				e, err := j.Get(t.Context(), c.Core().Scope(), "order-7/charge")
				require.NoError(t, err)
				assert.Equal(t, payonce.JournalSucceeded, e.State)
			})
		}
	}
}

// A worker that claimed an entry in doubt and resumes it under its lease
// (WithLeaseOwner) settles it when its lookup finds the charge: the
// journal records what the provider did, not only the caller's answer.
func TestClaimedEntryInDoubtIsRecordedByItsWorkersLookup(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			srv := a55test.New(t)
			j, _ := b.open(t)
			require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: a55test.ChargePath, Count: 1}))
			require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultErrorBeforeCommit, Path: a55.PathChargeList, Count: 1}))
			one := payoncetest.FastRetryPolicy()
			one.MaxAttempts = 1
			req := chargeRequest("4111111111111111")
			req.Description = "order-claimed"
			_, err := a55Client(t, srv, j, payonce.WithRetryPolicy(one)).Charges.Create(t.Context(), req, payonce.WithReference("order-claimed"))
			require.ErrorIs(t, err, payonce.ErrOutcomeUnknown)

			claimed, err := j.Claim(t.Context(), journal.ClaimRequest{Owner: "worker-1", Lease: time.Minute})
			require.NoError(t, err)
			require.Len(t, claimed, 1)
			ch, err := a55Client(t, srv, j).Charges.Create(t.Context(), req, payonce.WithReference("order-claimed"), payonce.WithLeaseOwner("worker-1"))
			require.NoError(t, err)
			e, err := j.Get(t.Context(), claimed[0].Scope, "order-claimed")
			require.NoError(t, err)
			assert.Equal(t, payonce.JournalSucceeded, e.State, "the lookup's finding is recorded")
			assert.Equal(t, ch.UUID, e.ResourceID)
			assert.Equal(t, 1, srv.Ledger().Len())
		})
	}
}
