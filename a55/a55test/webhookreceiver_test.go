package a55test_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
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

// hookRouter is the load balancer in front of a fleet of receivers: the
// nth request goes to the receiver pick(n) names.
type hookRouter struct {
	*httptest.Server
	n atomic.Int32
}

func newHookRouter(t *testing.T, pick func(n int) http.Handler) *hookRouter {
	t.Helper()
	h := &hookRouter{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pick(int(h.n.Add(1))).ServeHTTP(w, r)
	}))
	t.Cleanup(h.Close)
	return h
}

func newReceiverOf(t *testing.T, srv *a55test.Server, in payonce.Inbox, h a55.WebhookHandler, opts ...a55.WebhookReceiverOption) *a55.WebhookReceiver {
	t.Helper()
	v, err := srv.WebhookVerifier()
	require.NoError(t, err)
	r, err := a55.NewWebhookReceiver(v, in, h, append([]a55.WebhookReceiverOption{a55.WithWebhookScope("a55:test")}, opts...)...)
	require.NoError(t, err)
	return r
}

// redeliver sends body again to url, signed afresh at the fake's time,
// as A55 does, and returns the answer's status.
func redeliver(t *testing.T, srv *a55test.Server, url string, body []byte) int {
	t.Helper()
	req, err := a55.NewSignedWebhookRequest(url, srv.WebhookSecret(), srv.Clock().Now(), body)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	return resp.StatusCode
}

func attemptCodes(d a55test.WebhookDelivery) []int {
	var out []int
	for _, a := range d.Attempts {
		out = append(out, a.StatusCode)
	}
	return out
}

// Two receivers given one event at the same moment run the merchant's
// handler once: the one that claims it runs it (204), the other answers
// 503 while the claim is live, so that A55, which never retries a 4xx,
// delivers it again; that delivery finds it handled (204, nothing run).
func TestWebhookReceiverTwoReceiversOneRun(t *testing.T) {
	srv, c := fixedServer(t)
	in := journal.NewMemory().WithClock(srv.Clock().Now)
	var runs atomic.Int32
	started, finish := make(chan struct{}), make(chan struct{})
	h := func(ctx context.Context, n *a55.WebhookNotice) error {
		if runs.Add(1) == 1 {
			close(started)
			<-finish
		}
		return nil
	}
	a := httptest.NewServer(newReceiverOf(t, srv, in, h, a55.WithWebhookOwner("a")))
	t.Cleanup(a.Close)
	b := httptest.NewServer(newReceiverOf(t, srv, in, h, a55.WithWebhookOwner("b")))
	t.Cleanup(b.Close)

	ch, err := c.Charges.Create(t.Context(), hookedCharge(t, a55test.CardConfirms, "http://127.0.0.1:9/unused", true))
	require.NoError(t, err)
	ds := srv.WebhookDeliveriesFor(ch.UUID)
	require.NotEmpty(t, ds)
	body := []byte(ds[0].Body)

	first := make(chan int)
	go func() { first <- redeliver(t, srv, a.URL, body) }()
	<-started
	assert.Equal(t, http.StatusServiceUnavailable, redeliver(t, srv, b.URL, body), "held by a: delivered again later")
	close(finish)
	assert.Equal(t, http.StatusNoContent, <-first)
	assert.Equal(t, http.StatusNoContent, redeliver(t, srv, b.URL, body), "handled: acknowledged, nothing run")

	// Many deliveries at once to both: still one run of each event.
	srv.Clock().Advance(time.Second)
	_, err = srv.Trigger(ch.UUID, a55test.EventRefund, "10.00", "")
	require.NoError(t, err)
	ds = srv.WebhookDeliveriesFor(ch.UUID)
	refund := []byte(ds[len(ds)-1].Body)
	var wg sync.WaitGroup
	var codes sync.Map
	for i := range 16 {
		wg.Go(func() {
			url := a.URL
			if i%2 == 1 {
				url = b.URL
			}
			codes.Store(i, redeliver(t, srv, url, refund))
		})
	}
	wg.Wait()
	codes.Range(func(_, v any) bool {
		assert.Contains(t, []int{http.StatusNoContent, http.StatusServiceUnavailable}, v)
		return true
	})
	assert.EqualValues(t, 2, runs.Load(), "the confirmation and the refund, once each")
	evs, err := in.Events(t.Context(), payonce.InboxQuery{Scope: "a55:test", ResourceID: ch.UUID})
	require.NoError(t, err)
	require.Len(t, evs, 2)
	assert.Equal(t, 19, evs[0].Deliveries+evs[1].Deliveries, "every delivery recorded")
}

// A receiver that stops mid-handler (its goroutine ends with no answer
// and no release: a crash) keeps the event for its lease; A55's
// redeliveries meanwhile get 503 and are retried, not given up as a 4xx
// would be; once the lease has passed the other receiver takes the event
// over and handles it. The fake's clock drives the retries and the
// leases (SQLite's clock): no sleeps.
func TestWebhookReceiverCrashMidHandlerIsTakenOver(t *testing.T) {
	srv, c := fixedServer(t)
	j, err := sqlitejournal.Open(t.Context(), filepath.Join(t.TempDir(), "journal.db"), sqlitejournal.WithClock(srv.Clock().Now))
	require.NoError(t, err)
	t.Cleanup(func() { _ = j.Close() })

	var done atomic.Int32
	var notices []*a55.WebhookNotice
	var mu sync.Mutex
	crash := newReceiverOf(t, srv, j, func(ctx context.Context, n *a55.WebhookNotice) error {
		runtime.Goexit() // the process stops mid-handler
		return nil
	}, a55.WithWebhookOwner("a"), a55.WithWebhookLease(10*time.Minute))
	ok := newReceiverOf(t, srv, j, func(ctx context.Context, n *a55.WebhookNotice) error {
		mu.Lock()
		notices = append(notices, n)
		mu.Unlock()
		done.Add(1)
		return nil
	}, a55.WithWebhookOwner("b"), a55.WithWebhookLease(10*time.Minute))
	router := newHookRouter(t, func(n int) http.Handler {
		if n == 1 {
			return crash
		}
		return ok
	})

	ch, err := c.Charges.Create(t.Context(), hookedCharge(t, a55test.CardConfirms, router.URL+"/hooks/a55/order-7", true))
	require.NoError(t, err)
	srv.DeliverDueWebhooks() // attempt 1: a takes the event and stops
	for _, d := range []time.Duration{time.Minute, 5 * time.Minute} {
		srv.Clock().Advance(d)
		srv.DeliverDueWebhooks() // b: in progress (a's lease is live), 503
	}
	assert.Zero(t, done.Load(), "a's claim holds while its lease lasts")
	srv.Clock().Advance(30 * time.Minute)
	srv.DeliverDueWebhooks() // b takes the event over

	ds := srv.WebhookDeliveriesFor(ch.UUID)
	require.Len(t, ds, 1)
	assert.Equal(t, a55test.WebhookDelivered, ds[0].State)
	assert.Equal(t, []int{0, http.StatusServiceUnavailable, http.StatusServiceUnavailable, http.StatusNoContent}, attemptCodes(ds[0]),
		"a's stop is a failed connection, b's answers 503 until the lease passes")
	require.EqualValues(t, 1, done.Load())
	ev := notices[0].Inbox
	assert.Equal(t, ch.UUID+"/confirmed", ev.EventID)
	assert.EqualValues(t, 2, ev.Fence, "b's claim replaced a's")
	assert.Equal(t, 2, ev.Attempts)
	stored, err := j.GetEvent(t.Context(), "a55:test", ch.UUID+"/confirmed")
	require.NoError(t, err)
	assert.True(t, stored.Handled())
	assert.Equal(t, 4, stored.Deliveries)
}

// Every change of a charge is one event, handled once, even two partial
// refunds of one amount; a confirmation that arrives after the refund
// (A55's retry of a failed delivery) is handed on as stale, with the
// fetched charge and the state it is behind.
func TestWebhookReceiverIdentityAndOrderAgainstTheFake(t *testing.T) {
	srv, c := fixedServer(t)
	in := journal.NewMemory().WithClock(srv.Clock().Now)
	var mu sync.Mutex
	var got []*a55.WebhookNotice
	failOnce := true
	rc := newReceiverOf(t, srv, in, func(ctx context.Context, n *a55.WebhookNotice) error {
		mu.Lock()
		defer mu.Unlock()
		if failOnce {
			failOnce = false
			return errors.New("the database was away")
		}
		got = append(got, n)
		return nil
	}, a55.WithWebhookFetch(c))
	hs := httptest.NewServer(rc)
	t.Cleanup(hs.Close)

	ch, err := c.Charges.Create(t.Context(), hookedCharge(t, a55test.CardConfirms, hs.URL+"/hooks/a55", true))
	require.NoError(t, err)
	srv.DeliverDueWebhooks() // confirmed: the handler fails, 500, retried in a minute
	for _, amount := range []string{"10.00", "10.00", ""} {
		srv.Clock().Advance(time.Second)
		_, err := srv.Trigger(ch.UUID, a55test.EventRefund, amount, "")
		require.NoError(t, err)
		srv.DeliverDueWebhooks()
	}
	srv.Clock().Advance(time.Minute)
	srv.DeliverDueWebhooks() // the confirmation, late

	// Every delivery again, signed afresh: nothing runs a second time.
	for _, d := range srv.WebhookDeliveriesFor(ch.UUID) {
		assert.Equal(t, http.StatusNoContent, redeliver(t, srv, hs.URL+"/hooks/a55", d.Body))
	}

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, got, 4, "three refunds and the confirmation, once each")
	keys := map[string]bool{}
	for _, n := range got[:3] {
		keys[n.Event.Key()] = true
		assert.False(t, n.Stale, "%s", n.Event.Key())
		assert.False(t, n.Event.RefundAmount.IsZero())
	}
	assert.Len(t, keys, 3, "two partial refunds of 10.00 are two events")
	assert.True(t, got[0].Event.Status.Is(a55.StatusConfirmed), "a partial refund leaves the charge confirmed")
	assert.True(t, got[2].Event.Status.Is(a55.StatusRefunded))
	late := got[3]
	assert.Equal(t, ch.UUID+"/confirmed", late.Event.Key())
	assert.True(t, late.Stale, "a late confirmed never undoes refunded")
	assert.True(t, late.Previous.Status.Is(a55.StatusRefunded))
	require.NotNil(t, late.Charge, "fetched: the API is the source of truth")
	assert.True(t, late.Charge.Status.Is(a55.StatusRefunded))
}

// A verified webhook about a charge whose create the journal holds in
// doubt (its answer was lost) settles that entry from the charge read
// from the API: the next call with the reference answers from the
// journal, nothing sent, one charge in the ledger.
func TestWebhookReceiverSettlesAnEntryInDoubt(t *testing.T) {
	srv, _ := fixedServer(t)
	j := journal.NewMemory().WithClock(srv.Clock().Now)
	p := payoncetest.FastRetryPolicy()
	p.MaxAttempts = 1
	c, err := srv.Client(payonce.WithJournal(j), payonce.WithRetryPolicy(p))
	require.NoError(t, err)
	var handed atomic.Pointer[a55.WebhookNotice]
	rc := newReceiverOf(t, srv, j, func(ctx context.Context, n *a55.WebhookNotice) error {
		handed.Store(n)
		return nil
	}, a55.WithWebhookSettle(c, func(r *http.Request, ev *a55.WebhookEvent) string {
		return strings.TrimPrefix(r.URL.Path, "/hooks/a55/") + "/charge"
	}))
	hs := httptest.NewServer(rc)
	t.Cleanup(hs.Close)

	req := hookedCharge(t, a55test.CardConfirms, hs.URL+"/hooks/a55/order-9", true)
	req.Description = "order-9"
	// The create's answer is lost, and the list that looks it up fails:
	// the entry stays in doubt.
	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: a55test.ChargePath, Count: 1}))
	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultErrorBeforeCommit, Path: a55.PathChargeList, Count: 1}))
	_, err = c.Charges.Create(t.Context(), req, payonce.WithReference("order-9/charge"))
	require.ErrorIs(t, err, payonce.ErrOutcomeUnknown, "the answer was lost, the lookup could not tell")
	e, err := j.Get(t.Context(), c.Core().Scope(), "order-9/charge")
	require.NoError(t, err)
	require.Equal(t, payonce.JournalPending, e.State)

	// The fake may have delivered the event while the create still held
	// its entry: the receiver then answered a 5xx and A55's next attempt
	// comes a minute later on the fake's clock.
	srv.DeliverDueWebhooks()
	if handed.Load() == nil {
		srv.Clock().Advance(time.Minute)
		srv.DeliverDueWebhooks()
	}
	got := handed.Load()
	require.NotNil(t, got)
	require.NoError(t, got.SettleErr)
	require.NotNil(t, got.Settlement)
	assert.True(t, got.Settlement.Recorded)
	assert.Equal(t, payonce.JournalSucceeded, got.Settlement.Entry.State)
	assert.Equal(t, got.Event.ChargeUUID, got.Settlement.Charge.UUID)

	sent := srv.Stats().Requests
	again, err := c.Charges.Create(t.Context(), req, payonce.WithReference("order-9/charge"))
	require.NoError(t, err)
	assert.True(t, again.Meta.FromJournal)
	assert.Equal(t, got.Event.ChargeUUID, again.UUID)
	assert.Equal(t, sent, srv.Stats().Requests, "answered from the journal")
	assert.True(t, srv.Ledger().ExecutedOnce(e.Key))
}

// What a receiver answers what is not a verified event, and that it
// reads no more than the bound.
func TestWebhookReceiverRefusals(t *testing.T) {
	srv, _ := fixedServer(t)
	in := journal.NewMemory()
	rc := newReceiverOf(t, srv, in, func(context.Context, *a55.WebhookNotice) error { return nil })
	hs := httptest.NewServer(rc)
	t.Cleanup(hs.Close)
	post := func(body []byte, secret string) int {
		req, err := a55.NewSignedWebhookRequest(hs.URL, secret, srv.Clock().Now(), body)
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	assert.Equal(t, http.StatusUnauthorized, post([]byte(`{"charge_uuid":"c1","status":"confirmed"}`), "not-the-secret"))
	assert.Equal(t, http.StatusBadRequest, post([]byte(`not json`), srv.WebhookSecret()))
	assert.Equal(t, http.StatusBadRequest, post([]byte(`{"status":"confirmed"}`), srv.WebhookSecret()))
	assert.Equal(t, http.StatusRequestEntityTooLarge, post(bytes.Repeat([]byte(" "), payonce.MaxEventBody+1), srv.WebhookSecret()))
	resp, err := http.Get(hs.URL)
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	evs, err := in.Events(t.Context(), payonce.InboxQuery{})
	require.NoError(t, err)
	assert.Empty(t, evs, "nothing unverified is recorded")
}

// A marking handler records the event handled itself (in its own
// transaction, on an SQL backend): it runs once, and the receiver takes
// its mark as the record.
func TestWebhookReceiverMarkingHandler(t *testing.T) {
	srv, c := fixedServer(t)
	in := journal.NewMemory().WithClock(srv.Clock().Now)
	var runs atomic.Int32
	v, err := srv.WebhookVerifier()
	require.NoError(t, err)
	rc, err := a55.NewWebhookReceiver(v, in, nil, a55.WithWebhookScope("a55:test"),
		a55.WithWebhookMarkingHandler(func(ctx context.Context, n *a55.WebhookNotice, mark func(context.Context) (payonce.InboxEvent, error)) (payonce.InboxEvent, error) {
			runs.Add(1)
			return mark(ctx) // with the merchant's writes, in one transaction
		}))
	require.NoError(t, err)
	hs := httptest.NewServer(rc)
	t.Cleanup(hs.Close)
	ch, err := c.Charges.Create(t.Context(), hookedCharge(t, a55test.CardConfirms, hs.URL+"/hooks/a55", true))
	require.NoError(t, err)
	srv.DeliverDueWebhooks()
	_, err = srv.ResendWebhook(ch.UUID)
	require.NoError(t, err)
	srv.DeliverDueWebhooks()
	for _, d := range srv.WebhookDeliveriesFor(ch.UUID) {
		assert.Equal(t, []int{http.StatusNoContent}, attemptCodes(d))
	}
	assert.EqualValues(t, 1, runs.Load())

	_, err = a55.NewWebhookReceiver(v, in, nil, a55.WithWebhookScope("a55:test"))
	assert.ErrorIs(t, err, payonce.ErrInvalidConfig, "a handler is required")
	_, err = a55.NewWebhookReceiver(v, in, func(context.Context, *a55.WebhookNotice) error { return nil })
	assert.ErrorIs(t, err, payonce.ErrInvalidConfig, "a scope is required")
}
