package settlelookup

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/corekit"
)

// MaxLookAlikes bounds the entries of the scope a lookup weighs as other
// possible makers of a record: past it, it concludes nothing
// (ErrLookupAmbiguous).
const MaxLookAlikes = 20000

// Policy is what a provider's settle lookup tells the shared steps about
// its records (R: an A55 charge, a Coinepay card): how to name one, and
// which journal entry could have made one. It is where a provider whose
// request can carry something of the entry's that comes back in its
// records (the key, a reference of the merchant's) makes the match exact:
// Exact says so, and CouldMake answers false for every other entry.
type Policy[R any] interface {
	// ID is the provider's ID of r, the form JournalEntry.ResourceID
	// holds.
	ID(r R) string
	// Exact reports whether r carries a mark of entry e's own request
	// (its idempotency key, where the provider reports keys): r is then
	// e's, whatever other entries hold or could have made.
	Exact(e payonce.JournalEntry, r R) bool
	// CouldMake reports whether the request of entry o, another entry of
	// the scope recording the same operation, could have made r at the
	// provider in o's window [from, to] (a zero to: no end, for a pending
	// o, whose attempt may still be on its way): r's time, when
	// reported, lies in it (Within), and every field r reports agrees
	// with o's request as o's summary holds it (an entry without a
	// summary could have made anything in its window). o.ResourceID is
	// what o is known to have made ("" when unknown; r is never it): a
	// policy rules out what o's state and outcome forbid (a failed card
	// issue made no card, an entry whose success is known made no other
	// success).
	CouldMake(o payonce.JournalEntry, r R, from, to time.Time) bool
	// ResourceOf is the resource o's stored answer names, for an entry
	// written before the journal kept ResourceID ("" when none).
	ResourceOf(o payonce.JournalEntry) string
}

// Within reports whether a record's time t lies in a window [from, to]
// as CouldMake is given it: an unknown (zero) t lies in any, a zero to
// has no end.
func Within(t, from, to time.Time) bool {
	return t.IsZero() || (!t.Before(from) && (to.IsZero() || !t.After(to)))
}

// Finder returns the client's journal as a payonce.JournalFinder: a
// lookup needs to ask it who holds a record and which entries look
// alike. A journal without it is payonce.ErrLookupUnsupported: the lookup
// refuses rather than guess.
func Finder(j payonce.Journal, reference string) (payonce.JournalFinder, error) {
	f, ok := j.(payonce.JournalFinder)
	if !ok {
		return nil, fmt.Errorf("settle %q: the client's journal (%T) cannot tell which entry holds a payment or which entries look alike (payonce.JournalFinder): nothing looked up; settle it by hand (payonce.Client.Settle)",
			reference, j)
	}
	return f, nil
}

// Sifted is what Sift made of the records a lookup found.
type Sifted[R any] struct {
	// Kept are the records that can be the entry's alone: each carries
	// the entry's mark, or no other entry holds it or could have made it.
	Kept []R
	// Contested are the records another entry of the scope could have
	// made as well: the lookup concludes nothing from one (Ambiguous).
	Contested []Contest[R]
	// Held names, by record ID, the other entry whose recorded outcome
	// each record left out is.
	Held map[string]string
}

// Contest is a record other entries could have made as well.
type Contest[R any] struct {
	Record R
	ID     string
	Rivals []string // the other entries' references
}

// Ambiguous is the error of a lookup of reference that cannot conclude
// because of c (its kind is payonce.ErrLookupAmbiguous).
func (c Contest[R]) Ambiguous(reference string) error {
	return fmt.Errorf("settle %q: %s could be the outcome of %s as well (%s in doubt, or settled without a known result, with the same request in the window): nothing recorded; settle %s first",
		reference, c.ID, quoted(c.Rivals), plural(len(c.Rivals)), pronoun(len(c.Rivals)))
}

// maxNote bounds Note, which a settlement's reason (at most
// corekit.MaxSettleReason bytes) carries besides the record and window.
const maxNote = 480

// Note says, for a reason or an error, which records were another
// entry's outcome ("" when none was): the first MaxNamed, within
// maxNote bytes.
func (s Sifted[R]) Note() string {
	if len(s.Held) == 0 {
		return ""
	}
	ids := make([]string, 0, len(s.Held))
	for id := range s.Held {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	note := fmt.Sprintf("; left out as other entries' outcomes (%d):", len(ids))
	for i, id := range ids[:min(len(ids), MaxNamed)] {
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

// Sift sorts found (the provider's records that match entry e, read from
// the provider before Sift is called) by what the journal f holds: a
// record that carries e's mark (Policy.Exact) is e's (Kept); any other is
// left out when another entry of the scope holds it as its outcome
// (Holders, Held), contested when another entry could have made it
// (LookAlikes: an entry of the operation whose request and window fit it,
// Policy.CouldMake; Contested), and kept otherwise. The provider draws its
// verdict from Kept, and refuses (Contest.Ambiguous) where a contested
// record would change it.
//
// [from, to] is e's lookup window (corekit.LookupWindow with margin);
// keyWindow is how long the provider keeps a key, which bounds how long
// before the window another entry can have been reserved and still send
// in it. Reading the provider before the journal is what makes a record
// found there safe to weigh: the entry that made it was reserved before
// it was sent, so it is in the journal by then, holding the record or not
// yet settled. kind and err are set when the journal fails
// (payonce.ErrJournal) or holds too many look-alikes to weigh
// (payonce.ErrLookupAmbiguous).
func Sift[R any](ctx context.Context, f payonce.JournalFinder, e payonce.JournalEntry, found []R, pol Policy[R],
	margin time.Duration, from, to time.Time, keyWindow time.Duration) (s Sifted[R], kind, err error) {
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
				return s, payonce.ErrJournal, fmt.Errorf("settle %q: who holds %s: %w", e.Reference, c.id, err)
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
	q := payonce.LookAlikeQuery{Scope: e.Scope, Operation: e.Operation, From: from.Add(-margin), To: to.Add(margin), Limit: MaxLookAlikes + 1}
	if keyWindow > 0 {
		q.Since = q.From.Add(-keyWindow)
	}
	alikes, err := f.LookAlikes(ctx, q)
	if err != nil {
		return s, payonce.ErrJournal, fmt.Errorf("settle %q: look-alike entries: %w", e.Reference, err)
	}
	if len(alikes) > MaxLookAlikes {
		return s, payonce.ErrLookupAmbiguous, fmt.Errorf("settle %q: more than %d entries of the scope could have made the same operation in the window %s: nothing concluded",
			e.Reference, MaxLookAlikes, Window(q.From, q.To))
	}
	for _, o := range alikes {
		if o.Reference == e.Reference || (o.State == payonce.JournalPending && !o.Sent) || o.NotExecuted() {
			continue // e itself, or nothing was ever sent under o or ran
		}
		o.ResourceID = resourceOf(o, pol)
		oFrom, oTo := corekit.LookupWindow(margin, o.KeyCreated, o.CreatedAt, o.UpdatedAt)
		if o.State == payonce.JournalPending {
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
			s.Contested = append(s.Contested, Contest[R]{Record: c.r, ID: c.id, Rivals: c.by})
		default:
			s.Kept = append(s.Kept, c.r)
		}
	}
	return s, nil, nil
}

// otherThan is the reference of a holder that is not e, or "".
func otherThan(holders []payonce.JournalEntry, e payonce.JournalEntry) string {
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
func resourceOf[R any](o payonce.JournalEntry, pol Policy[R]) string {
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
	qs := make([]string, 0, min(len(refs), MaxNamed))
	for _, r := range refs[:min(len(refs), MaxNamed)] {
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
