// Package reconcile compares a provider's records with the journal and
// reports what needs a person: resources at the provider that no entry
// holds, entries whose state is not what the provider says, orders with
// two successful attempts, entries in doubt, and status changes a
// webhook inbox never received. It is provider-neutral: a provider's
// adapter (a55/a55reconcile, coinepay/coinepayreconcile) implements
// Provider. See docs/journal.md, "Reconcile".
package reconcile

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/corekit"
	"github.com/payonce/payonce/journal"
	"github.com/payonce/payonce/redact"
)

// Journal is what Run reads of a journal: its pending entries, and its
// entries in every state reserved in a span (payonce.JournalFinder's
// LookAlikes). Every backend of package journal is one.
type Journal interface {
	journal.Store
	payonce.JournalFinder
}

// DefaultMaxResources bounds the resources Run reads from a provider's
// list when Options.MaxResources is zero.
const DefaultMaxResources = 100_000

// Options tunes Run. From and To are required.
type Options struct {
	// From and To are the span reconciled: the provider's resources and
	// the journal's entries created in [From, To]. Entries in doubt are
	// reported whenever they were created.
	From, To time.Time
	// Now is the present, for entries in doubt; zero: the journal's clock
	// (PostgreSQL's now()), else the machine's.
	Now time.Time
	// Margin widens the span the provider's list is read over (and the
	// entries matched against it), for the difference between the
	// provider's clock and the journal's: zero means 15 minutes.
	Margin time.Duration
	// Orders names the order of a reference, for two successful attempts
	// of one order; nil: AttemptOrders ("order-42/attempt-1").
	Orders OrderRule
	// Inbox, when set, is the webhook inbox in use: a resource whose
	// provider status is not the last status the inbox (or the entry's
	// answer, before any event) holds for it is reported. nil: no inbox
	// check.
	Inbox payonce.Inbox
	// InboxScope is the scope the receiver records events under; "": the
	// provider's (Info.Scope).
	InboxScope string
	// MaxResources bounds the resources read from the list: past it Run
	// fails with ErrTooManyResources rather than report on part of them.
	// Zero: DefaultMaxResources.
	MaxResources int
	// Secrets cuts the provider client's own secrets (its credentials, a
	// token it obtained) from every text of the report, besides what
	// redact.String removes: give it the client's core, client.Core().
	// It is asked again for each text, so that a token the client
	// obtains while Run reads the provider's list is cut too. nil:
	// redact.String's rules alone.
	Secrets Secrets
}

// Secrets gives the redactor of a provider client's own secrets: a
// *payonce.Client (a typed client's Core) is one, and so is a
// *redact.Secrets.
type Secrets interface {
	Redactor() *redact.Redactor
}

// Kind is what a Finding reports.
type Kind string

// The kinds of findings, in the order a Report lists them.
const (
	// KindInDoubt: a pending entry under which an attempt may have been
	// sent and whose key can no longer be sent again: only a lookup or a
	// settle by hand closes it.
	KindInDoubt Kind = "in-doubt"
	// KindMisrecorded: an entry whose state is not what the provider
	// says: succeeded, but its resource is missing or failed; failed or
	// not executed, but the provider made a resource under its key that
	// succeeded (even if reversed since) or may still; or holding another
	// entry's resource.
	KindMisrecorded Kind = "misrecorded"
	// KindTwoSuccesses: one of two or more attempts of one order that
	// succeeded and stand (by the provider's records where it has them:
	// one pending counts, one reversed does not).
	KindTwoSuccesses Kind = "two-successes"
	// KindUnrecorded: a resource at the provider that no entry holds.
	KindUnrecorded Kind = "unrecorded"
	// KindUnreceived: the provider's status of a resource is not the last
	// status the inbox holds for it: a change no webhook delivered.
	KindUnreceived Kind = "unreceived-status"
)

// rank is k's place in a Report.
func (k Kind) rank() int {
	return slices.Index([]Kind{KindInDoubt, KindMisrecorded, KindTwoSuccesses, KindUnrecorded, KindUnreceived}, k)
}

// Finding is one thing that needs a person.
type Finding struct {
	Kind Kind `json:"kind"`
	// Reference is the journal entry's, "" for a resource no entry holds.
	Reference string `json:"reference,omitempty"`
	// Order is the order the reference is an attempt of (Options.Orders),
	// or the one the resource names.
	Order string `json:"order,omitempty"`
	// EntryState is the entry's: succeeded, failed, not-executed, pending
	// or in-doubt; "" for a resource no entry holds.
	EntryState string `json:"entry_state,omitempty"`
	// ResourceID is the provider's resource (a charge, a card), "" when
	// none is known.
	ResourceID string `json:"resource_id,omitempty"`
	// Status is the provider's status now, "" when it has none.
	Status string `json:"status,omitempty"`
	// Known is the status the journal or the inbox last knew: the
	// entry's answer's, or the inbox's last event's.
	Known    string           `json:"known_status,omitempty"`
	Amount   payonce.Amount   `json:"amount,omitzero"`
	Currency payonce.Currency `json:"currency,omitempty"`
	Account  string           `json:"account,omitempty"`
	// CreatedAt is when the resource was created, else the entry.
	CreatedAt time.Time `json:"created_at,omitzero"`
	// Detail says what is wrong, in one line.
	Detail string `json:"detail"`
}

// Report is what Run found.
type Report struct {
	Provider  string    `json:"provider"`
	Scope     string    `json:"scope"`
	Operation string    `json:"operation"`
	From      time.Time `json:"from"`
	To        time.Time `json:"to"`
	Now       time.Time `json:"now"`
	// Inbox is true when the inbox was checked.
	Inbox bool `json:"inbox"`
	// Resources counts the provider's resources created in the span,
	// Entries the journal's entries of the operation reserved in it.
	Resources int       `json:"resources"`
	Entries   int       `json:"entries"`
	Findings  []Finding `json:"findings"`
}

// NeedsAttention reports whether anything needs a person.
func (r *Report) NeedsAttention() bool { return len(r.Findings) > 0 }

// Errors of Run.
var (
	// ErrInvalidOptions: Options or a Provider's Info cannot be used;
	// nothing was read.
	ErrInvalidOptions = errors.New("reconcile: invalid options")
	// ErrTooManyResources: the provider's list holds more resources than
	// Options.MaxResources: nothing is reported rather than part.
	ErrTooManyResources = errors.New("reconcile: too many resources")
	// ErrMalformedResource: the provider listed or answered a resource
	// Run cannot reconcile (no ID, an ID longer than 255 bytes, another
	// resource than the one asked for).
	ErrMalformedResource = errors.New("reconcile: malformed resource")
)

// InDoubt reports whether e is pending, may have been sent, and its key
// can no longer be sent again at now (older than the key's window, or
// created in the future): nothing but a lookup or a settle by hand
// closes it.
func InDoubt(e payonce.JournalEntry, now time.Time) bool {
	if e.State != payonce.JournalPending || !e.Sent {
		return false
	}
	age := now.Sub(e.KeyCreated)
	return age >= payonce.DefaultKeyWindow || age < -corekit.KeyClockTolerance
}

// EntryState is the state a report names for e at now: in-doubt,
// not-executed, or the entry's own.
func EntryState(e payonce.JournalEntry, now time.Time) string {
	switch {
	case InDoubt(e, now):
		return string(KindInDoubt)
	case e.NotExecuted():
		return "not-executed"
	}
	return string(e.State)
}

// InboxInUse reports whether inbox holds any event of scope: a receiver
// records webhooks there.
func InboxInUse(ctx context.Context, inbox payonce.Inbox, scope string) (bool, error) {
	es, err := inbox.Events(ctx, payonce.InboxQuery{Scope: scope, Limit: 1})
	if err != nil {
		return false, fmt.Errorf("reconcile: inbox: %w", err)
	}
	return len(es) > 0, nil
}

// Run reconciles p's resources with j's entries over o's span and
// returns what needs a person. It reads and never writes: settle what it
// reports with the journal command or the clients' settle calls.
//
// A resource is tied to an entry by the resource the entry recorded
// (JournalEntry.ResourceID, else what Provider.Recorded reads of its
// answer), whenever the entry was reserved (JournalFinder.Holders), and,
// where the provider reports it, by the key of the request that made
// it. The journal's entries are matched
// over the span widened by the key's 24-hour window before it (an
// attempt may run that long after its entry was reserved) and the list
// over the span widened by the window after it; findings are reported
// for resources and entries created in the span.
func Run(ctx context.Context, p Provider, j Journal, o Options) (*Report, error) {
	r, err := newRun(ctx, p, j, o)
	if err != nil {
		return nil, err
	}
	if err := r.loadEntries(ctx); err != nil {
		return nil, err
	}
	if err := r.loadResources(ctx); err != nil {
		return nil, err
	}
	for i := range r.resources {
		if err := r.resolve(ctx, &r.resources[i]); err != nil {
			return nil, err
		}
	}
	if err := r.heldOutside(ctx); err != nil {
		return nil, err
	}
	r.reportUnrecorded()
	if err := r.unseen(ctx); err != nil {
		return nil, err
	}
	r.twoSuccesses()
	if err := r.inDoubt(ctx); err != nil {
		return nil, err
	}
	slices.SortStableFunc(r.report.Findings, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(a.Kind.rank(), b.Kind.rank()), cmp.Compare(a.Order, b.Order),
			a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.Reference, b.Reference), strings.Compare(a.ResourceID, b.ResourceID))
	})
	if r.report.Findings == nil {
		r.report.Findings = []Finding{}
	}
	r.redactFindings()
	return &r.report, nil
}

// redactor is the redactor of the client's own secrets now
// (Options.Secrets), nil for none.
func (r *run) redactor() *redact.Redactor {
	if r.o.Secrets == nil || corekit.IsNil(r.o.Secrets) {
		return nil
	}
	return r.o.Secrets.Redactor()
}

// redactFindings cuts, from what the report says of each finding, the
// secrets its texts were built with: a resource's identifiers (kept as
// the provider sent them, digits and all, but for the client's own
// secrets and any secret, token or credential written in one, as a
// journal row keeps them) and the details that name them. Statuses and
// other texts were redacted as they were read (clean).
func (r *run) redactFindings() {
	rd := r.redactor()
	for i := range r.report.Findings {
		f := &r.report.Findings[i]
		f.ResourceID, f.Detail, f.Order = rd.Identifier(f.ResourceID), rd.Identifier(f.Detail), rd.Identifier(f.Order)
	}
}

// entryRow is one journal entry of the operation and what Run learned of
// it.
type entryRow struct {
	e        payonce.JournalEntry
	rec      Resource // the resource its answer names, when hasRec
	hasRec   bool
	order    string
	inReport bool      // reserved in the span
	res      *Resource // the provider's resource tied to it (by ID or key)
	missing  bool      // succeeded, and its resource is not at the provider
}

type run struct {
	p      Provider
	j      Journal
	o      Options
	info   Info
	orders OrderRule
	margin time.Duration

	from, to         time.Time // the span reported
	listFrom, listTo time.Time // the span the list is read over
	report           Report

	rows       []*entryRow
	byRef      map[string]*entryRow
	holders    map[string][]*entryRow // resource ID -> entries that recorded it
	byKey      map[string]*entryRow
	resources  []Resource
	listed     map[string]bool // resource IDs the list yielded
	unrecorded []*Resource
}

func newRun(ctx context.Context, p Provider, j Journal, o Options) (*run, error) {
	if p == nil || corekit.IsNil(p) || j == nil || corekit.IsNil(j) {
		return nil, fmt.Errorf("%w: a provider and a journal are required", ErrInvalidOptions)
	}
	info := p.Info()
	switch {
	case info.Scope == "" || info.Operation == "":
		return nil, fmt.Errorf("%w: the provider names no scope or operation", ErrInvalidOptions)
	case o.From.IsZero() || o.To.IsZero():
		return nil, fmt.Errorf("%w: a span needs both ends", ErrInvalidOptions)
	case !o.From.Before(o.To):
		return nil, fmt.Errorf("%w: the span ends at or before it starts", ErrInvalidOptions)
	case o.Margin < 0:
		return nil, fmt.Errorf("%w: negative margin", ErrInvalidOptions)
	case o.MaxResources < 0:
		return nil, fmt.Errorf("%w: negative resource bound", ErrInvalidOptions)
	}
	now := o.Now
	if now.IsZero() {
		t, err := j.Now(ctx)
		if err != nil {
			return nil, fmt.Errorf("reconcile: journal clock: %w", err)
		}
		now = cmp.Or(t, time.Now())
	}
	r := &run{p: p, j: j, o: o, info: info, orders: o.Orders, margin: cmp.Or(o.Margin, corekit.DefaultLookupMargin),
		from: o.From.UTC(), to: o.To.UTC(), byRef: map[string]*entryRow{}, holders: map[string][]*entryRow{},
		byKey: map[string]*entryRow{}, listed: map[string]bool{}}
	if r.orders == nil {
		r.orders = AttemptOrders()
	}
	if r.o.MaxResources == 0 {
		r.o.MaxResources = DefaultMaxResources
	}
	if r.o.InboxScope == "" {
		r.o.InboxScope = info.Scope
	}
	r.listFrom = r.from.Add(-r.margin)
	r.listTo = r.to.Add(payonce.DefaultKeyWindow + r.margin)
	if limit := now.Add(r.margin); r.listTo.After(limit) {
		r.listTo = limit // nothing is created in the future
		if end := r.to.Add(r.margin); end.After(limit) {
			r.listTo = end
		}
	}
	r.report = Report{Provider: info.Provider, Scope: info.Scope, Operation: info.Operation,
		From: r.from, To: r.to, Now: now.UTC(), Inbox: o.Inbox != nil && !corekit.IsNil(o.Inbox)}
	return r, nil
}

// loadEntries reads the operation's entries that can hold a resource
// made in the listed span.
func (r *run) loadEntries(ctx context.Context) error {
	// Reserved in [from, to] and changed at or after from: every entry
	// reserved in the span, whatever its state.
	from, to := r.from.Add(-payonce.DefaultKeyWindow-r.margin), r.to.Add(r.margin)
	es, err := r.j.LookAlikes(ctx, payonce.LookAlikeQuery{Scope: r.info.Scope, Operation: r.info.Operation,
		From: from, To: to, Since: from})
	if err != nil {
		return fmt.Errorf("reconcile: journal entries: %w", err)
	}
	for _, e := range es {
		row := &entryRow{e: e, inReport: within(e.CreatedAt, r.from, r.to)}
		row.order, _ = r.orders(e.Reference)
		if rec, ok := r.recorded(e); ok {
			row.rec, row.hasRec = rec, true
			r.holders[rec.ID] = append(r.holders[rec.ID], row)
		}
		if e.Key != "" {
			if _, dup := r.byKey[e.Key]; !dup {
				r.byKey[e.Key] = row
			}
		}
		if row.inReport {
			r.report.Entries++
		}
		r.rows = append(r.rows, row)
		r.byRef[e.Reference] = row
	}
	return nil
}

// recorded is the resource e recorded: the journal's own ResourceID
// where it kept one, with the status the provider's reading of the
// answer gives, else the provider's reading alone.
func (r *run) recorded(e payonce.JournalEntry) (Resource, bool) {
	rec, ok := r.p.Recorded(e)
	switch {
	case e.ResourceID != "":
		if rec.ID != e.ResourceID {
			rec = Resource{ID: e.ResourceID}
		}
		return rec, true
	case ok && rec.ID != "":
		return rec, true
	}
	return Resource{}, false
}

// loadResources reads the provider's list over the listed span.
func (r *run) loadResources(ctx context.Context) error {
	n := 0
	for res, err := range r.p.List(ctx, r.listFrom, r.listTo) {
		if err != nil {
			return fmt.Errorf("reconcile: %s list: %w", r.info.Provider, err)
		}
		if n++; n > r.o.MaxResources {
			return fmt.Errorf("%w: the %s list holds more than %d", ErrTooManyResources, r.info.Provider, r.o.MaxResources)
		}
		if err := checkResource(res); err != nil {
			return err
		}
		if r.listed[res.ID] || !res.CreatedAt.IsZero() && !within(res.CreatedAt, r.listFrom, r.listTo) {
			continue
		}
		r.listed[res.ID] = true
		r.resources = append(r.resources, r.clean(res))
		if r.inReport(res) {
			r.report.Resources++
		}
	}
	return nil
}

// checkResource refuses a resource Run cannot tie to an entry.
func checkResource(res Resource) error {
	if res.ID == "" || len(res.ID) > corekit.MaxReferenceLen {
		return fmt.Errorf("%w: a resource ID must be 1 to %d bytes", ErrMalformedResource, corekit.MaxReferenceLen)
	}
	return nil
}

// clean is res with the provider's free texts redacted, the client's
// own secrets cut too (Options.Secrets; its ID and key are identifiers,
// kept as sent until the report is written: redactFindings), and its
// time in UTC.
func (r *run) clean(res Resource) Resource {
	rd := r.redactor()
	res.Status, res.Order, res.Account = rd.Redact(res.Status), rd.Redact(res.Order), rd.Redact(res.Account)
	res.Currency = payonce.Currency(rd.Redact(string(res.Currency)))
	if !res.CreatedAt.IsZero() {
		res.CreatedAt = res.CreatedAt.UTC()
	}
	return res
}

func within(t, from, to time.Time) bool { return !t.Before(from) && !t.After(to) }

// inReport reports whether res was created in the span (or when, unknown).
func (r *run) inReport(res Resource) bool {
	return res.CreatedAt.IsZero() || within(res.CreatedAt, r.from, r.to)
}

// resolve ties a listed resource to the entries that hold it or made it.
func (r *run) resolve(ctx context.Context, res *Resource) error {
	hs := r.holders[res.ID]
	var keyed *entryRow
	if res.Key != "" {
		keyed = r.byKey[res.Key]
	}
	inRep := r.inReport(*res)
	if len(hs) == 0 && keyed == nil {
		if inRep {
			r.unrecorded = append(r.unrecorded, res) // reported once every resource is tied: reportUnrecorded
		}
		return nil
	}
	rightful := keyed
	if rightful == nil && len(hs) == 1 {
		rightful = hs[0]
	}
	for _, h := range hs {
		if h == rightful || !(h.inReport || inRep) {
			continue
		}
		detail := fmt.Sprintf("holds %s, which %d entries hold: %s", res.ID, len(hs), names(refs(hs)))
		if rightful != nil {
			detail = fmt.Sprintf("holds %s, which the provider made under the key of %s", res.ID, rightful.e.Reference)
		}
		r.add(h, res, KindMisrecorded, detail)
	}
	if rightful == nil {
		return nil
	}
	rightful.res = res
	return r.compare(ctx, rightful, res, inRep)
}

// compare reports h, tied to res, when its state is not what the
// provider says, and checks the inbox.
func (r *run) compare(ctx context.Context, h *entryRow, res *Resource, inRep bool) error {
	if h.e.State == payonce.JournalPending || !(h.inReport || inRep) {
		return nil // in doubt or still running: inDoubt reports it
	}
	state := EntryState(h.e, r.report.Now)
	outcome := r.p.Outcome(res.Status)
	switch {
	case h.e.State == payonce.JournalSucceeded && (!h.hasRec || h.rec.ID != res.ID):
		what := "no resource"
		if h.hasRec {
			what = h.rec.ID
		}
		r.add(h, res, KindMisrecorded, fmt.Sprintf("the provider made %s under its key (status %q); the entry records %s", res.ID, res.Status, what))
		return nil
	case h.e.State == payonce.JournalSucceeded && outcome == OutcomeFailed:
		r.add(h, res, KindMisrecorded, fmt.Sprintf("recorded succeeded; the provider says %q, a failure", res.Status))
		return nil // one finding a resource: the inbox's is this one
	case h.e.State == payonce.JournalFailed && outcome != OutcomeFailed && outcome != OutcomeUnknown:
		r.add(h, res, KindMisrecorded, fmt.Sprintf("recorded %s; the provider holds %s in status %q (%s)", state, res.ID, res.Status, outcome))
		return nil
	}
	if h.hasRec && h.rec.ID == res.ID {
		return r.inboxCheck(ctx, h, res)
	}
	return nil
}

// inboxCheck reports res when its provider status is not the last one
// the inbox holds for it (the entry's answer's, before any event).
func (r *run) inboxCheck(ctx context.Context, h *entryRow, res *Resource) error {
	if !r.report.Inbox || res.Status == "" {
		return nil
	}
	events, err := r.o.Inbox.Events(ctx, payonce.InboxQuery{Scope: r.o.InboxScope, ResourceID: res.ID})
	if err != nil {
		return fmt.Errorf("reconcile: inbox events of %s: %w", res.ID, err)
	}
	last, said := h.rec.Status, ""
	for _, ev := range events {
		if ev.Type != "" {
			last = ev.Type
		}
	}
	last = r.redactor().Redact(last) // as res.Status was (clean)
	if last == "" || SameStatus(last, res.Status) {
		return nil // the same, or nothing known to compare with
	}
	if len(events) == 0 {
		said = fmt.Sprintf("the entry's answer said %q and the inbox holds no event about it", last)
	} else {
		said = fmt.Sprintf("the last of the inbox's %d events about it says %q", len(events), last)
	}
	f := r.finding(h, res, KindUnreceived, fmt.Sprintf("the provider says %q; %s", res.Status, said))
	f.Known = last
	r.report.Findings = append(r.report.Findings, f)
	return nil
}

// unseen reports the succeeded entries of the span whose resource the
// list did not yield: fetched when the provider can, missing otherwise.
func (r *run) unseen(ctx context.Context) error {
	for _, h := range r.rows {
		if !h.inReport || h.e.State != payonce.JournalSucceeded || h.res != nil {
			continue
		}
		if !h.hasRec {
			r.add(h, nil, KindMisrecorded, "recorded succeeded, but its stored answer names no resource")
			continue
		}
		if r.listed[h.rec.ID] {
			continue // listed, and tied to another entry by its key: reported there
		}
		f, ok := r.p.(Fetcher)
		if !ok {
			h.missing = true
			r.add(h, &Resource{ID: h.rec.ID}, KindMisrecorded, fmt.Sprintf("recorded succeeded with %s, which is not in the provider's list of %s",
				h.rec.ID, span(r.listFrom, r.listTo)))
			continue
		}
		res, found, err := f.Fetch(ctx, h.rec.ID)
		if err != nil {
			return fmt.Errorf("reconcile: %s fetch %s: %w", r.info.Provider, h.rec.ID, err)
		}
		if !found {
			h.missing = true
			r.add(h, &Resource{ID: h.rec.ID}, KindMisrecorded, fmt.Sprintf("recorded succeeded with %s, which the provider answers does not exist", h.rec.ID))
			continue
		}
		if res.ID != h.rec.ID {
			return fmt.Errorf("%w: asked the %s provider for %s, it answered another resource", ErrMalformedResource, r.info.Provider, h.rec.ID)
		}
		res = r.clean(res)
		h.res = &res
		if err := r.compare(ctx, h, &res, false); err != nil {
			return err
		}
	}
	return nil
}

// attempt is one successful attempt of an order.
type attempt struct {
	row      *entryRow
	res      *Resource
	inReport bool
}

// resourceID is the resource a's payment is: the provider's resource
// tied to it, else the one its entry recorded; "" when none is known.
func (a attempt) resourceID() string {
	switch {
	case a.res != nil:
		return a.res.ID
	case a.row != nil && a.row.hasRec:
		return a.row.rec.ID
	}
	return ""
}

// succeeded reports whether h's attempt succeeded and stands: by the
// provider's status where a resource is tied to it (one still pending may
// yet be paid; one reversed left nothing moved), else by the journal.
func (r *run) succeeded(h *entryRow) bool {
	if h.res != nil {
		switch r.p.Outcome(h.res.Status) {
		case OutcomeSucceeded, OutcomePending:
			return true
		case OutcomeFailed, OutcomeReversed:
			return false
		}
	}
	return !h.missing && h.e.State == payonce.JournalSucceeded
}

// twoSuccesses reports every successful attempt of an order that has
// more than one. Attempts that hold one resource are one payment (their
// entries are misrecorded, reported by resolve): counted once.
func (r *run) twoSuccesses() {
	orders := map[string][]attempt{}
	var names []string
	seen := map[[2]string]bool{} // order, resource
	add := func(order string, a attempt) {
		if id := a.resourceID(); id != "" {
			if seen[[2]string{order, id}] {
				return
			}
			seen[[2]string{order, id}] = true
		}
		if _, ok := orders[order]; !ok {
			names = append(names, order)
		}
		orders[order] = append(orders[order], a)
	}
	for _, h := range r.rows {
		if h.order != "" && r.succeeded(h) {
			add(h.order, attempt{row: h, res: h.res, inReport: h.inReport || h.res != nil && r.inReport(*h.res)})
		}
	}
	for _, res := range r.unrecorded {
		if o := r.p.Outcome(res.Status); res.Order != "" && (o == OutcomeSucceeded || o == OutcomePending) {
			add(res.Order, attempt{res: res, inReport: true})
		}
	}
	for _, order := range names {
		as := orders[order]
		if len(as) < 2 || !slices.ContainsFunc(as, func(a attempt) bool { return a.inReport }) {
			continue
		}
		var list []string
		for _, a := range as {
			switch {
			case a.row == nil:
				list = append(list, a.res.ID+" (no entry)")
			case a.res == nil && a.row.hasRec:
				list = append(list, a.row.e.Reference+" ("+a.row.rec.ID+")")
			case a.res == nil:
				list = append(list, a.row.e.Reference)
			default:
				list = append(list, a.row.e.Reference+" ("+a.res.ID+")")
			}
		}
		detail := fmt.Sprintf("%d successful attempts of order %s: %s", len(as), order, strings.Join(list, ", "))
		for _, a := range as {
			f := r.finding(a.row, a.res, KindTwoSuccesses, detail)
			f.Order = order
			r.report.Findings = append(r.report.Findings, f)
		}
	}
}

// inDoubt reports every entry of the scope in doubt, whenever reserved,
// with what the provider holds of it.
func (r *run) inDoubt(ctx context.Context) error {
	es, err := r.j.Pending(ctx, journal.PendingQuery{Scope: r.info.Scope})
	if err != nil {
		return fmt.Errorf("reconcile: pending entries: %w", err)
	}
	for _, e := range es {
		if !InDoubt(e, r.report.Now) {
			continue
		}
		h := r.byRef[e.Reference]
		if h == nil || h.e.State != payonce.JournalPending {
			h = &entryRow{e: e}
			h.order, _ = r.orders(e.Reference)
		}
		var detail string
		switch {
		case h.res != nil:
			detail = fmt.Sprintf("the provider made %s under its key (status %q): settle it by lookup", h.res.ID, h.res.Status)
		case e.Operation != r.info.Operation:
			detail = fmt.Sprintf("a %s is not in the %s list this reconciles: settle it by hand", e.Operation, r.info.Provider)
		default:
			detail = r.candidates(e)
		}
		r.add(h, h.res, KindInDoubt, detail)
	}
	return nil
}

// candidates says which resources no entry holds could be e's.
func (r *run) candidates(e payonce.JournalEntry) string {
	from, to := corekit.LookupWindow(r.margin, e.KeyCreated, e.CreatedAt, e.UpdatedAt)
	if from.Before(r.listFrom) {
		return "reserved before the span listed: settle it by lookup"
	}
	var ids []string
	for _, res := range r.unrecorded {
		if res.CreatedAt.IsZero() || within(res.CreatedAt, from, to) {
			ids = append(ids, res.ID)
		}
	}
	if len(ids) == 0 {
		return fmt.Sprintf("no resource at the provider carries its key, nor is unrecorded in %s: settle it by lookup", span(from, to))
	}
	return fmt.Sprintf("no resource carries its key; unrecorded in its window: %s: settle it by lookup", names(ids))
}

// heldOutside asks the journal which entry holds each resource no entry
// read holds or made (JournalFinder.Holders): one reserved outside the
// entries read (settled by hand long after, say) ties it like any other.
func (r *run) heldOutside(ctx context.Context) error {
	var still []*Resource
	for _, res := range r.unrecorded {
		hs, err := r.j.Holders(ctx, r.info.Scope, res.ID)
		if err != nil {
			return fmt.Errorf("reconcile: journal holders of %s: %w", res.ID, err)
		}
		found := false
		for _, e := range hs {
			if e.Operation != r.info.Operation || r.byRef[e.Reference] != nil {
				continue
			}
			row := &entryRow{e: e, inReport: within(e.CreatedAt, r.from, r.to)}
			row.order, _ = r.orders(e.Reference)
			row.rec, row.hasRec = r.recorded(e)
			r.holders[res.ID] = append(r.holders[res.ID], row)
			r.rows = append(r.rows, row)
			r.byRef[e.Reference] = row
			found = true
		}
		if !found {
			still = append(still, res)
			continue
		}
		if err := r.resolve(ctx, res); err != nil { // holders now: never unrecorded again
			return err
		}
	}
	r.unrecorded = still
	return nil
}

// reportUnrecorded reports the resources of the span no entry holds or
// made, each with the entries that, holding no resource of their own,
// could have made it.
func (r *run) reportUnrecorded() {
	type window struct {
		h        *entryRow
		from, to time.Time
	}
	var open []window // entries without a resource: failed or pending, typically few
	for _, h := range r.rows {
		if !h.hasRec && h.res == nil && h.e.State != payonce.JournalSucceeded {
			from, to := corekit.LookupWindow(r.margin, h.e.KeyCreated, h.e.CreatedAt, h.e.UpdatedAt)
			open = append(open, window{h, from, to})
		}
	}
	for _, res := range r.unrecorded {
		var cands []string
		for _, w := range open {
			if res.CreatedAt.IsZero() || within(res.CreatedAt, w.from, w.to) {
				cands = append(cands, w.h.e.Reference)
			}
		}
		detail := "no journal entry holds it"
		if len(cands) > 0 {
			detail += "; entries without a resource in its window: " + names(cands)
		}
		r.add(nil, res, KindUnrecorded, detail)
	}
}

// maxNamed bounds the references or IDs a finding's detail names.
const maxNamed = 5

// names joins ns, at most maxNamed of them and how many more.
func names(ns []string) string {
	if len(ns) <= maxNamed {
		return strings.Join(ns, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(ns[:maxNamed], ", "), len(ns)-maxNamed)
}

// add appends a finding about h (nil: none) and res (nil: none).
func (r *run) add(h *entryRow, res *Resource, kind Kind, detail string) {
	r.report.Findings = append(r.report.Findings, r.finding(h, res, kind, detail))
}

func (r *run) finding(h *entryRow, res *Resource, kind Kind, detail string) Finding {
	f := Finding{Kind: kind, Detail: detail}
	if h != nil {
		f.Reference, f.Order, f.EntryState, f.CreatedAt = h.e.Reference, h.order, EntryState(h.e, r.report.Now), h.e.CreatedAt.UTC()
		if h.hasRec {
			f.Known = r.redactor().Redact(h.rec.Status)
		}
	}
	if res != nil {
		f.ResourceID, f.Status, f.Amount, f.Currency, f.Account = res.ID, res.Status, res.Amount, res.Currency, res.Account
		if !res.CreatedAt.IsZero() {
			f.CreatedAt = res.CreatedAt
		}
		if f.Order == "" {
			f.Order = res.Order
		}
	}
	return f
}

func refs(hs []*entryRow) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.e.Reference
	}
	return out
}

func span(from, to time.Time) string {
	return from.UTC().Format(time.RFC3339) + " to " + to.UTC().Format(time.RFC3339)
}
