package journaltest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/journal"
	"github.com/payonce/payonce/redact"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Event returns a valid delivery of event id in scope, about the charge
// "ch-1", with a small JSON body.
func Event(scope, id string) payonce.InboxEvent {
	return payonce.InboxEvent{Scope: scope, EventID: id, ResourceID: "ch-1", Type: "confirmed",
		Body: []byte(`{"charge_uuid":"ch-1","status":"confirmed"}`)}
}

// RunInbox runs the inbox's conformance suite: the store's own rules,
// then payonce.HandleOnce on it. open returns a new, empty store for each
// subtest (the backend cleans it up with t.Cleanup).
func RunInbox(t *testing.T, open func(t *testing.T) journal.InboxStore) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, in journal.InboxStore)
	}{
		{"RecordCreatesOnce", testRecordCreatesOnce},
		{"ConcurrentRecord", testConcurrentRecord},
		{"RecordRoundTrips", testRecordRoundTrips},
		{"EventScopesAreSeparate", testEventScopesAreSeparate},
		{"EventAbsent", testEventAbsent},
		{"ClaimRaisesTheFence", testClaimEventRaisesTheFence},
		{"MarkHandled", testMarkHandled},
		{"StaleFenceIsRefused", testEventStaleFence},
		{"ReleaseEndsTheClaim", testReleaseEndsTheClaim},
		{"EventsQuery", testEventsQuery},
		{"PurgeEvents", testPurgeEvents},
		{"TimesAreTheJournalsClock", testEventTimesAreTheJournalsClock},
		{"HostileInputsRefused", testHostileInputsRefused},
		{"CanceledContextRecordsNothing", testEventCanceledContext},
		{"HandleOnceRunsOnce", testHandleOnceRunsOnce},
		{"TwoReceiversOneRun", testTwoReceiversOneRun},
		{"ManyReceiversOneRun", testManyReceiversOneRun},
		{"CrashMidHandlerTakenOverOnce", testCrashMidHandler},
		{"TakenOverRunIsRefused", testTakenOverRun},
		{"HandlerFailureReleases", testHandlerFailureReleases},
		{"HandlerPanicReleases", testHandlerPanicReleases},
		{"BodyStoredRedacted", testBodyStoredRedacted},
		{"HandleOnceBoundsTheBody", testHandleOnceBoundsTheBody},
		{"HandleOnceRefusesHostileIDs", testHandleOnceRefusesHostileIDs},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.fn(t, open(t))
		})
	}
}

func record(t *testing.T, in payonce.Inbox, e payonce.InboxEvent) payonce.InboxEvent {
	t.Helper()
	got, created, err := in.RecordEvent(ctx(t), e)
	require.NoError(t, err)
	require.True(t, created)
	return got
}

func claim(t *testing.T, in payonce.Inbox, scope, id, owner string, lease time.Duration) payonce.InboxEvent {
	t.Helper()
	got, err := in.ClaimEvent(ctx(t), payonce.InboxEvent{Scope: scope, EventID: id, LeaseOwner: owner, Lease: lease})
	require.NoError(t, err)
	return got
}

// claimAfterExpiry waits, by claiming again and again, for the lease a
// first claim took for a millisecond to end, and returns the new claim.
func claimAfterExpiry(t *testing.T, in payonce.Inbox, scope, id, owner string) payonce.InboxEvent {
	t.Helper()
	var got payonce.InboxEvent
	require.Eventually(t, func() bool {
		var err error
		got, err = in.ClaimEvent(ctx(t), payonce.InboxEvent{Scope: scope, EventID: id, LeaseOwner: owner, Lease: time.Hour})
		return err == nil
	}, 30*time.Second, 2*time.Millisecond, "an expired claim is taken over")
	require.Equal(t, owner, got.LeaseOwner, "a claim that returns no error took the event")
	return got
}

func testRecordCreatesOnce(t *testing.T, in journal.InboxStore) {
	e := Event("s", "ev-1")
	got := record(t, in, e)
	assert.Equal(t, 1, got.Deliveries)
	assert.Zero(t, got.Fence, "nobody has claimed it")
	assert.False(t, got.Handled())
	assert.False(t, got.ReceivedAt.IsZero())
	assert.Equal(t, e.Body, got.Body)

	dup := e
	dup.Body, dup.ResourceID, dup.Type = []byte(`{"other":true}`), "ch-2", "refunded"
	again, created, err := in.RecordEvent(ctx(t), dup)
	require.NoError(t, err)
	assert.False(t, created)
	assert.Equal(t, 2, again.Deliveries, "a duplicate delivery is counted")
	assert.Equal(t, e.Body, again.Body, "the first delivery's body is kept")
	assert.Equal(t, "ch-1", again.ResourceID)
	assert.Equal(t, "confirmed", again.Type)
	assert.True(t, got.ReceivedAt.Equal(again.ReceivedAt), "first received stays")
	stored, err := in.GetEvent(ctx(t), "s", "ev-1")
	require.NoError(t, err)
	assert.Equal(t, again, stored)
}

func testConcurrentRecord(t *testing.T, in journal.InboxStore) {
	const n = 12
	var wg sync.WaitGroup
	var created atomic.Int32
	start := make(chan struct{})
	for range n {
		wg.Go(func() {
			<-start
			_, c, err := in.RecordEvent(context.Background(), Event("s", "ev-c"))
			if assert.NoError(t, err) && c {
				created.Add(1)
			}
		})
	}
	close(start)
	wg.Wait()
	assert.EqualValues(t, 1, created.Load(), "one delivery creates the event")
	got, err := in.GetEvent(ctx(t), "s", "ev-c")
	require.NoError(t, err)
	assert.Equal(t, n, got.Deliveries)
}

func testRecordRoundTrips(t *testing.T, in journal.InboxStore) {
	at := time.Date(2026, 11, 28, 10, 0, 0, 123456789, time.FixedZone("BRT", -3*3600))
	e := payonce.InboxEvent{Scope: "a55:c1@https://api.example", EventID: "pedido-ação/卡-42/" + strings.Repeat("x", 200),
		ResourceID: "ch_ünïcode", Type: "chargeback_requested", Body: []byte("\x00\xff{not json"), ReceivedAt: at,
		// What RecordEvent sets itself is not taken from the caller.
		Deliveries: 9, HandledAt: at, Attempts: 4, LastError: "x", LeaseOwner: "w", LeaseUntil: at, Fence: 7, Lease: time.Hour}
	got := record(t, in, e)
	assert.True(t, got.ReceivedAt.Equal(at.Truncate(time.Microsecond)), "kept to the microsecond")
	assert.Equal(t, time.UTC, got.ReceivedAt.Location())
	assert.Equal(t, e.Body, got.Body, "bytes come back as stored")
	assert.Equal(t, 1, got.Deliveries)
	assert.False(t, got.Handled())
	assert.Zero(t, got.Attempts)
	assert.Empty(t, got.LastError)
	assert.Empty(t, got.LeaseOwner)
	assert.Zero(t, got.Fence)
	assert.Zero(t, got.Lease)
	stored, err := in.GetEvent(ctx(t), e.Scope, e.EventID)
	require.NoError(t, err)
	assert.Equal(t, got, stored, "RecordEvent returns the stored row")

	long := Event("s", strings.Repeat("é", 127)+"x") // 255 bytes
	long.Body = nil
	got = record(t, in, long)
	assert.Nil(t, got.Body)
	stored, err = in.GetEvent(ctx(t), "s", long.EventID)
	require.NoError(t, err)
	assert.Equal(t, got, stored)
}

func testEventScopesAreSeparate(t *testing.T, in journal.InboxStore) {
	record(t, in, Event("a55:c1", "ev-1"))
	b := record(t, in, Event("a55:c2", "ev-1"))
	assert.Equal(t, 1, b.Deliveries)
	claim(t, in, "a55:c1", "ev-1", "w", time.Hour)
	got, err := in.GetEvent(ctx(t), "a55:c2", "ev-1")
	require.NoError(t, err)
	assert.Zero(t, got.Fence, "a claim in one scope leaves the other alone")
}

func testEventAbsent(t *testing.T, in journal.InboxStore) {
	_, err := in.GetEvent(ctx(t), "s", "absent")
	require.ErrorIs(t, err, journal.ErrNotFound)
	_, err = in.ClaimEvent(ctx(t), payonce.InboxEvent{Scope: "s", EventID: "absent", LeaseOwner: "w", Lease: time.Hour})
	require.ErrorIs(t, err, journal.ErrNotFound)
	_, err = in.MarkHandled(ctx(t), payonce.InboxEvent{Scope: "s", EventID: "absent", Fence: 1})
	require.ErrorIs(t, err, journal.ErrNotFound)
	err = in.ReleaseEvent(ctx(t), payonce.InboxEvent{Scope: "s", EventID: "absent", Fence: 1})
	require.ErrorIs(t, err, journal.ErrNotFound)
	_, err = in.GetEvent(ctx(t), "s", "absent")
	require.ErrorIs(t, err, journal.ErrNotFound, "no write creates an event but RecordEvent")
}

func testClaimEventRaisesTheFence(t *testing.T, in journal.InboxStore) {
	record(t, in, Event("s", "ev-f"))
	a := claim(t, in, "s", "ev-f", "run-a", time.Hour)
	assert.EqualValues(t, 1, a.Fence)
	assert.Equal(t, 1, a.Attempts)
	assert.Equal(t, "run-a", a.LeaseOwner)
	assert.WithinDuration(t, a.UpdatedAt.Add(time.Hour), a.LeaseUntil, time.Second)

	got, err := in.ClaimEvent(ctx(t), payonce.InboxEvent{Scope: "s", EventID: "ev-f", LeaseOwner: "run-b", Lease: time.Hour})
	require.ErrorIs(t, err, payonce.ErrJournalLeased)
	assert.Equal(t, "run-a", got.LeaseOwner, "the refusal returns the event")
	stored, err := in.GetEvent(ctx(t), "s", "ev-f")
	require.NoError(t, err)
	assert.EqualValues(t, 1, stored.Fence, "a refused claim changes nothing")
	assert.Equal(t, 1, stored.Attempts)

	again := claim(t, in, "s", "ev-f", "run-a", time.Hour)
	assert.EqualValues(t, 2, again.Fence, "every claim raises it, the same owner's too")
	assert.Equal(t, 2, again.Attempts)
}

func testMarkHandled(t *testing.T, in journal.InboxStore) {
	record(t, in, Event("s", "ev-m"))
	c := claim(t, in, "s", "ev-m", "run-a", time.Hour)
	got, err := in.MarkHandled(ctx(t), payonce.InboxEvent{Scope: "s", EventID: "ev-m", Fence: c.Fence})
	require.NoError(t, err)
	assert.True(t, got.Handled())
	assert.Empty(t, got.LeaseOwner, "the run is over")
	assert.True(t, got.LeaseUntil.IsZero())
	assert.Equal(t, c.Fence, got.Fence)

	again, err := in.MarkHandled(ctx(t), payonce.InboxEvent{Scope: "s", EventID: "ev-m", Fence: c.Fence})
	require.NoError(t, err, "marking again with the fence that handled it is no error (a retried write)")
	assert.True(t, again.HandledAt.Equal(got.HandledAt), "and changes nothing")

	stored, err := in.ClaimEvent(ctx(t), payonce.InboxEvent{Scope: "s", EventID: "ev-m", LeaseOwner: "run-b", Lease: time.Hour})
	require.ErrorIs(t, err, payonce.ErrEventHandled)
	assert.True(t, stored.Handled(), "the refusal returns the event")
	assert.Equal(t, c.Fence, stored.Fence, "a handled event is never claimed again")

	dup, created, err := in.RecordEvent(ctx(t), Event("s", "ev-m"))
	require.NoError(t, err)
	assert.False(t, created)
	assert.True(t, dup.Handled(), "a later delivery sees it handled")
	require.ErrorIs(t, in.ReleaseEvent(ctx(t), payonce.InboxEvent{Scope: "s", EventID: "ev-m", Fence: c.Fence}), payonce.ErrEventHandled)
}

func testEventStaleFence(t *testing.T, in journal.InboxStore) {
	record(t, in, Event("s", "ev-st"))
	a := claim(t, in, "s", "ev-st", "run-a", time.Millisecond) // run-a stops
	b := claimAfterExpiry(t, in, "s", "ev-st", "run-b")
	require.Equal(t, a.Fence+1, b.Fence)

	_, err := in.MarkHandled(ctx(t), payonce.InboxEvent{Scope: "s", EventID: "ev-st", Fence: a.Fence})
	require.ErrorIs(t, err, payonce.ErrJournalFenced, "the stale run's mark is refused")
	require.ErrorIs(t, in.ReleaseEvent(ctx(t), payonce.InboxEvent{Scope: "s", EventID: "ev-st", Fence: a.Fence, LastError: "late"}), payonce.ErrJournalFenced)
	stored, err := in.GetEvent(ctx(t), "s", "ev-st")
	require.NoError(t, err)
	assert.False(t, stored.Handled())
	assert.Equal(t, "run-b", stored.LeaseOwner, "the stale writes changed nothing")
	assert.Empty(t, stored.LastError)

	_, err = in.MarkHandled(ctx(t), payonce.InboxEvent{Scope: "s", EventID: "ev-st", Fence: b.Fence})
	require.NoError(t, err)
	_, err = in.MarkHandled(ctx(t), payonce.InboxEvent{Scope: "s", EventID: "ev-st", Fence: a.Fence})
	require.ErrorIs(t, err, payonce.ErrEventHandled, "handled by another run")
}

func testReleaseEndsTheClaim(t *testing.T, in journal.InboxStore) {
	record(t, in, Event("s", "ev-r"))
	a := claim(t, in, "s", "ev-r", "run-a", time.Hour)
	require.NoError(t, in.ReleaseEvent(ctx(t), payonce.InboxEvent{Scope: "s", EventID: "ev-r", Fence: a.Fence, LastError: "handler failed: 卡"}))
	stored, err := in.GetEvent(ctx(t), "s", "ev-r")
	require.NoError(t, err)
	assert.Empty(t, stored.LeaseOwner)
	assert.Equal(t, "handler failed: 卡", stored.LastError)
	assert.False(t, stored.Handled())
	b := claim(t, in, "s", "ev-r", "run-b", time.Hour)
	assert.Equal(t, a.Fence+1, b.Fence, "a released event is claimed at once")
	assert.Equal(t, 2, b.Attempts)
}

func testEventsQuery(t *testing.T, in journal.InboxStore) {
	base := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	at := func(id, scope, resource string, i int) payonce.InboxEvent {
		e := Event(scope, id)
		e.ResourceID, e.ReceivedAt = resource, base.Add(time.Duration(i)*time.Second)
		return record(t, in, e)
	}
	at("e1", "s", "r1", 0)
	at("e2", "s", "r1", 1)
	at("e3", "s", "r2", 2)
	at("e4", "other", "r1", 3)
	at("e5", "s", "", 4)
	at("e6", "s", "r2", 5)
	c1 := claim(t, in, "s", "e1", "w", time.Hour)
	_, err := in.MarkHandled(ctx(t), payonce.InboxEvent{Scope: "s", EventID: "e1", Fence: c1.Fence})
	require.NoError(t, err)
	claim(t, in, "s", "e2", "w", time.Hour) // held
	c5 := claim(t, in, "s", "e5", "w", time.Hour)
	require.NoError(t, in.ReleaseEvent(ctx(t), payonce.InboxEvent{Scope: "s", EventID: "e5", Fence: c5.Fence, LastError: "failed"}))
	claim(t, in, "s", "e6", "w", time.Millisecond) // its receiver stopped

	ids := func(q payonce.InboxQuery) []string {
		es, err := in.Events(ctx(t), q)
		if !assert.NoError(t, err) {
			return nil
		}
		out := make([]string, len(es))
		for i, e := range es {
			out[i] = e.EventID
		}
		return out
	}
	assert.Equal(t, []string{"e1", "e2", "e3", "e4", "e5", "e6"}, ids(payonce.InboxQuery{}), "oldest first")
	assert.Equal(t, []string{"e1", "e2", "e3", "e5", "e6"}, ids(payonce.InboxQuery{Scope: "s"}))
	assert.Equal(t, []string{"e1", "e2"}, ids(payonce.InboxQuery{Scope: "s", ResourceID: "r1"}), "a resource's events")
	assert.Equal(t, []string{"e4"}, ids(payonce.InboxQuery{Scope: "other", ResourceID: "r1"}))
	assert.Equal(t, []string{"e2", "e3", "e5", "e6"}, ids(payonce.InboxQuery{Scope: "s", Unhandled: true}))
	assert.Equal(t, []string{"e1", "e2"}, ids(payonce.InboxQuery{Scope: "s", Before: base.Add(2 * time.Second)}))
	assert.Equal(t, []string{"e1", "e2"}, ids(payonce.InboxQuery{Scope: "s", Limit: 2}))
	assert.Equal(t, []string{"e3", "e6"}, ids(payonce.InboxQuery{Scope: "s", ResourceID: "r2", Unhandled: true}))
	require.Eventually(t, func() bool {
		got := ids(payonce.InboxQuery{Scope: "s", Stuck: true})
		return assert.ObjectsAreEqual([]string{"e3", "e5", "e6"}, got)
	}, 30*time.Second, 2*time.Millisecond, "stuck: unhandled and held by no live claim")
	_, err = in.Events(ctx(t), payonce.InboxQuery{ResourceID: "r1"})
	require.ErrorIs(t, err, payonce.ErrInvalidEvent, "a resource ID means something within its scope only")
}

func testPurgeEvents(t *testing.T, in journal.InboxStore) {
	for _, id := range []string{"done-1", "done-2", "open"} {
		record(t, in, Event("s", id))
	}
	for _, id := range []string{"done-1", "done-2"} {
		c := claim(t, in, "s", id, "w", time.Hour)
		_, err := in.MarkHandled(ctx(t), payonce.InboxEvent{Scope: "s", EventID: id, Fence: c.Fence})
		require.NoError(t, err)
	}
	now := clockOf(t, in)
	n, err := in.PurgeEvents(ctx(t), now.Add(-time.Hour))
	require.NoError(t, err)
	assert.Zero(t, n, "nothing was handled an hour ago")
	n, err = in.PurgeEvents(ctx(t), now.Add(time.Hour))
	require.NoError(t, err)
	assert.EqualValues(t, 2, n)
	_, err = in.GetEvent(ctx(t), "s", "done-1")
	require.ErrorIs(t, err, journal.ErrNotFound)
	_, err = in.GetEvent(ctx(t), "s", "open")
	require.NoError(t, err, "an unhandled event is never purged")
}

// clockOf is the journal's clock when it has one (PostgreSQL), else the
// machine's.
func clockOf(t *testing.T, in journal.InboxStore) time.Time {
	t.Helper()
	if j, ok := in.(interface {
		Now(context.Context) (time.Time, error)
	}); ok {
		now, err := j.Now(ctx(t))
		require.NoError(t, err)
		if !now.IsZero() {
			return now
		}
	}
	return time.Now()
}

func testEventTimesAreTheJournalsClock(t *testing.T, in journal.InboxStore) {
	ref := clockOf(t, in)
	got := record(t, in, Event("s", "ev-clock"))
	assert.WithinDuration(t, ref, got.ReceivedAt, time.Minute)
	assert.True(t, got.UpdatedAt.Equal(got.ReceivedAt))
	c := claim(t, in, "s", "ev-clock", "w", 3*time.Hour)
	assert.WithinDuration(t, c.UpdatedAt.Add(3*time.Hour), c.LeaseUntil, time.Second, "the lease runs from the journal's now")
	assert.False(t, c.UpdatedAt.Before(got.ReceivedAt))
	m, err := in.MarkHandled(ctx(t), payonce.InboxEvent{Scope: "s", EventID: "ev-clock", Fence: c.Fence})
	require.NoError(t, err)
	assert.False(t, m.HandledAt.Before(c.UpdatedAt))
	assert.WithinDuration(t, clockOf(t, in), m.HandledAt, time.Minute)
}

// hostileTexts are texts no identity field may hold: each could forge a
// terminal line or hide what it says.
var hostileTexts = map[string]string{
	"empty": "", "escape": "ev\x1b[31m-1", "bell": "ev\a", "carriage return": "ev\r-1", "newline": "ev\n1", "nul": "ev\x00",
	"delete": "ev\x7f", "C1 next line": "ev\u0085", "right-to-left override": "ev\u202e1-ve", "zero-width space": "ev\u200b",
	"byte-order mark": "\ufeffev", "line separator": "ev\u2028", "not UTF-8": "ev\xff", "too long": strings.Repeat("e", 256),
}

func testHostileInputsRefused(t *testing.T, in journal.InboxStore) {
	invalid := func(err error, what string) {
		t.Helper()
		require.Error(t, err, what)
		assert.ErrorIs(t, err, payonce.ErrInvalidEvent, what)
		assert.ErrorIs(t, err, journal.ErrInvalidEntry, what)
		assert.NotContains(t, err.Error(), "\x1b", "the error quotes no hostile byte")
		assert.NotContains(t, err.Error(), "\u202e")
	}
	for name, s := range hostileTexts {
		for field, set := range map[string]func(e *payonce.InboxEvent){
			"scope": func(e *payonce.InboxEvent) { e.Scope = s }, "event ID": func(e *payonce.InboxEvent) { e.EventID = s },
			"resource ID": func(e *payonce.InboxEvent) { e.ResourceID = s }, "type": func(e *payonce.InboxEvent) { e.Type = s },
		} {
			if s == "" && (field == "resource ID" || field == "type") {
				continue // optional
			}
			e := Event("s", "ev-h")
			set(&e)
			_, _, err := in.RecordEvent(ctx(t), e)
			invalid(err, field+": "+name)
		}
	}
	big := Event("s", "ev-big")
	big.Body = bytes.Repeat([]byte("a"), 8*payonce.MaxEventBody+1)
	_, _, err := in.RecordEvent(ctx(t), big)
	invalid(err, "a body over the bound")
	all, err := in.Events(ctx(t), payonce.InboxQuery{})
	require.NoError(t, err)
	assert.Empty(t, all, "nothing invalid was recorded")

	record(t, in, Event("s", "ev-ok"))
	for name, s := range hostileTexts {
		_, err := in.ClaimEvent(ctx(t), payonce.InboxEvent{Scope: "s", EventID: "ev-ok", LeaseOwner: s, Lease: time.Hour})
		invalid(err, "lease owner: "+name)
	}
	_, err = in.ClaimEvent(ctx(t), payonce.InboxEvent{Scope: "s", EventID: "ev-ok", LeaseOwner: "w"})
	invalid(err, "no lease")
	c := claim(t, in, "s", "ev-ok", "w", time.Hour)
	_, err = in.MarkHandled(ctx(t), payonce.InboxEvent{Scope: "s", EventID: "ev-ok"})
	invalid(err, "no fence")
	for name, why := range map[string]string{"escape": "failed \x1b[2J", "too long": strings.Repeat("x", 1025), "not UTF-8": "\xff"} {
		invalid(in.ReleaseEvent(ctx(t), payonce.InboxEvent{Scope: "s", EventID: "ev-ok", Fence: c.Fence, LastError: why}), "last error: "+name)
	}
	stored, err := in.GetEvent(ctx(t), "s", "ev-ok")
	require.NoError(t, err)
	assert.Equal(t, "w", stored.LeaseOwner, "refused writes changed nothing")
	assert.Equal(t, c.Fence, stored.Fence)
}

func testEventCanceledContext(t *testing.T, in journal.InboxStore) {
	c, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err := in.RecordEvent(c, Event("s", "ev-canceled"))
	require.Error(t, err)
	_, err = in.GetEvent(context.Background(), "s", "ev-canceled")
	assert.ErrorIs(t, err, journal.ErrNotFound, "nothing recorded with a canceled context")
}

// counter is a handler counting its runs and what it was given.
type counter struct {
	runs   atomic.Int32
	mu     sync.Mutex
	bodies [][]byte
	fences []int64
}

func (c *counter) handler() payonce.EventHandler {
	return func(_ context.Context, ev payonce.InboxEvent) error {
		c.runs.Add(1)
		c.mu.Lock()
		c.bodies, c.fences = append(c.bodies, ev.Body), append(c.fences, ev.Fence)
		c.mu.Unlock()
		return nil
	}
}

func testHandleOnceRunsOnce(t *testing.T, in journal.InboxStore) {
	var c counter
	ev := Event("s", "ev-once")
	res, err := payonce.HandleOnce(ctx(t), in, ev, c.handler())
	require.NoError(t, err)
	assert.Equal(t, payonce.InboxHandled, res.Outcome)
	assert.True(t, res.Event.Handled())
	assert.Equal(t, 200, payonce.InboxHTTPStatus(err))
	require.EqualValues(t, 1, c.runs.Load())
	assert.Equal(t, ev.Body, c.bodies[0], "the handler gets the body as delivered")
	assert.EqualValues(t, 1, c.fences[0], "and its claim's fence")

	res, err = payonce.HandleOnce(ctx(t), in, ev, c.handler())
	require.NoError(t, err)
	assert.Equal(t, payonce.InboxAlreadyHandled, res.Outcome)
	assert.EqualValues(t, 1, c.runs.Load(), "a duplicate delivery runs nothing")
	stored, err := in.GetEvent(ctx(t), "s", "ev-once")
	require.NoError(t, err)
	assert.Equal(t, 2, stored.Deliveries)
	assert.Equal(t, 1, stored.Attempts)
}

// Two receivers get one event at once: the second finds the first's claim
// and answers "in progress"; the handler runs once.
func testTwoReceiversOneRun(t *testing.T, in journal.InboxStore) {
	started, finish := make(chan struct{}), make(chan struct{})
	var runs atomic.Int32
	h := payonce.EventHandler(func(context.Context, payonce.InboxEvent) error {
		runs.Add(1)
		close(started)
		<-finish
		return nil
	})
	first := make(chan error, 1)
	go func() {
		_, err := payonce.HandleOnce(context.Background(), in, Event("s", "ev-2r"), h)
		first <- err
	}()
	<-started
	res, err := payonce.HandleOnce(ctx(t), in, Event("s", "ev-2r"), h)
	require.ErrorIs(t, err, payonce.ErrEventInProgress)
	assert.Equal(t, payonce.InboxInProgress, res.Outcome)
	assert.Equal(t, 503, payonce.InboxHTTPStatus(err), "a 5xx: the provider delivers it again")
	var ie *payonce.InboxError
	require.ErrorAs(t, err, &ie)
	assert.Equal(t, "ev-2r", ie.EventID)
	assert.False(t, ie.ReceivedAt.IsZero(), "the error gives the event's age")
	close(finish)
	require.NoError(t, <-first)

	res, err = payonce.HandleOnce(ctx(t), in, Event("s", "ev-2r"), h)
	require.NoError(t, err)
	assert.Equal(t, payonce.InboxAlreadyHandled, res.Outcome)
	assert.EqualValues(t, 1, runs.Load())
}

func testManyReceiversOneRun(t *testing.T, in journal.InboxStore) {
	const receivers = 16
	var c counter
	start := make(chan struct{})
	outcomes := make([]payonce.InboxOutcome, receivers)
	errs := make([]error, receivers)
	var wg sync.WaitGroup
	for i := range receivers {
		wg.Go(func() {
			<-start
			res, err := payonce.HandleOnce(context.Background(), in, Event("s", "ev-many"), c.handler())
			outcomes[i], errs[i] = res.Outcome, err
		})
	}
	close(start)
	wg.Wait()
	handled := 0
	for i, o := range outcomes {
		switch o {
		case payonce.InboxHandled:
			handled++
			assert.NoError(t, errs[i])
		case payonce.InboxAlreadyHandled:
			assert.NoError(t, errs[i])
		case payonce.InboxInProgress:
			assert.ErrorIs(t, errs[i], payonce.ErrEventInProgress)
		default:
			t.Errorf("receiver %d: %s: %v", i, o, errs[i])
		}
	}
	assert.Equal(t, 1, handled, "one receiver handled it")
	assert.EqualValues(t, 1, c.runs.Load(), "the handler ran once")
	stored, err := in.GetEvent(ctx(t), "s", "ev-many")
	require.NoError(t, err)
	assert.True(t, stored.Handled())
	assert.Equal(t, receivers, stored.Deliveries)
}

// A receiver claims the event and stops mid-handler (its process ends):
// once its lease has passed, the next delivery takes the event over and
// handles it, once; the stopped run's late writes are refused.
func testCrashMidHandler(t *testing.T, in journal.InboxStore) {
	record(t, in, Event("s", "ev-crash"))
	crashed := claim(t, in, "s", "ev-crash", "crashed", time.Millisecond)
	var c counter
	var unexpected []error
	var outcome payonce.InboxOutcome
	require.Eventually(t, func() bool {
		res, err := payonce.HandleOnce(ctx(t), in, Event("s", "ev-crash"), c.handler())
		if err != nil && !errors.Is(err, payonce.ErrEventInProgress) {
			unexpected = append(unexpected, err) // only the live claim may delay it
		}
		outcome = res.Outcome
		return err == nil
	}, 30*time.Second, 2*time.Millisecond)
	assert.Empty(t, unexpected)
	assert.Equal(t, payonce.InboxHandled, outcome)
	assert.EqualValues(t, 1, c.runs.Load())
	assert.EqualValues(t, crashed.Fence+1, c.fences[0], "taken over under a new fence")
	_, err := in.MarkHandled(ctx(t), payonce.InboxEvent{Scope: "s", EventID: "ev-crash", Fence: crashed.Fence})
	require.ErrorIs(t, err, payonce.ErrEventHandled, "the stopped run's late mark is refused")
	res, err := payonce.HandleOnce(ctx(t), in, Event("s", "ev-crash"), c.handler())
	require.NoError(t, err)
	assert.Equal(t, payonce.InboxAlreadyHandled, res.Outcome)
	assert.EqualValues(t, 1, c.runs.Load())
}

// A run whose lease passed mid-handler is taken over; its own mark is
// then refused and it answers "taken over" (an EventHandler's effects
// are not undone: the documented limit a MarkingHandler removes).
func testTakenOverRun(t *testing.T, in journal.InboxStore) {
	started, finish := make(chan struct{}), make(chan struct{})
	slow := payonce.EventHandler(func(context.Context, payonce.InboxEvent) error {
		close(started)
		<-finish // a handler that ignores its context's end
		return nil
	})
	first := make(chan error, 1)
	go func() {
		_, err := (&payonce.InboxHandler{Inbox: in, Lease: time.Millisecond}).Handle(context.Background(), Event("s", "ev-over"), slow)
		first <- err
	}()
	<-started
	var c counter
	require.Eventually(t, func() bool {
		_, err := payonce.HandleOnce(ctx(t), in, Event("s", "ev-over"), c.handler())
		return err == nil
	}, 30*time.Second, 2*time.Millisecond)
	close(finish)
	err := <-first
	require.ErrorIs(t, err, payonce.ErrJournalFenced)
	assert.Equal(t, 503, payonce.InboxHTTPStatus(err), "a 5xx: the provider delivers it again")
	assert.EqualValues(t, 1, c.runs.Load())
	stored, err := in.GetEvent(ctx(t), "s", "ev-over")
	require.NoError(t, err)
	assert.EqualValues(t, 2, stored.Fence, "handled by the second run")
}

var errHandler = errors.New("downstream unavailable")

func testHandlerFailureReleases(t *testing.T, in journal.InboxStore) {
	fail := payonce.EventHandler(func(context.Context, payonce.InboxEvent) error {
		return fmt.Errorf("card 4111111111111111 refused\r\nforged line: %w", errHandler)
	})
	res, err := payonce.HandleOnce(ctx(t), in, Event("s", "ev-fail"), fail)
	require.ErrorIs(t, err, payonce.ErrEventHandlerFailed)
	require.ErrorIs(t, err, errHandler, "the handler's error is kept")
	assert.Equal(t, payonce.InboxFailed, res.Outcome)
	assert.Equal(t, 500, payonce.InboxHTTPStatus(err))
	assert.NotContains(t, err.Error(), "4111111111111111")
	stored, err := in.GetEvent(ctx(t), "s", "ev-fail")
	require.NoError(t, err)
	assert.False(t, stored.Handled())
	assert.Empty(t, stored.LeaseOwner, "the claim was released")
	assert.Contains(t, stored.LastError, "downstream unavailable")
	assert.NotContains(t, stored.LastError, "4111111111111111", "the reason is stored redacted")
	assert.NotContains(t, stored.LastError, "\r")

	var c counter
	res, err = payonce.HandleOnce(ctx(t), in, Event("s", "ev-fail"), c.handler())
	require.NoError(t, err, "the next delivery runs it at once")
	assert.Equal(t, payonce.InboxHandled, res.Outcome)
	assert.EqualValues(t, 1, c.runs.Load())
	assert.Equal(t, 2, res.Event.Attempts)
}

func testHandlerPanicReleases(t *testing.T, in journal.InboxStore) {
	boom := payonce.EventHandler(func(context.Context, payonce.InboxEvent) error { panic("handler bug") })
	assert.PanicsWithValue(t, "handler bug", func() { _, _ = payonce.HandleOnce(ctx(t), in, Event("s", "ev-panic"), boom) })
	stored, err := in.GetEvent(ctx(t), "s", "ev-panic")
	require.NoError(t, err)
	assert.Empty(t, stored.LeaseOwner, "the claim was released")
	assert.Contains(t, stored.LastError, "panicked")
	var c counter
	_, err = payonce.HandleOnce(ctx(t), in, Event("s", "ev-panic"), c.handler())
	require.NoError(t, err)
	assert.EqualValues(t, 1, c.runs.Load())
}

type secretHolder []string

func (s secretHolder) SecretValues() []string { return s }

func testBodyStoredRedacted(t *testing.T, in journal.InboxStore) {
	const secret = "whsec-0123456789abcdef"
	body := []byte(`{"charge_uuid":"3f2a","card":{"number":"4111111111111111","cvv":"987"},"note":"signed with ` + secret + `"}`)
	ev := Event("s", "ev-red")
	ev.Body = body
	var c counter
	ih := &payonce.InboxHandler{Inbox: in, Redactor: redact.NewSecrets(secretHolder{secret}).Redactor()}
	res, err := ih.Handle(ctx(t), ev, c.handler())
	require.NoError(t, err)
	assert.Equal(t, body, c.bodies[0], "the handler gets the body as delivered")
	stored, err := in.GetEvent(ctx(t), "s", "ev-red")
	require.NoError(t, err)
	assert.Equal(t, stored.Body, res.Event.Body)
	for _, s := range []string{"4111111111111111", `"987"`, secret} {
		assert.NotContains(t, string(stored.Body), s)
	}
	assert.Contains(t, string(stored.Body), `"charge_uuid":"3f2a"`)
	assert.Contains(t, string(stored.Body), "1111", "a card number keeps its last four")
}

func testHandleOnceBoundsTheBody(t *testing.T, in journal.InboxStore) {
	var c counter
	huge := Event("s", "ev-huge")
	huge.Body = bytes.Repeat([]byte("<"), payonce.MaxEventBody+1)
	res, err := payonce.HandleOnce(ctx(t), in, huge, c.handler())
	require.ErrorIs(t, err, payonce.ErrInvalidEvent)
	assert.Equal(t, 400, payonce.InboxHTTPStatus(err))
	assert.Equal(t, payonce.InboxFailed, res.Outcome)
	_, err = in.GetEvent(ctx(t), "s", "ev-huge")
	require.ErrorIs(t, err, journal.ErrNotFound, "nothing recorded")

	// At the bound, a body redaction lengthens most (not JSON: a JSON
	// string escaping every byte) is stored.
	edge := Event("s", "ev-edge")
	edge.Body = bytes.Repeat([]byte("<"), payonce.MaxEventBody)
	_, err = payonce.HandleOnce(ctx(t), in, edge, c.handler())
	require.NoError(t, err)
	stored, err := in.GetEvent(ctx(t), "s", "ev-edge")
	require.NoError(t, err)
	assert.Greater(t, len(stored.Body), payonce.MaxEventBody)
	assert.EqualValues(t, 1, c.runs.Load())
}

func testHandleOnceRefusesHostileIDs(t *testing.T, in journal.InboxStore) {
	var c counter
	for name, s := range hostileTexts {
		ev := Event("s", s)
		res, err := payonce.HandleOnce(ctx(t), in, ev, c.handler())
		require.ErrorIs(t, err, payonce.ErrInvalidEvent, name)
		assert.Equal(t, 400, payonce.InboxHTTPStatus(err), name)
		assert.Equal(t, payonce.InboxFailed, res.Outcome, name)
		assert.NotContains(t, err.Error(), "\x1b", name)
		assert.NotContains(t, err.Error(), "\u202e", name)
	}
	res, err := payonce.HandleOnce(ctx(t), in, payonce.InboxEvent{Scope: "s", EventID: "ev", Type: "bad\x1btype"}, c.handler())
	require.ErrorIs(t, err, payonce.ErrInvalidEvent)
	assert.Equal(t, payonce.InboxFailed, res.Outcome)
	all, err := in.Events(ctx(t), payonce.InboxQuery{})
	require.NoError(t, err)
	assert.Empty(t, all, "nothing recorded")
	assert.Zero(t, c.runs.Load())
}

// InboxSurvivesRestart checks that a durable inbox keeps what it recorded
// across a restart: first is the store before it, reopen closes it and
// opens the same database again.
func InboxSurvivesRestart(t *testing.T, first journal.InboxStore, reopen func(t *testing.T) journal.InboxStore) {
	t.Helper()
	var c counter
	_, err := payonce.HandleOnce(ctx(t), first, Event("s", "done"), c.handler())
	require.NoError(t, err)
	record(t, first, Event("s", "held"))
	claim(t, first, "s", "held", "crashed", time.Hour)
	record(t, first, Event("s", "open"))

	in := reopen(t)
	res, err := payonce.HandleOnce(ctx(t), in, Event("s", "done"), c.handler())
	require.NoError(t, err)
	assert.Equal(t, payonce.InboxAlreadyHandled, res.Outcome, "handled before the restart")
	assert.Equal(t, 2, res.Event.Deliveries)
	_, err = payonce.HandleOnce(ctx(t), in, Event("s", "held"), c.handler())
	require.ErrorIs(t, err, payonce.ErrEventInProgress, "a claim outlives the restart until its lease ends")
	res, err = payonce.HandleOnce(ctx(t), in, Event("s", "open"), c.handler())
	require.NoError(t, err)
	assert.Equal(t, payonce.InboxHandled, res.Outcome)
	assert.EqualValues(t, 2, c.runs.Load(), "done ran once, before the restart; open once, after")
}

// TxInbox is a backend's inbox with the merchant's transactions, as
// RunInboxTx tests it.
type TxInbox struct {
	Store journal.InboxStore
	// Handler is the backend's HandlerTx around a function that records
	// the event's ID in a table of the merchant's in the transaction,
	// then returns then() (which may panic).
	Handler func(then func() error) payonce.MarkingHandler
	// Effects lists the event IDs in the merchant's table, as committed.
	Effects func(t *testing.T) []string
}

// RunInboxTx runs the suite of an inbox whose handler's writes commit
// with the handled mark in the merchant's transaction. open returns a new,
// empty one for each subtest.
func RunInboxTx(t *testing.T, open func(t *testing.T) TxInbox) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, x TxInbox)
	}{
		{"EffectAndMarkCommitTogether", testTxCommitsTogether},
		{"FailureRollsBoth", testTxFailureRollsBoth},
		{"CrashMidHandlerRollsBoth", testTxCrashMidHandler},
		{"StaleRunWritesNothing", testTxStaleRun},
		{"ConcurrentReceiversOneEffect", testTxConcurrentReceivers},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.fn(t, open(t))
		})
	}
}

func ok() error { return nil }

func testTxCommitsTogether(t *testing.T, x TxInbox) {
	res, err := payonce.HandleOnce(ctx(t), x.Store, Event("s", "tx-1"), x.Handler(ok))
	require.NoError(t, err)
	assert.Equal(t, payonce.InboxHandled, res.Outcome)
	assert.True(t, res.Event.Handled())
	assert.Equal(t, []string{"tx-1"}, x.Effects(t))
	res, err = payonce.HandleOnce(ctx(t), x.Store, Event("s", "tx-1"), x.Handler(ok))
	require.NoError(t, err)
	assert.Equal(t, payonce.InboxAlreadyHandled, res.Outcome)
	assert.Equal(t, []string{"tx-1"}, x.Effects(t), "once")
}

func testTxFailureRollsBoth(t *testing.T, x TxInbox) {
	_, err := payonce.HandleOnce(ctx(t), x.Store, Event("s", "tx-f"), x.Handler(func() error { return errHandler }))
	require.ErrorIs(t, err, payonce.ErrEventHandlerFailed)
	require.ErrorIs(t, err, errHandler)
	assert.Empty(t, x.Effects(t), "the effect rolled back with the mark")
	stored, err := x.Store.GetEvent(ctx(t), "s", "tx-f")
	require.NoError(t, err)
	assert.False(t, stored.Handled())
	assert.Empty(t, stored.LeaseOwner, "released")
	assert.Contains(t, stored.LastError, errHandler.Error())
	_, err = payonce.HandleOnce(ctx(t), x.Store, Event("s", "tx-f"), x.Handler(ok))
	require.NoError(t, err)
	assert.Equal(t, []string{"tx-f"}, x.Effects(t))
}

// The handler's process stops mid-transaction (a panic here; a crash
// ends the connection, which rolls back the same way): neither the
// effect nor the mark is left, and the next delivery handles it once.
func testTxCrashMidHandler(t *testing.T, x TxInbox) {
	assert.Panics(t, func() {
		_, _ = payonce.HandleOnce(ctx(t), x.Store, Event("s", "tx-c"), x.Handler(func() error { panic("crash") }))
	})
	assert.Empty(t, x.Effects(t))
	stored, err := x.Store.GetEvent(ctx(t), "s", "tx-c")
	require.NoError(t, err)
	assert.False(t, stored.Handled())
	res, err := payonce.HandleOnce(ctx(t), x.Store, Event("s", "tx-c"), x.Handler(ok))
	require.NoError(t, err)
	assert.Equal(t, payonce.InboxHandled, res.Outcome)
	assert.Equal(t, []string{"tx-c"}, x.Effects(t))
}

// A run whose claim was taken over writes nothing: its transaction's mark
// is refused and its effect rolled back, however late it comes.
func testTxStaleRun(t *testing.T, x TxInbox) {
	record(t, x.Store, Event("s", "tx-s"))
	stale := claim(t, x.Store, "s", "tx-s", "run-a", time.Millisecond)
	current := claimAfterExpiry(t, x.Store, "s", "tx-s", "run-b")
	require.Equal(t, stale.Fence+1, current.Fence, "taken over")
	_, err := x.Handler(ok)(ctx(t), stale)
	require.ErrorIs(t, err, payonce.ErrJournalFenced)
	assert.Empty(t, x.Effects(t), "the stale run's effect is not committed")
	got, err := x.Handler(ok)(ctx(t), current)
	require.NoError(t, err)
	assert.True(t, got.Handled())
	_, err = x.Handler(ok)(ctx(t), stale)
	require.ErrorIs(t, err, payonce.ErrEventHandled)
	assert.Equal(t, []string{"tx-s"}, x.Effects(t), "one effect")
}

func testTxConcurrentReceivers(t *testing.T, x TxInbox) {
	const receivers = 8
	start := make(chan struct{})
	var wg sync.WaitGroup
	var handled atomic.Int32
	for range receivers {
		wg.Go(func() {
			<-start
			res, err := payonce.HandleOnce(context.Background(), x.Store, Event("s", "tx-many"), x.Handler(ok))
			if err != nil {
				assert.ErrorIs(t, err, payonce.ErrEventInProgress)
				return
			}
			if res.Outcome == payonce.InboxHandled {
				handled.Add(1)
			}
		})
	}
	close(start)
	wg.Wait()
	assert.EqualValues(t, 1, handled.Load())
	assert.Equal(t, []string{"tx-many"}, x.Effects(t), "one effect")
}
