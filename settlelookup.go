package payonce

// A settle by lookup (a55's and coinepay's SettleCreate) settles an entry
// in doubt from the provider's own records. The provider lists the
// records that match the entry's request; the steps below are the core's
// side of it, the same for every provider: reading the entry
// (Client.LookupEntry), asking the journal who else holds or could have
// made each record (Client.LookupFinder, SiftLookup with the provider's
// LookupPolicy), and naming the window and the candidates in a reason or
// an error.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/payonce/payonce/internal/corekit"
)

// MaxLookupNamed is how many candidates an ambiguous lookup names in its error.
const MaxLookupNamed = 5

// LookupEntry reads the journal entry of reference for a settle lookup of
// operation op (a provider's SettleCreate, say) through c's journal, after
// the check of c's scopes a journal use makes (Client.CheckScopes).
// stands is true when the entry is returned as it is: a success is final,
// and so is a failure under which nothing was ever sent (a failure that
// was sent gives way to a success the lookup may find under its key).
// kind and err are set when the entry cannot be read (ErrJournal)
// or records another operation (ErrInvalidRequest).
func (c *Client) LookupEntry(ctx context.Context, reference, op string) (e JournalEntry, stands bool, kind, err error) {
	j := c.journal
	if j == nil {
		return JournalEntry{}, false, ErrInvalidConfig, fmt.Errorf("settle %q: the client has no journal", reference)
	}
	if kind, err := c.CheckScopes(ctx); err != nil {
		return JournalEntry{}, false, kind, err
	}
	e, err = j.Get(ctx, c.scope, reference)
	if err != nil {
		return JournalEntry{}, false, ErrJournal, fmt.Errorf("settle %q: %w", reference, err)
	}
	if e.State == JournalSucceeded || (e.Settled() && !e.Sent) {
		return e, true, nil, nil
	}
	if e.Operation != op {
		return e, false, ErrInvalidRequest, fmt.Errorf("reference %q records %q, not %s: settle it with payonce.Client.Settle", reference, e.Operation, op)
	}
	return e, false, nil, nil
}

// LookupWindowText names the lookup window [from, to] in a settlement's
// reason or a lookup's error.
func LookupWindowText(from, to time.Time) string {
	return fmt.Sprintf("created %s to %s", from.UTC().Format(time.RFC3339), to.UTC().Format(time.RFC3339))
}

// LookupNamed lists the IDs (id) of the first MaxLookupNamed records of
// found, comma-separated, for a lookup's error.
func LookupNamed[T any](found []T, id func(T) string) string {
	ids := make([]string, 0, MaxLookupNamed)
	for _, f := range found[:min(len(found), MaxLookupNamed)] {
		ids = append(ids, id(f))
	}
	return strings.Join(ids, ", ")
}

// SettledOutcome names the outcome the settled entry e holds:
// "succeeded", "not_executed" or "failed" (what the payonce command
// prints). Any entry that did not succeed and is not NotExecuted is
// "failed": ask it of a settled entry (Settled).
func (e JournalEntry) SettledOutcome() string {
	switch {
	case e.State == JournalSucceeded:
		return "succeeded"
	case e.NotExecuted():
		return "not_executed"
	}
	return "failed"
}

// CallKind is the kind of err, the error of a provider call a lookup made
// (listing or reading records): its *APIError's Kind, else ErrTransport.
func CallKind(err error) error {
	var ae *APIError
	if errors.As(err, &ae) && ae.Kind != nil {
		return ae.Kind
	}
	return ErrTransport
}

// MaxLookAlikes bounds the entries of the scope a lookup weighs as other
// possible makers of a record: past it, it concludes nothing
// (ErrLookupAmbiguous).
const MaxLookAlikes = 20000

// LookupPolicy is what a provider's settle lookup tells SiftLookup about
// its records (R: an A55 charge, a Coinepay card): how to name one, and
// which journal entry could have made one. It is where a provider whose
// request can carry something of the entry's that comes back in its
// records (the key, a reference of the merchant's) makes the match exact:
// Exact says so, and CouldMake answers false for every other entry.
type LookupPolicy[R any] interface {
	// ID is the provider's ID of r, the form JournalEntry.ResourceID
	// holds.
	ID(r R) string
	// Exact reports whether r carries a mark of entry e's own request
	// (its idempotency key, where the provider reports keys): r is then
	// e's, whatever other entries hold or could have made.
	Exact(e JournalEntry, r R) bool
	// CouldMake reports whether the request of entry o, another entry of
	// the scope recording the same operation, could have made r at the
	// provider in o's window [from, to] (a zero to: no end, for a pending
	// o, whose attempt may still be on its way): r's time, when
	// reported, lies in it (InLookupWindow), and every field r reports agrees
	// with o's request as o's summary holds it (an entry without a
	// summary could have made anything in its window). o.ResourceID is
	// what o is known to have made ("" when unknown; r is never it): a
	// policy rules out what o's state and outcome forbid (a failed card
	// issue made no card, an entry whose success is known made no other
	// success).
	CouldMake(o JournalEntry, r R, from, to time.Time) bool
	// ResourceOf is the resource o's stored answer names, for an entry
	// written before the journal kept ResourceID ("" when none).
	ResourceOf(o JournalEntry) string
}

// InLookupWindow reports whether a record's time t lies in a window
// [from, to] as LookupPolicy.CouldMake is given it: an unknown (zero) t lies in any, a zero to
// has no end.
func InLookupWindow(t, from, to time.Time) bool {
	return t.IsZero() || (!t.Before(from) && (to.IsZero() || !t.After(to)))
}

// LookupFinder returns c's journal as a JournalFinder, for a settle
// lookup of reference: a lookup needs to ask it who holds a record and
// which entries look alike. A journal without it is refused (the error a
// provider reports as ErrLookupUnsupported): the lookup refuses rather
// than guess. A provider asks before it reads its records.
func (c *Client) LookupFinder(reference string) (JournalFinder, error) {
	j := c.journal
	f, ok := j.(JournalFinder)
	if !ok {
		return nil, fmt.Errorf("settle %q: the client's journal (%T) cannot tell which entry holds a payment or which entries look alike (payonce.JournalFinder): nothing looked up; settle it by hand (payonce.Client.Settle)",
			reference, j)
	}
	return f, nil
}

// LookupSift is what SiftLookup made of the records a lookup found.
type LookupSift[R any] struct {
	// Kept are the records that can be the entry's alone: each carries
	// the entry's mark, or no other entry holds it or could have made it.
	Kept []R
	// Contested are the records another entry of the scope could have
	// made as well: the lookup concludes nothing from one (Ambiguous).
	Contested []LookupContest[R]
	// Held names, by record ID, the other entry whose recorded outcome
	// each record left out is.
	Held map[string]string
}

// LookupContest is a record other entries could have made as well.
type LookupContest[R any] struct {
	Record R
	ID     string
	Rivals []string // the other entries' references
}

// Ambiguous is the error of a lookup of reference that cannot conclude
// because of c (its kind is ErrLookupAmbiguous).
func (c LookupContest[R]) Ambiguous(reference string) error {
	return fmt.Errorf("settle %q: %s could be the outcome of %s as well (%s in doubt, or settled without a known result, with the same request in the window): nothing recorded; settle %s first",
		reference, c.ID, quoted(c.Rivals), plural(len(c.Rivals)), pronoun(len(c.Rivals)))
}

// maxNote bounds Note, which a settlement's reason (at most
// corekit.MaxSettleReason bytes) carries besides the record and window.
const maxNote = 480

// Note says, for a reason or an error, which records were another
// entry's outcome ("" when none was): the first MaxLookupNamed, within
// maxNote bytes.
func (s LookupSift[R]) Note() string {
	if len(s.Held) == 0 {
		return ""
	}
	ids := make([]string, 0, len(s.Held))
	for id := range s.Held {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	note := fmt.Sprintf("; left out as other entries' outcomes (%d):", len(ids))
	for i, id := range ids[:min(len(ids), MaxLookupNamed)] {
		part := fmt.Sprintf(" %s is %q's", id, s.Held[id])
		if i > 0 {
			part = "," + part
		}
		if len(note)+len(part) > maxNote {
			return note + " …"
		}
		note += part
	}
	return note
}

// SiftLookup sorts found (the provider's records that match entry e, read from
// the provider before SiftLookup is called) by what the journal f holds: a
// record that carries e's mark (LookupPolicy.Exact) is e's (Kept); any other is
// left out when another entry of the scope holds it as its outcome
// (Holders, Held), contested when another entry could have made it
// (LookAlikes: an entry of the operation whose request and window fit it,
// LookupPolicy.CouldMake; Contested), and kept otherwise. The provider draws its
// verdict from Kept, and refuses (LookupContest.Ambiguous) where a contested
// record would change it.
//
// [from, to] is e's lookup window (corekit.LookupWindow with margin);
// keyWindow is how long the provider keeps a key, which bounds how long
// before the window another entry can have been reserved and still send
// in it. Reading the provider before the journal is what makes a record
// found there safe to weigh: the entry that made it was reserved before
// it was sent, so it is in the journal by then, holding the record or not
// yet settled. kind and err are set when the journal fails
// (ErrJournal) or holds too many look-alikes to weigh
// (ErrLookupAmbiguous).
func SiftLookup[R any](ctx context.Context, f JournalFinder, e JournalEntry, found []R, pol LookupPolicy[R],
	margin time.Duration, from, to time.Time, keyWindow time.Duration) (s LookupSift[R], kind, err error) {
	s.Held = map[string]string{}
	type candidate struct {
		r       R
		id      string
		dropped bool
		by      []string // other entries that could have made it
	}
	var open []*candidate // neither e's by its mark nor another entry's outcome
	for _, r := range found {
		if pol.Exact(e, r) {
			s.Kept = append(s.Kept, r)
			continue
		}
		c := &candidate{r: r, id: pol.ID(r)}
		if c.id != "" {
			holders, err := f.Holders(ctx, e.Scope, c.id)
			if err != nil {
				return s, ErrJournal, fmt.Errorf("settle %q: who holds %s: %w", e.Reference, c.id, err)
			}
			if h := otherThan(holders, e); h != "" {
				s.Held[c.id] = h
				continue
			}
		}
		open = append(open, c)
	}
	if len(open) == 0 {
		return s, nil, nil
	}
	if margin <= 0 {
		margin = corekit.DefaultLookupMargin
	}
	q := LookAlikeQuery{Scope: e.Scope, Operation: e.Operation, From: from.Add(-margin), To: to.Add(margin), Limit: MaxLookAlikes + 1}
	if keyWindow > 0 {
		q.Since = q.From.Add(-keyWindow)
	}
	alikes, err := f.LookAlikes(ctx, q)
	if err != nil {
		return s, ErrJournal, fmt.Errorf("settle %q: look-alike entries: %w", e.Reference, err)
	}
	if len(alikes) > MaxLookAlikes {
		return s, ErrLookupAmbiguous, fmt.Errorf("settle %q: more than %d entries of the scope could have made the same operation in the window %s: nothing concluded",
			e.Reference, MaxLookAlikes, LookupWindowText(q.From, q.To))
	}
	for _, o := range alikes {
		if o.Reference == e.Reference || (o.State == JournalPending && !o.Sent) || o.NotExecuted() {
			continue // e itself, or nothing was ever sent under o or ran
		}
		o.ResourceID = resourceOf(o, pol)
		oFrom, oTo := corekit.LookupWindow(margin, o.KeyCreated, o.CreatedAt, o.UpdatedAt)
		if o.State == JournalPending {
			oTo = time.Time{} // an attempt of o's may still be on its way
		}
		for _, c := range open {
			switch {
			case c.dropped:
			case o.ResourceID != "" && c.id == o.ResourceID:
				c.dropped, s.Held[c.id] = true, o.Reference // o's outcome, read from its stored answer
			case pol.CouldMake(o, c.r, oFrom, oTo):
				c.by = append(c.by, o.Reference)
			}
		}
	}
	for _, c := range open {
		switch {
		case c.dropped:
		case len(c.by) > 0:
			s.Contested = append(s.Contested, LookupContest[R]{Record: c.r, ID: c.id, Rivals: c.by})
		default:
			s.Kept = append(s.Kept, c.r)
		}
	}
	return s, nil, nil
}

// otherThan is the reference of a holder that is not e, or "".
func otherThan(holders []JournalEntry, e JournalEntry) string {
	for _, h := range holders {
		if h.Reference != e.Reference {
			return h.Reference
		}
	}
	return ""
}

// resourceOf is the resource o holds as its outcome: its ResourceID, or,
// for an entry settled before the journal kept one, what its stored
// answer names, unless redaction has masked it.
func resourceOf[R any](o JournalEntry, pol LookupPolicy[R]) string {
	if o.ResourceID != "" {
		return o.ResourceID
	}
	if !o.Settled() || len(o.Result) == 0 {
		return ""
	}
	id := pol.ResourceOf(o)
	if len(id) > corekit.MaxReferenceLen || strings.ContainsAny(id, "*[") || !corekit.Printable(id) {
		return ""
	}
	return id
}

func quoted(refs []string) string {
	qs := make([]string, 0, min(len(refs), MaxLookupNamed))
	for _, r := range refs[:min(len(refs), MaxLookupNamed)] {
		qs = append(qs, fmt.Sprintf("%q", r))
	}
	return strings.Join(qs, ", ")
}

func pronoun(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

func plural(n int) string {
	if n == 1 {
		return "an entry"
	}
	return fmt.Sprintf("%d entries", n)
}
