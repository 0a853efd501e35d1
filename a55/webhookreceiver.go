package a55

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/corekit"
	"github.com/payonce/payonce/internal/redactprint"
	"github.com/payonce/payonce/redact"
)

// WebhookNotice is one A55 webhook event as a WebhookReceiver hands it to
// the merchant's WebhookHandler: once per event across every receiver
// sharing the inbox.
type WebhookNotice struct {
	// Event is the verified event, decoded from the body as delivered.
	Event *WebhookEvent
	// Inbox is the event as the inbox stores it while this run holds it:
	// Fence is the run's claim (a MarkingHandler's commit carries it),
	// Attempts the handler runs begun, Deliveries the deliveries so far.
	Inbox payonce.InboxEvent
	// Request is the delivery (its path may name the order). Its body
	// has been read.
	Request *http.Request
	// Charge is the charge read from the API (Charges.Fetch) before the
	// handler ran, when the receiver fetches (WithWebhookFetch); nil
	// otherwise. It is the source of truth: the webhook is the trigger.
	Charge *Charge
	// Previous is the latest state among the charge's events the inbox
	// holds as handled (zero when none).
	Previous ChargeState
	// Stale is true when the event's status is behind what the receiver
	// knows of the charge (Previous or the fetched Charge is After it: a
	// confirmed arriving after refunded): do not take its status. A
	// refund it reports (Event.RefundAmount) still happened.
	Stale bool
	// Settlement is the journal entry this event settled, when the
	// receiver settles (WithWebhookSettle) and the entry was in doubt;
	// SettleErr why an entry named was not settled (the charge does not
	// match its request, is still issued or pending, ...). While a run
	// holds the entry (its lease is live) or the journal fails, the
	// handler does not run: the delivery fails (500) and A55's next one
	// settles it.
	Settlement *ChargeSettlement
	SettleErr  error
}

// webhookNoticeFields is WebhookNotice without its printing methods.
type webhookNoticeFields WebhookNotice

// Format prints the notice with every text redacted, under every verb:
// the request and the settlement as their addresses, as fmt prints a
// pointer inside a struct, since the request's headers carry the
// delivery's signature and whatever a proxy in front adds. The inbox's
// copy of the body is left out: Event.Raw prints it.
func (n WebhookNotice) Format(f fmt.State, verb rune) {
	n.Inbox.Body = nil
	redactprint.Format(f, verb, webhookNoticeFields(n), "a55.WebhookNotice")
}

// LogValue is the slog form, texts redacted: the request is its method
// and path (no query, no headers), SettleErr its text; the inbox's copy
// of the body is left out.
func (n WebhookNotice) LogValue() slog.Value {
	n.Inbox.Body = nil
	var req, settleErr string
	if n.Request != nil && n.Request.URL != nil {
		req = n.Request.Method + " " + n.Request.URL.Path
	}
	if n.SettleErr != nil {
		settleErr = n.SettleErr.Error()
	}
	return redactprint.LogValue(struct {
		Event      *WebhookEvent
		Inbox      payonce.InboxEvent
		Request    string
		Charge     *Charge
		Previous   ChargeState
		Stale      bool
		Settlement *ChargeSettlement
		SettleErr  string
	}{n.Event, n.Inbox, req, n.Charge, n.Previous, n.Stale, n.Settlement, settleErr})
}

// WebhookHandler is the merchant's handling of one event. It runs under
// the claim's lease (its context ends with it); an error (or a panic,
// whose cause is a *WebhookHandlerPanic) leaves the event unhandled, the
// delivery is answered 500, and A55's next delivery runs it again. Its
// effects and the inbox's record of the event are two writes: make them
// idempotent, or give the receiver a marking handler
// (WithWebhookMarkingHandler) that commits both in one transaction.
type WebhookHandler func(ctx context.Context, n *WebhookNotice) error

// WebhookReceiver is an http.Handler for A55's charge webhooks that hands
// each event to the merchant's handler once across every receiver sharing
// its payonce.Inbox (the journal's database: journal.NewMemory,
// sqlitejournal, pgjournal), through payonce.InboxHandler: it verifies
// the signature (WebhookVerifier), bounds the body, records the delivery,
// claims the event (Key), optionally fetches the charge and settles a
// journal entry in doubt, runs the handler and answers. Build it with
// NewWebhookReceiver; it is safe for concurrent use.
//
// Answers: 204 for an event handled now or before; 401 for a delivery
// that does not verify, 400 for a body that is not an event and 413 for
// one over MaxWebhookBody (A55 does not retry a 4xx: no delivery of them
// would do better); 503 while another receiver holds the event, 500 when
// the handler failed and 503 when the inbox did (A55 retries a 5xx, at
// 1 min, 5 min, 30 min, 2 h, 6 h and 24 h: docs/a55.md, "A receiver
// that handles each event once").
type WebhookReceiver struct {
	verifier  *WebhookVerifier
	inbox     payonce.InboxHandler
	handle    WebhookHandler
	marking   bool
	markTx    func(ctx context.Context, n *WebhookNotice, mark func(context.Context) (payonce.InboxEvent, error)) (payonce.InboxEvent, error)
	scope     string
	client    *Client
	fetch     bool
	reference func(r *http.Request, ev *WebhookEvent) string
}

// WebhookReceiverOption configures NewWebhookReceiver.
type WebhookReceiverOption func(*WebhookReceiver) error

// WithWebhookScope names whose events the inbox holds (InboxEvent.Scope):
// the merchant account and environment. Default: the client's journal
// scope (WithWebhookFetch), else required.
func WithWebhookScope(scope string) WebhookReceiverOption {
	return func(r *WebhookReceiver) error { r.scope = scope; return nil }
}

// WithWebhookFetch has the receiver read each event's charge from the API
// with c (Charges.Fetch) before the handler runs (WebhookNotice.Charge);
// a failed read fails the delivery (500) and A55 delivers it again.
func WithWebhookFetch(c *Client) WebhookReceiverOption {
	return func(r *WebhookReceiver) error {
		if c == nil {
			return errors.New("a nil client to fetch with")
		}
		r.client, r.fetch = c, true
		return nil
	}
}

// WithWebhookSettle has the receiver settle the Charges.Create journal
// entry that reference names for a delivery (the order in its path, say;
// "" for none) when that entry is in doubt: the charge is fetched with
// c, whose journal holds the entry, and is recorded through
// payonce.Client.Settle, fenced like every journal write
// (WebhookNotice.Settlement), only when it is in an outcome status and is
// the entry's by the rules of Charges.SettleCreate: it matches the
// entry's request (its summary) in the entry's window, or carries its
// key, and no other entry holds it or could have made it
// (payonce.ErrLookupAmbiguous otherwise, in WebhookNotice.SettleErr).
// Implies WithWebhookFetch(c).
func WithWebhookSettle(c *Client, reference func(r *http.Request, ev *WebhookEvent) string) WebhookReceiverOption {
	return func(r *WebhookReceiver) error {
		if c == nil || reference == nil {
			return errors.New("settling needs a client and a reference function")
		}
		r.client, r.fetch, r.reference = c, true, reference
		return nil
	}
}

// WithWebhookOwner names the receiver in the leases it takes (a host or
// pod name); "a55-webhook" by default.
func WithWebhookOwner(owner string) WebhookReceiverOption {
	return func(r *WebhookReceiver) error { r.inbox.Owner = owner; return nil }
}

// WithWebhookLease is how long a handler run holds an event
// (payonce.DefaultInboxLease by default): a receiver that stops
// mid-handler keeps the event from the others that long.
func WithWebhookLease(d time.Duration) WebhookReceiverOption {
	return func(r *WebhookReceiver) error { r.inbox.Lease = d; return nil }
}

// WithWebhookMarkingHandler replaces the receiver's handler with one that
// records the event handled itself, in the transaction its effects commit
// in: it does its work and calls mark inside that transaction (a
// backend's MarkHandledTx, with n.Inbox's scope, ID and fence), commits
// and returns what mark returned. sqlitejournal and pgjournal HandlerTx
// give this shape.
func WithWebhookMarkingHandler(h func(ctx context.Context, n *WebhookNotice, mark func(context.Context) (payonce.InboxEvent, error)) (payonce.InboxEvent, error)) WebhookReceiverOption {
	return func(r *WebhookReceiver) error {
		if h == nil {
			return errors.New("a nil marking handler")
		}
		r.markTx, r.marking = h, true
		return nil
	}
}

// NewWebhookReceiver returns a receiver that verifies deliveries with v,
// records them in inbox and hands each event to h once. h may be nil
// with WithWebhookMarkingHandler.
func NewWebhookReceiver(v *WebhookVerifier, inbox payonce.Inbox, h WebhookHandler, opts ...WebhookReceiverOption) (*WebhookReceiver, error) {
	r := &WebhookReceiver{verifier: v, handle: h}
	r.inbox.Inbox = inbox
	r.inbox.Owner = "a55-webhook"
	r.inbox.Fields = Codec{}.AnswerFields()
	for _, o := range opts {
		if err := o(r); err != nil {
			return nil, fmt.Errorf("%w: a55: webhook receiver: %w", payonce.ErrInvalidConfig, err)
		}
	}
	if r.scope == "" && r.client != nil {
		r.scope = r.client.core.Scope()
	}
	switch {
	case v == nil:
		return nil, fmt.Errorf("%w: a55: webhook receiver: a verifier is required", payonce.ErrInvalidConfig)
	case inbox == nil:
		return nil, fmt.Errorf("%w: a55: webhook receiver: an inbox is required", payonce.ErrInvalidConfig)
	case h == nil && !r.marking:
		return nil, fmt.Errorf("%w: a55: webhook receiver: a handler is required", payonce.ErrInvalidConfig)
	case r.scope == "":
		return nil, fmt.Errorf("%w: a55: webhook receiver: a scope is required", payonce.ErrInvalidConfig)
	case r.reference != nil && r.client.view.Journal == nil:
		return nil, fmt.Errorf("%w: a55: webhook receiver: settling needs a client with a journal", payonce.ErrInvalidConfig)
	}
	var auth *authorizer
	if r.client != nil {
		auth = r.client.auth
	}
	r.inbox.Redactor = redact.NewSecrets(webhookSecrets{v: v, auth: auth}).Redactor()
	return r, nil
}

// webhookSecrets are the receiver's own secrets: the webhook secret and
// the fetching client's credentials.
type webhookSecrets struct {
	v    *WebhookVerifier
	auth *authorizer
}

func (s webhookSecrets) SecretValues() []string {
	out := []string{string(s.v.secret())}
	if s.auth != nil {
		out = append(out, s.auth.SecretValues()...)
	}
	return out
}

// ServeHTTP receives one delivery and answers it (see WebhookReceiver).
func (r *WebhookReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	res, err := r.Receive(req)
	status := WebhookStatus(res, err)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, http.StatusText(status)+"\n")
}

// Errors of WebhookReceiver.Receive besides the inbox's (wrapped).
var (
	// ErrWebhookBody: the delivery's body is over MaxWebhookBody, or is
	// no charge event (not JSON, no charge_uuid or status).
	ErrWebhookBody = errors.New("a55: webhook body is not a charge event")
)

// WebhookStatus is the status a receiver answers a delivery Receive
// returned res and err for: 204 when it was handled (now or before); 401
// for ErrWebhookSignature and ErrWebhookTimestamp; 405 for another
// method than POST; 413 and 400 for ErrWebhookBody; else
// payonce.InboxHTTPStatus.
func WebhookStatus(res payonce.InboxResult, err error) int {
	var me *methodError
	switch {
	case err == nil:
		return http.StatusNoContent
	case errors.As(err, &me):
		return http.StatusMethodNotAllowed
	case errors.Is(err, ErrWebhookSignature), errors.Is(err, ErrWebhookTimestamp):
		return http.StatusUnauthorized
	case errors.Is(err, errWebhookTooLarge):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, ErrWebhookBody):
		return http.StatusBadRequest
	}
	return payonce.InboxHTTPStatus(err)
}

type methodError struct{ method string }

func (e *methodError) Error() string { return "a55: webhook: method " + e.method + " not allowed" }

var errWebhookTooLarge = fmt.Errorf("%w: over %d bytes", ErrWebhookBody, MaxWebhookBody)

// maxReceivedBody is what a receiver reads of a delivery: no more than
// WebhookVerifier.Parse, nor than an inbox takes.
const maxReceivedBody = min(MaxWebhookBody, payonce.MaxEventBody)

// Receive verifies and handles one delivery, as ServeHTTP does, and
// returns what the inbox did and the error (WebhookStatus turns both into
// the answer): a *payonce.InboxError once the delivery verified, else an
// error wrapping ErrWebhookSignature, ErrWebhookTimestamp or
// ErrWebhookBody.
func (r *WebhookReceiver) Receive(req *http.Request) (payonce.InboxResult, error) {
	if req.Method != http.MethodPost {
		return payonce.InboxResult{}, &methodError{method: req.Method}
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, maxReceivedBody+1))
	if err != nil {
		return payonce.InboxResult{}, fmt.Errorf("%w: read: %w", ErrWebhookBody, err)
	}
	if len(body) > maxReceivedBody {
		return payonce.InboxResult{}, errWebhookTooLarge
	}
	if err := r.verifier.Verify(req.Header, body); err != nil {
		return payonce.InboxResult{}, err
	}
	ev := &WebhookEvent{Raw: body, delivery: deliveryOf(req.Header)}
	if err := json.Unmarshal(body, ev); err != nil {
		return payonce.InboxResult{}, fmt.Errorf("%w: %s", ErrWebhookBody, redact.String(err.Error()))
	}
	if ev.ChargeUUID == "" || ev.Status == "" {
		return payonce.InboxResult{}, fmt.Errorf("%w: no charge_uuid or status", ErrWebhookBody)
	}
	typ := ev.Status.canonical()
	if typ == "" {
		typ = ev.Status
	}
	in := payonce.InboxEvent{Scope: r.scope, EventID: ev.Key(), ResourceID: ev.ChargeUUID, Type: string(typ), Body: body}
	ctx := req.Context()
	if r.marking {
		return r.inbox.Handle(ctx, in, payonce.MarkingHandler(func(ctx context.Context, stored payonce.InboxEvent) (_ payonce.InboxEvent, err error) {
			defer recoverHandler(&err)
			n, err := r.notice(ctx, req, ev, stored)
			if err != nil {
				return payonce.InboxEvent{}, err
			}
			return r.markTx(ctx, n, func(mctx context.Context) (payonce.InboxEvent, error) {
				return r.inbox.Inbox.MarkHandled(mctx, payonce.InboxEvent{Scope: stored.Scope, EventID: stored.EventID, Fence: stored.Fence})
			})
		}))
	}
	return r.inbox.Handle(ctx, in, payonce.EventHandler(func(ctx context.Context, stored payonce.InboxEvent) (err error) {
		defer recoverHandler(&err)
		n, err := r.notice(ctx, req, ev, stored)
		if err != nil {
			return err
		}
		return r.handle(ctx, n)
	}))
}

// notice prepares what the handler gets, under the run's claim: the
// charge fetched, a journal entry in doubt settled, the event ordered
// against those of its charge handled before.
func (r *WebhookReceiver) notice(ctx context.Context, req *http.Request, ev *WebhookEvent, stored payonce.InboxEvent) (*WebhookNotice, error) {
	n := &WebhookNotice{Event: ev, Inbox: stored, Request: req}
	prev, err := r.previous(ctx, stored)
	if err != nil {
		return nil, err
	}
	n.Previous = prev
	if r.fetch {
		ch, err := r.client.Charges.Fetch(ctx, ev.ChargeUUID)
		if err != nil {
			return nil, fmt.Errorf("fetch charge: %w", err)
		}
		n.Charge = ch
	}
	n.Stale = prev.After(ev.State()) || (n.Charge != nil && StateOf(n.Charge).After(ev.State()))
	if r.reference != nil {
		if ref := r.reference(req, ev); ref != "" {
			n.Settlement, n.SettleErr = r.client.Charges.settleFetched(ctx, ref, n.Charge)
			if errors.Is(n.SettleErr, payonce.ErrJournal) || errors.Is(n.SettleErr, payonce.ErrJournalLeased) {
				// The journal failed, or a run holds the entry (it may
				// still record the outcome itself): the handler waits for
				// A55's next delivery, which settles it or finds it
				// settled.
				return nil, n.SettleErr
			}
		}
	}
	return n, nil
}

// previous is the latest state among the handled events of stored's
// charge, other than stored.
func (r *WebhookReceiver) previous(ctx context.Context, stored payonce.InboxEvent) (ChargeState, error) {
	evs, err := r.inbox.Inbox.Events(ctx, payonce.InboxQuery{Scope: stored.Scope, ResourceID: stored.ResourceID})
	if err != nil {
		return ChargeState{}, fmt.Errorf("%w: list the charge's events: %w", payonce.ErrJournal, err)
	}
	var latest ChargeState
	for _, e := range evs {
		if !e.Handled() || e.EventID == stored.EventID {
			continue
		}
		st := ChargeState{Status: Status(e.Type)}
		var v WebhookEvent
		if json.Unmarshal(e.Body, &v) == nil {
			st.UpdatedAt = v.UpdatedAt
		}
		if st.After(latest) {
			latest = st
		}
	}
	return latest, nil
}

// settleFetched settles reference's Charges.Create entry, when it is in
// doubt, with ch, a charge just read from the API that a verified webhook
// named, by the rules of SettleCreate's lookup: ch must match the entry's
// request, in the entry's window unless it carries the entry's key, be
// in an outcome status, and be the entry's alone: a charge the journal
// holds as another entry's outcome, or that another entry in doubt could
// have made, is refused (payonce.ErrLookupAmbiguous), since a reference
// function need not be exact and a delivery's path is not signed.
// Nothing is recorded otherwise (a nil settlement and why).
func (s *ChargesService) settleFetched(ctx context.Context, reference string, ch *Charge) (*ChargeSettlement, error) {
	fail := func(e payonce.JournalEntry, kind, cause error) (*ChargeSettlement, error) {
		return nil, &payonce.APIError{Provider: "a55", Operation: "charges.settle", Method: http.MethodGet, Path: PathChargeByUUID,
			Kind: kind, Err: cause, Key: e.IdempotencyKey()}
	}
	e, stands, kind, err := s.c.core.LookupEntry(ctx, reference, "charges.create")
	switch {
	case err != nil:
		return fail(e, kind, err)
	case stands || e.State != payonce.JournalPending:
		return nil, nil // not in doubt: nothing to settle
	case !e.Sent:
		return fail(e, payonce.ErrLookupAmbiguous, fmt.Errorf("settle %q: no attempt of it was sent, so charge %s is not its outcome", reference, ch.UUID))
	}
	m, err := newChargeMatcher(s.c, e, nil)
	if err != nil {
		return nil, err
	}
	view, pol := s.c.core.Settings(), chargePolicy{c: s.c}
	from, to := corekit.LookupWindow(0, e.KeyCreated, e.CreatedAt, e.UpdatedAt)
	if !m.matches(ch, from, to) && !(pol.Exact(e, ch) && m.matches(ch, time.Time{}, time.Time{})) {
		return fail(e, payonce.ErrLookupAmbiguous, fmt.Errorf("settle %q: charge %s does not match its request, %s", reference, ch.UUID, payonce.LookupWindowText(from, to)))
	}
	st, settled := settlementOf("a webhook", ch)
	if !settled {
		return fail(e, payonce.ErrOutcomeUnknown, fmt.Errorf("settle %q: charge %s is still in status %s", reference, ch.UUID, ch.Status))
	}
	finder, err := s.c.core.LookupFinder(reference)
	if err != nil {
		return fail(e, payonce.ErrLookupUnsupported, err)
	}
	sifted, kind, err := payonce.SiftLookup(ctx, finder, e, []*Charge{ch}, pol, 0, from, to, view.KeyRules.Window)
	switch {
	case err != nil:
		return fail(e, kind, err)
	case len(sifted.Contested) > 0:
		return fail(e, payonce.ErrLookupAmbiguous, sifted.Contested[0].Ambiguous(reference))
	case len(sifted.Kept) == 0:
		return fail(e, payonce.ErrLookupAmbiguous, fmt.Errorf("settle %q: charge %s is the recorded outcome of %q, not this entry's", reference, ch.UUID, sifted.Held[ch.UUID]))
	}
	got, err := s.c.core.Settle(ctx, reference, st)
	if err != nil {
		return nil, err
	}
	return &ChargeSettlement{Entry: got, Charge: ch, Recorded: true}, nil
}

// WebhookHandlerPanic is the cause (errors.As) of a delivery whose
// handler panicked: the receiver answers 500, as for a handler's error,
// and the event stays unhandled for A55's next delivery. Value and Stack
// are for the merchant's own code; its text names neither, since a
// panic's value may hold anything.
type WebhookHandlerPanic struct {
	Value any
	Stack []byte
}

// Error says the handler panicked, naming neither value nor stack.
func (p *WebhookHandlerPanic) Error() string { return "a55: webhook handler panicked" }

// recoverHandler turns a panic of the handler's run into its error, so
// that the inbox releases the event and the delivery is answered 500: a
// panic let through would cut the connection (an answer A55 need not
// retry) and have net/http log its value.
func recoverHandler(err *error) {
	if p := recover(); p != nil {
		*err = &WebhookHandlerPanic{Value: p, Stack: debug.Stack()}
	}
}
