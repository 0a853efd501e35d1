package payonce

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/payonce/payonce/internal/corekit"
	"github.com/payonce/payonce/redact"
)

// DefaultInboxLease is how long a handler run holds an event when
// InboxHandler.Lease is not set: a receiver that stops mid-handler keeps
// the event from the other receivers that long.
const DefaultInboxLease = time.Minute

// EventHandler is the merchant's handling of one event. HandleOnce calls
// it with the stored event (its Fence is the run's claim) carrying the
// body as delivered, under a context that ends with the claim's lease,
// and records the event handled once it returns nil. Its effects and that
// record are two writes: should the record fail, or another run take the
// event over once the lease has passed, a later delivery runs the handler
// again. Make its effects idempotent, or use a MarkingHandler that commits
// them with the record.
type EventHandler func(ctx context.Context, ev InboxEvent) error

// MarkingHandler is a handler that records the event handled itself, in
// the transaction its own effects commit in, so that both commit or
// neither: it calls MarkHandled (or a backend's MarkHandledTx) with ev's
// scope, ID and fence, commits, and returns the event MarkHandled
// returned. sqlitejournal and pgjournal make one from a function of the
// merchant's transaction (HandlerTx). A mark refused because another run
// took the event over rolls the effects back.
type MarkingHandler func(ctx context.Context, ev InboxEvent) (InboxEvent, error)

// Handler is an EventHandler or a MarkingHandler.
type Handler interface {
	run(ctx context.Context, in Inbox, ev InboxEvent) (InboxEvent, error)
}

// markError is a MarkHandled failure after an EventHandler succeeded.
type markError struct{ err error }

func (e *markError) Error() string { return e.err.Error() }
func (e *markError) Unwrap() error { return e.err }

func (h EventHandler) run(ctx context.Context, in Inbox, ev InboxEvent) (InboxEvent, error) {
	if err := h(ctx, ev); err != nil {
		return InboxEvent{}, err
	}
	// Recorded even when the handler's context has ended: its effects
	// are done.
	mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), journalWriteTimeout)
	defer cancel()
	got, err := in.MarkHandled(mctx, InboxEvent{Scope: ev.Scope, EventID: ev.EventID, Fence: ev.Fence})
	if err != nil {
		return got, &markError{err}
	}
	return got, nil
}

func (h MarkingHandler) run(ctx context.Context, _ Inbox, ev InboxEvent) (InboxEvent, error) {
	return h(ctx, ev)
}

// InboxOutcome is what HandleOnce did with a delivery.
type InboxOutcome string

// The outcomes of HandleOnce, with the HTTP status InboxHTTPStatus gives
// the receiver's answer.
const (
	// InboxHandled: this delivery ran the handler and the event is
	// recorded handled (200).
	InboxHandled InboxOutcome = "handled"
	// InboxAlreadyHandled: an earlier delivery's run handled the event;
	// the handler did not run (200: the provider may stop).
	InboxAlreadyHandled InboxOutcome = "already_handled"
	// InboxInProgress: another run holds a live claim on the event
	// (ErrEventInProgress); the handler did not run here (503: the
	// provider delivers again, and that delivery finds the event handled,
	// or takes it over once the claim's lease has passed).
	InboxInProgress InboxOutcome = "in_progress"
	// InboxTakenOver: the handler ran, but another run took the event
	// over before this one recorded it (ErrJournalFenced): a
	// MarkingHandler's effects were rolled back, an EventHandler's were
	// not (503).
	InboxTakenOver InboxOutcome = "taken_over"
	// InboxFailed: the handler failed (ErrEventHandlerFailed, 500), the
	// inbox failed (ErrJournal, 503) or the event is invalid
	// (ErrInvalidEvent, 400); the event, when recorded, stays unhandled
	// for the next delivery.
	InboxFailed InboxOutcome = "failed"
)

// InboxResult is what HandleOnce did: its outcome and the event as
// stored after it (zero when nothing was recorded).
type InboxResult struct {
	Outcome InboxOutcome
	Event   InboxEvent
}

// InboxError is the error of HandleOnce: the event's identity, when it
// was first received (zero when it was not recorded), the kind of failure
// (ErrInvalidEvent, ErrEventInProgress, ErrJournalFenced,
// ErrEventHandlerFailed or ErrJournal) and its cause.
type InboxError struct {
	Kind       error
	Scope      string
	EventID    string
	ReceivedAt time.Time
	Err        error

	// secrets cuts the receiver's own secrets (InboxHandler.Redactor)
	// from the text; nil for none.
	secrets *redact.Redactor
}

// Error names the event (quoted, redacted), when it was first received
// and the failure, on one line: the cause's control characters become
// spaces, and the receiver's own secrets (InboxHandler.Redactor) are cut
// as from the stored event.
func (e *InboxError) Error() string {
	s := fmt.Sprintf("payonce: webhook event %s of scope %s", e.secrets.Redact(fmt.Sprintf("%q", e.EventID)), e.secrets.Redact(fmt.Sprintf("%q", e.Scope)))
	if !e.ReceivedAt.IsZero() {
		s += " (first received " + e.ReceivedAt.UTC().Format(time.RFC3339) + ")"
	}
	s += ": " + e.Kind.Error()
	if e.Err != nil && e.Err != e.Kind {
		s += ": " + e.secrets.ServerText(e.Err.Error())
	}
	return s
}

// Unwrap gives errors.Is the kind and the cause.
func (e *InboxError) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

// InboxHTTPStatus is the status a webhook receiver answers a delivery
// HandleOnce returned err for: 200 when nil (handled, now or before);
// 400 for ErrInvalidEvent (no delivery of it can be recorded); 500 for
// ErrEventHandlerFailed; 503 for ErrEventInProgress and ErrJournalFenced
// (another run holds the event) and for anything else (the inbox
// failed). Every answer but 200 and 400 is a 5xx because providers retry
// a 5xx and some (A55) never retry a 4xx: an event another run holds must
// be delivered again, to find it handled or take it over should that run
// have stopped.
func InboxHTTPStatus(err error) int {
	switch {
	case err == nil:
		return http.StatusOK
	case errors.Is(err, ErrInvalidEvent):
		return http.StatusBadRequest
	case errors.Is(err, ErrEventHandlerFailed):
		return http.StatusInternalServerError
	}
	return http.StatusServiceUnavailable
}

// InboxHandler hands verified webhook events to the merchant's handler
// once across a fleet of receivers, through an Inbox: it records the
// delivery, claims the event, runs the handler and records it handled.
// Its zero fields take defaults; it is safe for concurrent use.
type InboxHandler struct {
	Inbox Inbox
	// Owner names the receiver in the leases it takes (a host or pod
	// name); each run adds a unique suffix. "inbox" when empty.
	Owner string
	// Lease is how long a run holds an event (DefaultInboxLease when not
	// above 0): the handler's context ends with it, and a receiver that
	// stops mid-handler keeps the event from the others that long.
	Lease time.Duration
	// Redactor cuts the receiver's own secrets (a webhook secret, the
	// client's credentials) from the stored body, besides what
	// redact.JSON removes; nil for none.
	Redactor *redact.Redactor
	// Fields names what the provider's webhook bodies hold, as its codec
	// knows its answers (a codec's AnswerFields): identifiers are stored
	// exactly as sent, digits and all (one ID of 13 to 19 digits in ten
	// passes the Luhn check, and masking it would lose the card or charge
	// the event is about), card data always masked. nil: every field goes
	// through the pattern rules alone (redact.JSONWith).
	Fields *redact.Fields
}

// HandleOnce hands ev to h once through in, with InboxHandler's
// defaults: see InboxHandler.Handle.
func HandleOnce(ctx context.Context, in Inbox, ev InboxEvent, h Handler) (InboxResult, error) {
	return (&InboxHandler{Inbox: in}).Handle(ctx, ev, h)
}

// Handle hands the verified event ev (Scope, EventID, ResourceID and Type
// from the provider's codec, Body as delivered, at most MaxEventBody) to
// h once: it records the delivery (the body redacted), claims the event
// and, unless it was handled already or another run holds it, runs h and
// records the event handled. The error is an *InboxError, and
// InboxHTTPStatus turns it into the receiver's answer. A handler that
// fails or panics releases its claim (a panic goes on after), so that the
// next delivery runs it again at once.
func (ih *InboxHandler) Handle(ctx context.Context, ev InboxEvent, h Handler) (InboxResult, error) {
	in := ih.Inbox
	fail := func(kind error, stored InboxEvent, err error) (InboxResult, error) {
		outcome := InboxFailed
		switch kind {
		case ErrEventInProgress:
			outcome = InboxInProgress
		case ErrJournalFenced:
			outcome = InboxTakenOver
		}
		return InboxResult{Outcome: outcome, Event: stored}, &InboxError{Kind: kind, Scope: ev.Scope, EventID: ev.EventID, ReceivedAt: stored.ReceivedAt, Err: err,
			secrets: ih.Redactor}
	}
	if corekit.IsNil(in) || corekit.IsNil(h) {
		return fail(ErrInvalidConfig, InboxEvent{}, fmt.Errorf("%w: an inbox and a handler are required", ErrInvalidConfig))
	}
	rec, err := ih.recorded(ev)
	if err != nil {
		return fail(ErrInvalidEvent, InboxEvent{}, err)
	}
	stored, _, err := in.RecordEvent(ctx, rec)
	switch {
	case errors.Is(err, ErrInvalidEvent):
		return fail(ErrInvalidEvent, InboxEvent{}, err)
	case err != nil:
		return fail(ErrJournal, InboxEvent{}, err)
	case stored.Handled():
		return InboxResult{Outcome: InboxAlreadyHandled, Event: stored}, nil
	}

	lease := ih.Lease
	if lease <= 0 {
		lease = DefaultInboxLease
	}
	// The handler's context ends with the lease, measured from before
	// the claim was asked for: never after the journal's end of it.
	hctx, cancel := context.WithTimeout(ctx, lease)
	defer cancel()
	claimed, err := in.ClaimEvent(ctx, InboxEvent{Scope: ev.Scope, EventID: ev.EventID, LeaseOwner: ih.runOwner(), Lease: lease})
	switch {
	case errors.Is(err, ErrEventHandled):
		return InboxResult{Outcome: InboxAlreadyHandled, Event: claimed}, nil
	case errors.Is(err, ErrJournalLeased):
		return fail(ErrEventInProgress, claimed, err)
	case err != nil:
		return fail(ErrJournal, stored, err)
	}

	run := claimed
	run.Body = ev.Body
	done, err := ih.runHandler(hctx, in, run, h)
	var me *markError
	switch {
	case err == nil && done.Handled() && done.Fence == claimed.Fence:
		return InboxResult{Outcome: InboxHandled, Event: done}, nil
	case err == nil:
		// A MarkingHandler that did not record the event handled.
		return fail(ErrJournal, claimed, errors.New("the handler returned without recording the event handled"))
	case errors.As(err, &me) && (errors.Is(err, ErrJournalFenced) || errors.Is(err, ErrEventHandled)):
		return fail(ErrJournalFenced, claimed, err)
	case errors.As(err, &me):
		// The handler's effects are done, their record is not (or is in
		// doubt): the claim is kept, and its lease ends on its own.
		return fail(ErrJournal, claimed, err)
	}
	if _, marking := h.(MarkingHandler); marking {
		// The error may be the handler's or its record's: the stored
		// event tells which.
		rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), journalWriteTimeout)
		now, gerr := in.GetEvent(rctx, ev.Scope, ev.EventID)
		rcancel()
		switch {
		case gerr == nil && now.Fence != claimed.Fence:
			return fail(ErrJournalFenced, now, err)
		case gerr == nil && now.Handled():
			// Committed, though the handler saw an error (a commit
			// whose answer was lost).
			return InboxResult{Outcome: InboxHandled, Event: now}, nil
		}
	}
	ih.release(ctx, in, claimed, err)
	return fail(ErrEventHandlerFailed, claimed, err)
}

// recorded is the event RecordEvent stores for the delivery ev: its
// identity checked, its body bounded and redacted.
func (ih *InboxHandler) recorded(ev InboxEvent) (InboxEvent, error) {
	for _, f := range []struct {
		name, v  string
		required bool
	}{{"scope", ev.Scope, true}, {"event ID", ev.EventID, true}, {"resource ID", ev.ResourceID, false}, {"type", ev.Type, false}} {
		if err := corekit.CheckEventField(f.name, f.v, f.required, corekit.MaxEventText); err != nil {
			return InboxEvent{}, fmt.Errorf("%w: %w", ErrInvalidEvent, err)
		}
	}
	if len(ev.Body) > MaxEventBody {
		return InboxEvent{}, fmt.Errorf("%w: body is %d bytes, longer than %d", ErrInvalidEvent, len(ev.Body), MaxEventBody)
	}
	body := ih.Redactor.JSONWith(ev.Body, ih.Fields)
	if len(body) > corekit.MaxStoredEventBody {
		return InboxEvent{}, fmt.Errorf("%w: body is %d bytes once redacted, longer than %d", ErrInvalidEvent, len(body), corekit.MaxStoredEventBody)
	}
	return InboxEvent{Scope: ev.Scope, EventID: ev.EventID, ResourceID: ev.ResourceID, Type: ev.Type, Body: body}, nil
}

// runOwner is a lease owner no other run shares.
func (ih *InboxHandler) runOwner() string {
	owner := corekit.SafeEventText(ih.Owner)
	if owner == "" {
		owner = "inbox"
	}
	suffix := ":" + uuid.NewString()
	n := corekit.MaxEventText - len(suffix)
	if len(owner) > n {
		for !utf8.RuneStart(owner[n]) {
			n--
		}
		owner = owner[:n]
	}
	return owner + suffix
}

// runHandler runs h; a panic releases the claim and goes on.
func (ih *InboxHandler) runHandler(ctx context.Context, in Inbox, ev InboxEvent, h Handler) (InboxEvent, error) {
	defer func() {
		if p := recover(); p != nil {
			ih.release(ctx, in, ev, errors.New("the handler panicked"))
			panic(p)
		}
	}()
	return h.run(ctx, in, ev)
}

// release ends the claim ev after its handler failed with cause. Should
// the release fail, the claim's lease ends on its own.
func (ih *InboxHandler) release(ctx context.Context, in Inbox, ev InboxEvent, cause error) {
	why := corekit.SafeEventText(ih.Redactor.ServerText(cause.Error()))
	why = redact.Cut(why, corekit.MaxEventError-len(" [cut]"))
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), journalWriteTimeout)
	defer cancel()
	_ = in.ReleaseEvent(rctx, InboxEvent{Scope: ev.Scope, EventID: ev.EventID, Fence: ev.Fence, LastError: why})
}
