package payonce_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/corekit"
	"github.com/payonce/payonce/journal"
	"github.com/payonce/payonce/journal/journaltest"
	"github.com/payonce/payonce/redact"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// faultyInbox is an inbox whose writes fail as set, recording the lease
// owners of its claims.
type faultyInbox struct {
	payonce.Inbox
	record, claim, mark error

	mu     sync.Mutex
	owners []string
}

func (f *faultyInbox) RecordEvent(ctx context.Context, e payonce.InboxEvent) (payonce.InboxEvent, bool, error) {
	if f.record != nil {
		return payonce.InboxEvent{}, false, f.record
	}
	return f.Inbox.RecordEvent(ctx, e)
}

func (f *faultyInbox) ClaimEvent(ctx context.Context, r payonce.InboxEvent) (payonce.InboxEvent, error) {
	f.mu.Lock()
	f.owners = append(f.owners, r.LeaseOwner)
	f.mu.Unlock()
	if f.claim != nil {
		return payonce.InboxEvent{}, f.claim
	}
	return f.Inbox.ClaimEvent(ctx, r)
}

func (f *faultyInbox) MarkHandled(ctx context.Context, r payonce.InboxEvent) (payonce.InboxEvent, error) {
	if f.mark != nil {
		return payonce.InboxEvent{}, f.mark
	}
	return f.Inbox.MarkHandled(ctx, r)
}

func countingHandler(n *atomic.Int32) payonce.EventHandler {
	return func(context.Context, payonce.InboxEvent) error { n.Add(1); return nil }
}

func TestInboxHTTPStatus(t *testing.T) {
	wrap := func(kind error) error {
		return &payonce.InboxError{Kind: kind, Scope: "s", EventID: "e", Err: errors.New("cause")}
	}
	for _, c := range []struct {
		err  error
		want int
	}{
		{nil, http.StatusOK},
		{wrap(payonce.ErrInvalidEvent), http.StatusBadRequest},
		{wrap(payonce.ErrEventInProgress), http.StatusServiceUnavailable},
		{wrap(payonce.ErrJournalFenced), http.StatusServiceUnavailable},
		{wrap(payonce.ErrEventHandlerFailed), http.StatusInternalServerError},
		{wrap(payonce.ErrJournal), http.StatusServiceUnavailable},
		{errors.New("anything else"), http.StatusServiceUnavailable},
	} {
		assert.Equal(t, c.want, payonce.InboxHTTPStatus(c.err), "%v", c.err)
	}
}

func TestHandleOnceNeedsAnInboxAndAHandler(t *testing.T) {
	var n atomic.Int32
	for name, c := range map[string]struct {
		in payonce.Inbox
		h  payonce.Handler
	}{
		"no inbox":            {nil, countingHandler(&n)},
		"nil inbox":           {(*journal.Memory)(nil), countingHandler(&n)},
		"no handler":          {journal.NewMemory(), nil},
		"nil event handler":   {journal.NewMemory(), payonce.EventHandler(nil)},
		"nil marking handler": {journal.NewMemory(), payonce.MarkingHandler(nil)},
	} {
		_, err := payonce.HandleOnce(t.Context(), c.in, journaltest.Event("s", "e"), c.h)
		require.ErrorIs(t, err, payonce.ErrInvalidConfig, name)
	}
	assert.Zero(t, n.Load())
}

// The error names the event as a terminal shows it safely (quoted,
// redacted) with its age, and unwraps to its kind and cause.
func TestInboxErrorText(t *testing.T) {
	cause := errors.New("db down\r\nlevel=INFO forged")
	at := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	err := &payonce.InboxError{Kind: payonce.ErrJournal, Scope: "a55:c1", EventID: "ev\x1b[2J/4111111111111111", ReceivedAt: at, Err: cause}
	text := err.Error()
	assert.NotContains(t, text, "\x1b")
	assert.NotContains(t, text, "4111111111111111")
	assert.NotContains(t, text, "\n", "one line")
	assert.Contains(t, text, "2026-11-28T10:00:00Z")
	assert.Contains(t, text, `"a55:c1"`)
	assert.Contains(t, text, "db down")
	assert.ErrorIs(t, err, payonce.ErrJournal)
	assert.ErrorIs(t, err, cause)
}

// The handler's context ends with its claim's lease, never after the
// journal's end of it.
func TestHandlerContextEndsWithTheLease(t *testing.T) {
	m := journal.NewMemory()
	var deadline time.Time
	var ok bool
	var leaseUntil time.Time
	h := payonce.EventHandler(func(ctx context.Context, ev payonce.InboxEvent) error {
		deadline, ok = ctx.Deadline()
		leaseUntil = ev.LeaseUntil
		return nil
	})
	before := time.Now()
	_, err := (&payonce.InboxHandler{Inbox: m, Lease: time.Hour}).Handle(t.Context(), journaltest.Event("s", "e"), h)
	require.NoError(t, err)
	require.True(t, ok, "the handler's context has a deadline")
	assert.False(t, deadline.Before(before.Add(time.Hour)))
	assert.False(t, deadline.After(leaseUntil.Add(time.Microsecond)), "never after the lease")
}

// A MarkingHandler that returns without recording the event handled is
// an error: nothing says its effects are recorded.
func TestMarkingHandlerThatDoesNotMark(t *testing.T) {
	m := journal.NewMemory()
	h := payonce.MarkingHandler(func(_ context.Context, ev payonce.InboxEvent) (payonce.InboxEvent, error) { return ev, nil })
	res, err := payonce.HandleOnce(t.Context(), m, journaltest.Event("s", "e"), h)
	require.ErrorIs(t, err, payonce.ErrJournal)
	assert.Equal(t, payonce.InboxFailed, res.Outcome)
	stored, err := m.GetEvent(t.Context(), "s", "e")
	require.NoError(t, err)
	assert.False(t, stored.Handled())
}

// A MarkingHandler whose commit landed though its answer was lost (it
// returns an error) handled the event: the stored event says so.
func TestMarkingHandlerErrorAfterItsMarkLanded(t *testing.T) {
	m := journal.NewMemory()
	h := payonce.MarkingHandler(func(ctx context.Context, ev payonce.InboxEvent) (payonce.InboxEvent, error) {
		if _, err := m.MarkHandled(ctx, ev); err != nil {
			return payonce.InboxEvent{}, err
		}
		return payonce.InboxEvent{}, errors.New("commit: connection reset")
	})
	res, err := payonce.HandleOnce(t.Context(), m, journaltest.Event("s", "e"), h)
	require.NoError(t, err)
	assert.Equal(t, payonce.InboxHandled, res.Outcome)
	assert.True(t, res.Event.Handled())
}

// An EventHandler succeeded but its record failed: the effects are done,
// so the claim is kept until its lease ends, not released for the next
// delivery to run the handler again at once.
func TestMarkFailureKeepsTheClaim(t *testing.T) {
	m := journal.NewMemory()
	f := &faultyInbox{Inbox: m, mark: errors.New("disk full")}
	var n atomic.Int32
	res, err := payonce.HandleOnce(t.Context(), f, journaltest.Event("s", "e"), countingHandler(&n))
	require.ErrorIs(t, err, payonce.ErrJournal)
	assert.Equal(t, http.StatusServiceUnavailable, payonce.InboxHTTPStatus(err))
	assert.Equal(t, payonce.InboxFailed, res.Outcome)
	assert.EqualValues(t, 1, n.Load())
	stored, err := m.GetEvent(t.Context(), "s", "e")
	require.NoError(t, err)
	assert.False(t, stored.Handled())
	assert.NotEmpty(t, stored.LeaseOwner, "the claim is kept")
	_, err = payonce.HandleOnce(t.Context(), m, journaltest.Event("s", "e"), countingHandler(&n))
	require.ErrorIs(t, err, payonce.ErrEventInProgress)
	assert.EqualValues(t, 1, n.Load())
}

func TestInboxFailuresRunNothing(t *testing.T) {
	for name, f := range map[string]*faultyInbox{
		"record": {Inbox: journal.NewMemory(), record: errors.New("disk full")},
		"claim":  {Inbox: journal.NewMemory(), claim: errors.New("connection reset")},
	} {
		var n atomic.Int32
		res, err := payonce.HandleOnce(t.Context(), f, journaltest.Event("s", "e"), countingHandler(&n))
		require.ErrorIs(t, err, payonce.ErrJournal, name)
		assert.Equal(t, payonce.InboxFailed, res.Outcome, name)
		assert.Equal(t, http.StatusServiceUnavailable, payonce.InboxHTTPStatus(err), name)
		assert.Zero(t, n.Load(), name)
	}
}

// Every run claims under its own lease owner, the receiver's name made
// safe and bounded.
func TestRunOwnersAreUniqueAndSafe(t *testing.T) {
	f := &faultyInbox{Inbox: journal.NewMemory()}
	ih := &payonce.InboxHandler{Inbox: f, Owner: strings.Repeat("pod-7", 60) + "\x1b[2J\u202e"}
	var n atomic.Int32
	for i := range 2 {
		_, err := ih.Handle(t.Context(), journaltest.Event("s", fmt.Sprintf("e%d", i)), countingHandler(&n))
		require.NoError(t, err)
	}
	require.Len(t, f.owners, 2)
	assert.NotEqual(t, f.owners[0], f.owners[1])
	for _, o := range f.owners {
		assert.LessOrEqual(t, len(o), corekit.MaxEventText)
		assert.True(t, corekit.EventText(o), "%q", o)
		assert.True(t, strings.HasPrefix(o, "pod-7"), o)
	}
	f.owners = nil
	_, err := payonce.HandleOnce(t.Context(), f, journaltest.Event("s", "e3"), countingHandler(&n))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(f.owners[0], "inbox:"), f.owners[0])
}

func TestInboxEventHandled(t *testing.T) {
	assert.False(t, payonce.InboxEvent{}.Handled())
	assert.True(t, payonce.InboxEvent{HandledAt: time.Unix(1, 0)}.Handled())
}

// webhookSecrets holds a receiver's own secrets (redact.SecretHolder).
type webhookSecrets []string

func (s webhookSecrets) SecretValues() []string { return s }

// The receiver's secrets its Redactor knows are cut from every text the
// inbox gives back, not only from the row: a handler's error quoting the
// webhook secret (in any letter case) is cut from the InboxError's text
// and %+v as it is from the stored LastError.
func TestInboxErrorCutsTheReceiversSecrets(t *testing.T) {
	const secret = "whsec-0123456789abcdef"
	in := journal.NewMemory()
	ih := &payonce.InboxHandler{Inbox: in, Redactor: redact.NewSecrets(webhookSecrets{secret}).Redactor()}
	_, err := ih.Handle(t.Context(), payonce.InboxEvent{Scope: "s", EventID: "ev-1", Body: []byte(`{}`)},
		payonce.EventHandler(func(context.Context, payonce.InboxEvent) error {
			return fmt.Errorf("signature check with %s failed", strings.ToUpper(secret))
		}))
	require.ErrorIs(t, err, payonce.ErrEventHandlerFailed)
	stored, gerr := in.GetEvent(t.Context(), "s", "ev-1")
	require.NoError(t, gerr)
	for name, text := range map[string]string{"Error": err.Error(), "%+v": fmt.Sprintf("%+v", err), "%v": fmt.Sprintf("%v", err), "row": stored.LastError} {
		assert.NotContains(t, strings.ToLower(text), secret, name)
		assert.Contains(t, text, "[REDACTED]", name)
	}
}

// The inbox stores a body as the provider's codec knows its fields
// (InboxHandler.Fields, a codec's AnswerFields): an identifier that
// happens to pass the Luhn check (a Coinepay card_id) comes back as the
// provider sent it, a card number in a card-data field stays masked.
func TestInboxStoresIdentifiersAsSent(t *testing.T) {
	in := journal.NewMemory()
	ih := &payonce.InboxHandler{Inbox: in, Fields: redact.NewFields([]string{"card_id"}, []string{"card_number"})}
	body := []byte(`{"card_id":"4000000000000002","card_number":"4111111111111111"}`)
	_, err := ih.Handle(t.Context(), payonce.InboxEvent{Scope: "s", EventID: "ev-1", ResourceID: "4000000000000002", Body: body},
		payonce.EventHandler(func(context.Context, payonce.InboxEvent) error { return nil }))
	require.NoError(t, err)
	stored, err := in.GetEvent(t.Context(), "s", "ev-1")
	require.NoError(t, err)
	assert.Contains(t, string(stored.Body), `"card_id":"4000000000000002"`)
	assert.NotContains(t, string(stored.Body), "4111111111111111")
}
