package reconcile_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/journal"
	"github.com/payonce/payonce/journal/journaltest"
	"github.com/payonce/payonce/payoncetest"
	"github.com/payonce/payonce/reconcile"
	"github.com/payonce/payonce/redact"
)

const scope = "fake:shop@https://fake.example"

// base is the middle of the span every test reconciles.
var base = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// fakeProvider lists its resources; an entry's result is
// {"id":…,"status":…}; "ok" succeeded, "bad" failed, "wait" pending.
type fakeProvider struct {
	resources []reconcile.Resource
	listErr   error
	fetch     map[string]reconcile.Resource // nil: not a Fetcher's answers
}

func (p *fakeProvider) Info() reconcile.Info {
	return reconcile.Info{Provider: "fake", Scope: scope, Operation: "things.make"}
}

func (p *fakeProvider) List(ctx context.Context, from, to time.Time) iter.Seq2[reconcile.Resource, error] {
	return func(yield func(reconcile.Resource, error) bool) {
		if p.listErr != nil {
			yield(reconcile.Resource{}, p.listErr)
			return
		}
		for _, r := range p.resources {
			if !yield(r, nil) {
				return
			}
		}
	}
}

func (p *fakeProvider) Recorded(e payonce.JournalEntry) (reconcile.Resource, bool) {
	var v struct{ ID, Status string }
	if json.Unmarshal(e.Result, &v) != nil || v.ID == "" {
		return reconcile.Resource{}, false
	}
	return reconcile.Resource{ID: v.ID, Status: v.Status}, true
}

func (p *fakeProvider) Outcome(status string) reconcile.Outcome {
	switch status {
	case "ok", "moved":
		return reconcile.OutcomeSucceeded
	case "bad":
		return reconcile.OutcomeFailed
	case "wait":
		return reconcile.OutcomePending
	case "undone":
		return reconcile.OutcomeReversed
	}
	return reconcile.OutcomeUnknown
}

// fetching is a fakeProvider that is a Fetcher.
type fetching struct{ *fakeProvider }

func (p fetching) Fetch(ctx context.Context, id string) (reconcile.Resource, bool, error) {
	r, ok := p.fetch[id]
	return r, ok, nil
}

// book writes entries into a memory journal on a fixed clock.
type book struct {
	t *testing.T
	j *journal.Memory
}

func newBook(t *testing.T) *book {
	return &book{t: t, j: journal.NewMemory().WithClock(func() time.Time { return base.Add(3 * time.Hour) })}
}

// entry records ref, reserved at created with key, in state with result.
func (b *book) entry(ref, key string, created time.Time, state payonce.JournalState, result string) {
	b.t.Helper()
	e := journaltest.Entry(scope, ref)
	e.Operation, e.Key, e.KeyCreated, e.CreatedAt, e.UpdatedAt, e.Sent = "things.make", key, created, created, created, true
	_, created2, err := b.j.Reserve(b.t.Context(), e)
	require.NoError(b.t, err)
	require.True(b.t, created2)
	if state == payonce.JournalPending {
		return
	}
	e.State, e.UpdatedAt, e.Fence = state, created.Add(time.Second), 1
	if result != "" {
		e.Result, e.StatusCode = []byte(result), 200
		var v struct{ ID string }
		if json.Unmarshal(e.Result, &v) == nil {
			e.ResourceID = v.ID // as the client keeps it
		}
	}
	if state == payonce.JournalFailed {
		e.ErrorKind = "declined"
	}
	require.NoError(b.t, b.j.Update(b.t.Context(), e))
}

func result(id, status string) string { return `{"id":"` + id + `","status":"` + status + `"}` }

func opts() reconcile.Options {
	return reconcile.Options{From: base.Add(-time.Hour), To: base.Add(time.Hour), Now: base.Add(3 * time.Hour)}
}

func run(t *testing.T, p reconcile.Provider, b *book, o reconcile.Options) *reconcile.Report {
	t.Helper()
	rep, err := reconcile.Run(t.Context(), p, b.j, o)
	require.NoError(t, err)
	return rep
}

// kinds is the report's findings as kind, reference, resource.
func kinds(rep *reconcile.Report) [][3]string {
	out := [][3]string{}
	for _, f := range rep.Findings {
		out = append(out, [3]string{string(f.Kind), f.Reference, f.ResourceID})
	}
	return out
}

func TestCleanJournalReportsNothing(t *testing.T) {
	b := newBook(t)
	b.entry("o-1/attempt-1", "k1", base, payonce.JournalSucceeded, result("r1", "ok"))
	b.entry("o-2/attempt-1", "k2", base, payonce.JournalFailed, "")
	b.entry("o-2/attempt-2", "k3", base.Add(time.Minute), payonce.JournalSucceeded, result("r3", "ok"))
	b.entry("o-3/attempt-1", "k4", base, payonce.JournalFailed, result("r4", "bad"))
	p := &fakeProvider{resources: []reconcile.Resource{
		{ID: "r1", Status: "ok", CreatedAt: base},
		{ID: "r3", Status: "OK ", CreatedAt: base.Add(time.Minute)},
		{ID: "r4", Status: "bad", CreatedAt: base},
		{ID: "old", Status: "ok", CreatedAt: base.Add(-5 * time.Hour)}, // before the span: not this run's
	}}
	rep := run(t, p, b, opts())
	assert.Empty(t, rep.Findings)
	assert.False(t, rep.NeedsAttention())
	assert.Equal(t, 3, rep.Resources)
	assert.Equal(t, 4, rep.Entries)
	assert.Equal(t, "fake", rep.Provider)
	assert.Equal(t, scope, rep.Scope)
}

func TestUnrecordedResourceNamesCandidates(t *testing.T) {
	b := newBook(t)
	b.entry("o-1/attempt-1", "k1", base, payonce.JournalFailed, "")
	p := &fakeProvider{resources: []reconcile.Resource{
		{ID: "r9", Status: "ok", CreatedAt: base.Add(time.Minute), Amount: payoncetest.Amount("10.00"), Currency: "USD", Account: "w1"},
		{ID: "r8", Status: "ok"}, // no time: reported, it cannot be placed
	}}
	rep := run(t, p, b, opts())
	require.Equal(t, [][3]string{{"unrecorded", "", "r8"}, {"unrecorded", "", "r9"}}, kinds(rep))
	f := rep.Findings[1]
	assert.Equal(t, "10.00", f.Amount.String())
	assert.Equal(t, payonce.Currency("USD"), f.Currency)
	assert.Equal(t, "w1", f.Account)
	assert.Empty(t, f.EntryState)
	assert.Contains(t, f.Detail, "o-1/attempt-1", "a failed entry without a resource in its window may have made it")
	assert.True(t, rep.NeedsAttention())
}

func TestMisrecorded(t *testing.T) {
	b := newBook(t)
	b.entry("failed-but-made", "k1", base, payonce.JournalFailed, "")
	b.entry("ok-but-failed", "k2", base, payonce.JournalSucceeded, result("r2", "ok"))
	b.entry("ok-but-missing", "k3", base, payonce.JournalSucceeded, result("r3", "ok"))
	b.entry("ok-no-resource", "k4", base, payonce.JournalSucceeded, `{"other":1}`)
	b.entry("failed-still-pending", "k5", base, payonce.JournalFailed, result("r5", "bad"))
	b.entry("failed-but-undone", "k8", base, payonce.JournalFailed, "")
	b.entry("rightful", "k6", base, payonce.JournalSucceeded, result("r6", "ok"))
	b.entry("took-r6", "k7", base, payonce.JournalSucceeded, result("r6", "ok"))
	p := &fakeProvider{resources: []reconcile.Resource{
		{ID: "r1", Status: "ok", Key: "k1", CreatedAt: base},
		{ID: "r2", Status: "bad", CreatedAt: base},
		{ID: "r5", Status: "wait", CreatedAt: base},
		{ID: "r6", Status: "ok", Key: "k6", CreatedAt: base},
		{ID: "r8", Status: "undone", Key: "k8", CreatedAt: base},
	}}
	rep := run(t, p, b, opts())
	assert.ElementsMatch(t, [][3]string{
		{"misrecorded", "failed-but-undone", "r8"},
		{"misrecorded", "failed-but-made", "r1"},
		{"misrecorded", "ok-but-failed", "r2"},
		{"misrecorded", "ok-but-missing", "r3"},
		{"misrecorded", "ok-no-resource", ""},
		{"misrecorded", "failed-still-pending", "r5"},
		{"misrecorded", "took-r6", "r6"},
	}, kinds(rep))
	by := map[string]reconcile.Finding{}
	for _, f := range rep.Findings {
		by[f.Reference] = f
	}
	assert.Equal(t, "failed", by["failed-but-made"].EntryState)
	assert.Contains(t, by["ok-but-failed"].Detail, `"bad", a failure`)
	assert.Equal(t, "ok", by["ok-but-failed"].Known, "the status the entry recorded")
	assert.Contains(t, by["ok-but-missing"].Detail, "not in the provider's list")
	assert.Contains(t, by["took-r6"].Detail, "under the key of rightful")
}

func TestMisrecordedMissingAskedOfAFetcher(t *testing.T) {
	b := newBook(t)
	b.entry("gone", "k1", base, payonce.JournalSucceeded, result("r1", "ok"))
	b.entry("elsewhere", "k2", base, payonce.JournalSucceeded, result("r2", "ok"))
	b.entry("elsewhere-failed", "k3", base, payonce.JournalSucceeded, result("r3", "ok"))
	p := fetching{&fakeProvider{fetch: map[string]reconcile.Resource{
		"r2": {ID: "r2", Status: "ok"}, "r3": {ID: "r3", Status: "bad"},
	}}}
	rep := run(t, p, b, opts())
	assert.Equal(t, [][3]string{{"misrecorded", "elsewhere-failed", "r3"}, {"misrecorded", "gone", "r1"}}, kinds(rep))
	assert.Contains(t, rep.Findings[1].Detail, "answers does not exist")

	p.fetch["r1"] = reconcile.Resource{ID: "other", Status: "ok"}
	_, err := reconcile.Run(t.Context(), p, b.j, opts())
	assert.ErrorIs(t, err, reconcile.ErrMalformedResource, "an answer about another resource is refused")
}

func TestTwoSuccessfulAttemptsOfOneOrder(t *testing.T) {
	b := newBook(t)
	b.entry("o-1/attempt-1", "k1", base, payonce.JournalSucceeded, result("r1", "ok"))
	b.entry("o-1/attempt-2", "k2", base.Add(time.Minute), payonce.JournalSucceeded, result("r2", "ok"))
	// o-2: attempt 1 recorded failed, but the provider made it (by key).
	b.entry("o-2/attempt-1", "k3", base, payonce.JournalFailed, "")
	b.entry("o-2/attempt-2", "k4", base.Add(time.Minute), payonce.JournalSucceeded, result("r4", "ok"))
	// o-3: attempt 1 succeeded, then failed at the provider: one success.
	b.entry("o-3/attempt-1", "k5", base, payonce.JournalSucceeded, result("r5", "ok"))
	b.entry("o-3/attempt-2", "k6", base.Add(time.Minute), payonce.JournalSucceeded, result("r6", "ok"))
	// o-5: attempt 1 succeeded, then was undone: one success stands.
	b.entry("o-5/attempt-1", "k9", base, payonce.JournalSucceeded, result("r9", "ok"))
	b.entry("o-5/attempt-2", "k10", base.Add(time.Minute), payonce.JournalSucceeded, result("r10", "ok"))
	p := &fakeProvider{resources: []reconcile.Resource{
		{ID: "r1", Status: "ok", CreatedAt: base}, {ID: "r2", Status: "moved", CreatedAt: base},
		{ID: "r3", Status: "wait", Key: "k3", CreatedAt: base}, {ID: "r4", Status: "ok", CreatedAt: base},
		{ID: "r5", Status: "bad", CreatedAt: base}, {ID: "r6", Status: "ok", CreatedAt: base},
		{ID: "r9", Status: "undone", CreatedAt: base}, {ID: "r10", Status: "ok", CreatedAt: base},
		// o-4 has one entry; a resource naming o-4 that no entry holds is a second.
		{ID: "r8", Status: "ok", Order: "o-4", CreatedAt: base},
	}}
	b.entry("o-4/attempt-1", "k7", base, payonce.JournalSucceeded, result("r7", "ok"))
	p.resources = append(p.resources, reconcile.Resource{ID: "r7", Status: "ok", CreatedAt: base})
	rep := run(t, p, b, opts())
	var two [][3]string
	for _, f := range rep.Findings {
		if f.Kind == reconcile.KindTwoSuccesses {
			two = append(two, [3]string{f.Order, f.Reference, f.ResourceID})
			assert.Contains(t, f.Detail, "successful attempts of order "+f.Order)
		}
	}
	assert.Equal(t, [][3]string{
		{"o-1", "o-1/attempt-1", "r1"}, {"o-1", "o-1/attempt-2", "r2"},
		{"o-2", "o-2/attempt-1", "r3"}, {"o-2", "o-2/attempt-2", "r4"},
		{"o-4", "", "r8"}, {"o-4", "o-4/attempt-1", "r7"},
	}, two)

	// Another rule: orders are what precedes "#".
	rule, err := reconcile.OrderPattern(`^(.+)#[0-9]+$`)
	require.NoError(t, err)
	o := opts()
	o.Orders = rule
	rep = run(t, p, b, o)
	for _, f := range rep.Findings {
		assert.NotEqual(t, reconcile.KindTwoSuccesses, f.Kind, "no reference is an attempt under this rule")
	}
}

func TestInDoubtEntries(t *testing.T) {
	b := newBook(t)
	old := base.Add(-30 * time.Hour)
	b.entry("made", "k1", base.Add(-23*time.Hour), payonce.JournalPending, "")
	b.entry("lost", "k2", old, payonce.JournalPending, "")
	b.entry("fresh", "k3", base.Add(2*time.Hour), payonce.JournalPending, "") // a run may still finish it
	e := journaltest.Entry(scope, "recharge")
	e.Operation, e.KeyCreated, e.CreatedAt, e.UpdatedAt, e.Sent = "things.topup", old, old, old, true
	_, _, err := b.j.Reserve(t.Context(), e)
	require.NoError(t, err)
	// made's key was sent again late in its window: its resource is in the span.
	p := &fakeProvider{resources: []reconcile.Resource{{ID: "r1", Status: "ok", Key: "k1", CreatedAt: base.Add(-50 * time.Minute)}}}
	rep := run(t, p, b, opts())
	assert.Equal(t, [][3]string{{"in-doubt", "lost", ""}, {"in-doubt", "recharge", ""}, {"in-doubt", "made", "r1"}}, kinds(rep))
	for _, f := range rep.Findings {
		assert.Equal(t, "in-doubt", f.EntryState)
	}
	assert.Contains(t, rep.Findings[0].Detail, "before the span listed")
	assert.Contains(t, rep.Findings[1].Detail, "settle it by hand")
	assert.Contains(t, rep.Findings[2].Detail, "under its key")
}

func TestInboxNeverReceivedTheStatus(t *testing.T) {
	b := newBook(t)
	b.entry("quiet", "k1", base, payonce.JournalSucceeded, result("r1", "ok"))
	b.entry("told", "k2", base, payonce.JournalSucceeded, result("r2", "ok"))
	b.entry("late", "k3", base, payonce.JournalSucceeded, result("r3", "ok"))
	b.entry("same", "k4", base, payonce.JournalSucceeded, result("r4", "ok"))
	b.entry("broken", "k5", base, payonce.JournalSucceeded, result("r5", "ok")) // misrecorded: once
	for i, ev := range []payonce.InboxEvent{
		{EventID: "e1", ResourceID: "r2", Type: "moved"},
		{EventID: "e2", ResourceID: "r3", Type: "moved"},
		{EventID: "e3", ResourceID: "r3", Type: "ok"},
		{EventID: "e4", ResourceID: "r1", Type: "moved"}, // another scope's
	} {
		ev.Scope, ev.Body = scope, []byte(`{}`)
		if i == 3 {
			ev.Scope = "other"
		}
		_, _, err := b.j.RecordEvent(t.Context(), ev)
		require.NoError(t, err)
	}
	p := &fakeProvider{resources: []reconcile.Resource{
		{ID: "r1", Status: "moved", CreatedAt: base}, {ID: "r2", Status: "Moved", CreatedAt: base},
		{ID: "r3", Status: "moved", CreatedAt: base}, {ID: "r4", Status: "ok", CreatedAt: base},
		{ID: "r5", Status: "bad", CreatedAt: base},
	}}
	rep := run(t, p, b, opts())
	assert.Equal(t, [][3]string{{"misrecorded", "broken", "r5"}}, kinds(rep), "without an inbox, a status change is the resource's life, not a finding")
	assert.False(t, rep.Inbox)

	o := opts()
	o.Inbox = b.j
	rep = run(t, p, b, o)
	assert.True(t, rep.Inbox)
	require.Equal(t, [][3]string{{"misrecorded", "broken", "r5"}, {"unreceived-status", "late", "r3"}, {"unreceived-status", "quiet", "r1"}}, kinds(rep),
		"a misrecorded resource is reported once")
	assert.Equal(t, "ok", rep.Findings[1].Known)
	assert.Contains(t, rep.Findings[1].Detail, "last of the inbox's 2 events")
	assert.Equal(t, "moved", rep.Findings[2].Status)
	assert.Contains(t, rep.Findings[2].Detail, "holds no event")

	o.InboxScope = "other"
	rep = run(t, p, b, o)
	assert.Equal(t, [][3]string{{"misrecorded", "broken", "r5"}, {"unreceived-status", "late", "r3"}, {"unreceived-status", "told", "r2"}}, kinds(rep))

	in, err := reconcile.InboxInUse(t.Context(), b.j, scope)
	require.NoError(t, err)
	assert.True(t, in)
	in, err = reconcile.InboxInUse(t.Context(), b.j, "nobody")
	require.NoError(t, err)
	assert.False(t, in)
}

func TestRunRefuses(t *testing.T) {
	b := newBook(t)
	p := &fakeProvider{}
	for name, o := range map[string]reconcile.Options{
		"no span":         {},
		"no end":          {From: base},
		"backwards":       {From: base, To: base},
		"negative margin": {From: base, To: base.Add(time.Hour), Margin: -1},
		"negative bound":  {From: base, To: base.Add(time.Hour), MaxResources: -1},
	} {
		_, err := reconcile.Run(t.Context(), p, b.j, o)
		assert.ErrorIs(t, err, reconcile.ErrInvalidOptions, name)
	}
	_, err := reconcile.Run(t.Context(), nil, b.j, opts())
	assert.ErrorIs(t, err, reconcile.ErrInvalidOptions)

	p.listErr = errors.New("boom")
	_, err = reconcile.Run(t.Context(), p, b.j, opts())
	assert.ErrorContains(t, err, "boom")

	p.listErr = nil
	p.resources = []reconcile.Resource{{ID: "a"}, {ID: "b"}, {ID: "c"}}
	o := opts()
	o.MaxResources = 2
	_, err = reconcile.Run(t.Context(), p, b.j, o)
	assert.ErrorIs(t, err, reconcile.ErrTooManyResources)

	for _, bad := range []string{"", string(make([]byte, 256))} {
		p.resources = []reconcile.Resource{{ID: bad, Status: "ok"}}
		_, err = reconcile.Run(t.Context(), p, b.j, opts())
		assert.ErrorIs(t, err, reconcile.ErrMalformedResource)
	}
}

// A provider's free texts are redacted; its identifiers are kept as sent.
func TestResourceTextsRedacted(t *testing.T) {
	b := newBook(t)
	p := &fakeProvider{resources: []reconcile.Resource{
		{ID: "4111111111111111", Status: "card 4111111111111111", Account: "4111 1111 1111 1111", CreatedAt: base},
	}}
	rep := run(t, p, b, opts())
	require.Len(t, rep.Findings, 1)
	f := rep.Findings[0]
	assert.Equal(t, "4111111111111111", f.ResourceID, "an identifier comes back as sent")
	assert.NotContains(t, f.Status, "4111111111111111")
	assert.NotContains(t, f.Account, "4111 1111 1111 1111")
}

// A detail names at most five entries, and how many more.
func TestDetailNamesAtMostFive(t *testing.T) {
	b := newBook(t)
	for i := range 7 {
		b.entry(fmt.Sprintf("job-%d", i), fmt.Sprintf("k%d", i), base, payonce.JournalPending, "")
	}
	p := &fakeProvider{resources: []reconcile.Resource{{ID: "r1", Status: "ok", CreatedAt: base}}}
	rep := run(t, p, b, opts())
	require.Equal(t, [][3]string{{"unrecorded", "", "r1"}}, kinds(rep), "pending, not yet in doubt: no finding of their own")
	assert.Equal(t, "no journal entry holds it; entries without a resource in its window: job-0, job-1, job-2, job-3, job-4 and 2 more",
		rep.Findings[0].Detail)
}

// An entry reserved long before the span that holds one of its resources
// (settled by hand later) ties it, through the journal's Holders; the
// journal's own ResourceID names the resource where the answer does not.
func TestResourceHeldOutsideTheEntriesRead(t *testing.T) {
	b := newBook(t)
	b.entry("old", "k1", base.Add(-72*time.Hour), payonce.JournalSucceeded, result("r1", "ok"))
	b.entry("old-failed", "k2", base.Add(-72*time.Hour), payonce.JournalSucceeded, result("r2", "ok"))
	// The answer names nothing the provider reads; the journal kept the ID.
	_, _, err := b.j.Reserve(t.Context(), func() payonce.JournalEntry {
		n := journaltest.Entry(scope, "kept-id")
		n.Operation, n.Key, n.KeyCreated, n.CreatedAt, n.UpdatedAt, n.Sent = "things.make", "k3", base, base, base, true
		return n
	}())
	require.NoError(t, err)
	kept, err := b.j.Get(t.Context(), scope, "kept-id")
	require.NoError(t, err)
	kept.State, kept.Result, kept.ResourceID, kept.UpdatedAt = payonce.JournalSucceeded, []byte(`{"other":1}`), "r3", base.Add(time.Second)
	require.NoError(t, b.j.Update(t.Context(), kept))
	p := &fakeProvider{resources: []reconcile.Resource{
		{ID: "r1", Status: "ok", CreatedAt: base},  // held by "old": nothing to report
		{ID: "r2", Status: "bad", CreatedAt: base}, // held by "old-failed", failed: misrecorded
		{ID: "r3", Status: "bad", CreatedAt: base}, // held by kept-id through its ResourceID
	}}
	rep := run(t, p, b, opts())
	assert.Equal(t, [][3]string{{"misrecorded", "kept-id", "r3"}, {"misrecorded", "old-failed", "r2"}}, kinds(rep))
}

// Two attempts of one order that hold the same resource (a journal that
// recorded one charge under both) are one payment, not two: they are
// misrecorded, never "two successful attempts", whose remedy (refund
// all but one) would refund the order's only payment.
func TestAttemptsHoldingOneResourceAreNotTwoSuccesses(t *testing.T) {
	b := newBook(t)
	b.entry("o-7/attempt-1", "k1", base, payonce.JournalSucceeded, result("r1", "ok"))
	b.entry("o-7/attempt-2", "k2", base.Add(time.Minute), payonce.JournalSucceeded, result("r1", "ok"))
	p := &fakeProvider{resources: []reconcile.Resource{{ID: "r1", Status: "ok", CreatedAt: base}}}
	rep := run(t, p, b, opts())
	assert.ElementsMatch(t, [][3]string{
		{"misrecorded", "o-7/attempt-1", "r1"},
		{"misrecorded", "o-7/attempt-2", "r1"},
	}, kinds(rep))
}

// secretHolder holds a provider client's own secrets.
type secretHolder []string

func (h secretHolder) SecretValues() []string { return h }

// The report's statuses and texts lose the client's own secrets too
// (Options.Secrets: its credentials, a token it obtained), in any
// letter case, where they do not look like secrets; its identifiers keep
// their digits and lose them as well.
func TestReportCutsTheClientsOwnSecrets(t *testing.T) {
	const secret = "pelican-orbit-77"
	b := newBook(t)
	p := &fakeProvider{resources: []reconcile.Resource{
		{ID: "card_4111111111111111_" + secret, Status: "frozen by " + strings.ToUpper(secret), Account: "hdr/" + secret,
			Order: "order-" + secret, Currency: payonce.Currency(secret), CreatedAt: base},
	}}
	o := opts()
	o.Secrets = redact.NewSecrets(secretHolder{secret})
	rep := run(t, p, b, o)
	require.Len(t, rep.Findings, 1)
	out, err := json.Marshal(rep)
	require.NoError(t, err)
	assert.NotContains(t, strings.ToLower(string(out)), secret)
	f := rep.Findings[0]
	assert.Equal(t, "frozen by [REDACTED]", f.Status)
	assert.Contains(t, f.ResourceID, "card_4111111111111111_", "an identifier keeps its digits")
}

// tokenClient is a provider client that obtains its token as it reads
// the list (an A55 client's first request fetches one).
type tokenClient struct {
	*fakeProvider
	mu    sync.Mutex
	token string
}

func (c *tokenClient) SecretValues() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.token == "" {
		return nil
	}
	return []string{c.token}
}

func (c *tokenClient) List(ctx context.Context, from, to time.Time) iter.Seq2[reconcile.Resource, error] {
	c.mu.Lock()
	c.token = "opaque-token-5150"
	c.mu.Unlock()
	return c.fakeProvider.List(ctx, from, to)
}

// A token the client obtains while Run reads the list is cut too: the
// client's secrets are asked for again for each text.
func TestReportCutsATokenObtainedWhileReading(t *testing.T) {
	b := newBook(t)
	c := &tokenClient{fakeProvider: &fakeProvider{resources: []reconcile.Resource{
		{ID: "r1", Status: "held for opaque-token-5150", CreatedAt: base},
	}}}
	o := opts()
	o.Secrets = redact.NewSecrets(c)
	rep := run(t, c, b, o)
	require.Len(t, rep.Findings, 1)
	assert.Equal(t, "held for [REDACTED]", rep.Findings[0].Status)
}
