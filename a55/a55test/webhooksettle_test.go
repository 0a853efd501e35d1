package a55test_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/journal"
	"github.com/payonce/payonce/journal/sqlitejournal"
	"github.com/payonce/payonce/payoncetest"
)

// holdingTransport holds the answer to a charge's creation until release
// is closed, telling answered when it has it: the run that sent the
// charge keeps its journal entry meanwhile.
type holdingTransport struct {
	answered chan struct{}
	release  chan struct{}
	once     sync.Once
}

func (t *holdingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if req.Method == http.MethodPost && req.URL.Path == a55test.ChargePath {
		t.once.Do(func() { close(t.answered) })
		<-t.release
	}
	return resp, err
}

// notices collects what a receiver's handler was given.
type notices struct {
	mu  sync.Mutex
	got []*a55.WebhookNotice
}

func (ns *notices) handle(_ context.Context, n *a55.WebhookNotice) error {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	ns.got = append(ns.got, n)
	return nil
}

func (ns *notices) all() []*a55.WebhookNotice {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	return append([]*a55.WebhookNotice(nil), ns.got...)
}

// A webhook that arrives while the run that created the charge still
// holds its journal entry (the answer is on its way back) does not
// settle it: the run records the outcome itself. The delivery fails
// (500), so that A55 delivers it again, the handler not run; that
// delivery finds the entry settled by its run and hands the event on.
func TestWebhookReceiverFailsTheDeliveryWhileTheRunHoldsTheEntry(t *testing.T) {
	srv, _ := fixedServer(t)
	j := journal.NewMemory().WithClock(srv.Clock().Now)
	hold := &holdingTransport{answered: make(chan struct{}), release: make(chan struct{})}
	c, err := srv.Client(payonce.WithJournal(j), payonce.WithHTTPClient(&http.Client{Transport: hold}))
	require.NoError(t, err)
	var ns notices
	rc := newReceiverOf(t, srv, j, ns.handle, a55.WithWebhookSettle(c, func(r *http.Request, ev *a55.WebhookEvent) string {
		return strings.TrimPrefix(r.URL.Path, "/hooks/a55/") + "/charge"
	}))
	hs := httptest.NewServer(rc)
	t.Cleanup(hs.Close)

	req := hookedCharge(t, a55test.CardConfirms, hs.URL+"/hooks/a55/order-5", true)
	created := make(chan error, 1)
	go func() {
		_, err := c.Charges.Create(context.Background(), req, payonce.WithReference("order-5/charge"))
		created <- err
	}()
	<-hold.answered
	srv.DeliverDueWebhooks() // the first attempt, while the run holds the entry
	ds := srv.WebhookDeliveriesFor(srv.Ledger().Operations()[0].ID)
	require.Len(t, ds, 1)
	assert.Equal(t, []int{http.StatusInternalServerError}, attemptCodes(ds[0]), "held by its run: delivered again later")
	assert.Empty(t, ns.all(), "the handler waits for the entry")
	e, err := j.Get(t.Context(), c.Core().Scope(), "order-5/charge")
	require.NoError(t, err)
	assert.Equal(t, payonce.JournalPending, e.State, "nothing settled under the run")

	close(hold.release)
	require.NoError(t, <-created)
	srv.Clock().Advance(time.Minute)
	srv.DeliverDueWebhooks()
	ds = srv.WebhookDeliveriesFor(ds[0].ChargeUUID)
	assert.Equal(t, []int{http.StatusInternalServerError, http.StatusNoContent}, attemptCodes(ds[0]))
	got := ns.all()
	require.Len(t, got, 1)
	assert.Nil(t, got[0].Settlement, "its run recorded it")
	assert.NoError(t, got[0].SettleErr)
	e, err = j.Get(t.Context(), c.Core().Scope(), "order-5/charge")
	require.NoError(t, err)
	assert.Equal(t, payonce.JournalSucceeded, e.State)
	assert.Equal(t, ds[0].ChargeUUID, e.ResourceID)
}

// inboxJournal is a journal that is also the webhook inbox.
type inboxJournal interface {
	payonce.Journal
	payonce.Inbox
}

// webhookJournals opens each backend that is also an inbox, on the
// clock now.
func webhookJournals(t *testing.T, now func() time.Time) map[string]inboxJournal {
	t.Helper()
	sq, err := sqlitejournal.Open(t.Context(), filepath.Join(t.TempDir(), "journal.db"), sqlitejournal.WithClock(now))
	require.NoError(t, err)
	t.Cleanup(func() { _ = sq.Close() })
	return map[string]inboxJournal{"memory": journal.NewMemory().WithClock(now), "sqlite": sq}
}

// A webhook settles an entry in doubt only with a charge that can be that
// entry's alone, by the rules Charges.SettleCreate follows. Against
// answers without keys (A55's), order A's charge never ran (503 before
// anything executed) and order B, same amount and description, was
// charged; B's webhook reaches A's reference (a reference function that
// is not exact: every charge of a cart names the cart's first order). The
// journal holds B's charge as B's outcome: A is not recorded as paid with
// it. With B's answer lost too, the charge could be either's: A is not
// settled from it either.
func TestWebhookReceiverNeverSettlesWithAnotherOrdersCharge(t *testing.T) {
	for _, backend := range []string{"memory", "sqlite"} {
		for _, lostB := range []bool{false, true} {
			t.Run(backend+map[bool]string{false: "/B-recorded", true: "/B-in-doubt"}[lostB], func(t *testing.T) {
				srv := a55test.New(t, payoncetest.WithDocumentedAnswers(), payoncetest.WithClock(payoncetest.NewFixedClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))))
				j := webhookJournals(t, srv.Clock().Now)[backend]
				p := payoncetest.FastRetryPolicy()
				p.MaxAttempts = 1
				c, err := srv.Client(payonce.WithJournal(j), payonce.WithRetryPolicy(p))
				require.NoError(t, err)
				var ns notices
				rc := newReceiverOf(t, srv, j, ns.handle, a55.WithWebhookSettle(c, func(r *http.Request, ev *a55.WebhookEvent) string {
					return strings.TrimPrefix(r.URL.Path, "/hooks/a55/") + "/order-A"
				}))
				hs := httptest.NewServer(rc)
				t.Cleanup(hs.Close)
				req := hookedCharge(t, a55test.CardConfirms, hs.URL+"/hooks/a55/cart-7", true)
				req.Description = "t-shirt"

				require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultErrorBeforeCommit, Path: a55test.ChargePath, Count: 1}))
				_, err = c.Charges.Create(t.Context(), req, payonce.WithReference("cart-7/order-A"))
				require.Error(t, err)
				if lostB {
					require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: a55test.ChargePath, Count: 1}))
				}
				_, err = c.Charges.Create(t.Context(), req, payonce.WithReference("cart-7/order-B"))
				require.Equal(t, lostB, err != nil, "%v", err)
				require.Equal(t, 1, srv.Ledger().Len())
				paid := srv.Ledger().Operations()[0].ID

				srv.Clock().Advance(time.Minute) // a delivery B's run held is due again
				srv.DeliverDueWebhooks()
				got := ns.all()
				require.Len(t, got, 1, "the event is handed on")
				assert.Equal(t, paid, got[0].Event.ChargeUUID)
				assert.Nil(t, got[0].Settlement, "B's charge does not settle A")
				assert.ErrorIs(t, got[0].SettleErr, payonce.ErrLookupAmbiguous)
				a, err := j.Get(t.Context(), c.Core().Scope(), "cart-7/order-A")
				require.NoError(t, err)
				assert.Equal(t, payonce.JournalPending, a.State, "A stays in doubt")
				assert.NotContains(t, string(a.Result), paid)
			})
		}
	}
}
