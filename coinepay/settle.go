package coinepay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/corekit"
)

// maxSettleCards bounds the cards a settle lookup reads: card/list has no
// date filter, so the lookup reads the API key's cards to the end; past
// this many it concludes nothing (payonce.ErrLookupAmbiguous).
const maxSettleCards = 20000

// SettleOptions tunes a settle lookup. The zero value is the default.
type SettleOptions struct {
	// Margin widens the lookup window on both sides
	// (around the entry's times); zero means 15 minutes.
	Margin time.Duration
	// RecordNotExecuted lets the lookup record the entry as not executed
	// when no card matches and the window is over by the client's clock.
	// Without it that case is payonce.ErrLookupNotFound and the entry
	// stays pending.
	RecordNotExecuted bool
}

// ApplySettlement is what SettleApply found and recorded.
type ApplySettlement struct {
	// Entry is the journal entry after the call: settled (its State and
	// NotExecuted say what the provider did), unless the lookup could not
	// tell (an error) or it stood (Recorded false).
	Entry payonce.JournalEntry
	// Card is the card found (a succeeded outcome recorded by this call).
	Card *Card
	// Recorded is true when this call recorded the outcome.
	Recorded bool
}

// SettleApply settles the journal entry of reference, a Cards.Apply whose
// outcome is in doubt (payonce.ErrOutcomeUnknown, or pending after a
// crash), by looking the card up instead of applying again, and records
// what it found with payonce.Client.Settle. req is the request the entry
// was recorded with (its fingerprint must match the entry's:
// payonce.ErrIdempotencyConflict otherwise).
//
// card/list has neither a date filter nor the apply's key (the payonce
// fake reports the key, as an extension), so the lookup reads the API
// key's cards and keeps those with req's header and package, created in
// the entry's window (its times widened by the margin) and, when the server reports
// a key, under the entry's. It then asks the journal (payonce.JournalFinder;
// payonce.ErrLookupUnsupported without it): a card another entry holds as
// its outcome is left out, and one another apply of the scope still in
// doubt, or settled without a known card, could have issued (its header,
// package and window fit) leaves nothing to conclude: payonce.ErrLookupAmbiguous
// (docs/journal.md, telling look-alike operations apart). So does a card
// without the entry's key whose creation time is unknown (no created_at,
// or one that is not RFC 3339): it fits every window, and may be the card
// of an entry purged from the journal or of an apply made outside it. Of the cards
// left, one: a success (payonce.JournalSucceeded)
// with that card (a later Apply with the reference answers it from the journal, Fee
// and AccountBalance zero: the list does not hold them), unless its status
// says the apply failed (Card.Failed): the apply is then recorded failed
// (payonce.JournalFailed; an entry already failed stands). Several:
// payonce.ErrLookupAmbiguous, nothing recorded. None: not executed (JournalEntry.NotExecuted) when
// opts.RecordNotExecuted is set and the window is over, else
// payonce.ErrLookupNotFound. An entry under which no attempt was ever sent is
// recorded as not executed without a lookup. A recharge cannot be looked up (card/info gives a
// card's balance, not its recharges): settle it with payonce.Client.Settle
// (docs/journal.md).
//
// A succeeded entry is returned as it is (Recorded false). A failed one
// (not executed included) is looked up too: a card found under its key
// is recorded as succeeded (a success outranks a failure), else it is
// returned as it is. Errors are
// *payonce.APIError values carrying the entry's key and its creation time.
func (s *CardsService) SettleApply(ctx context.Context, reference string, req *ApplyRequest, opts *SettleOptions) (*ApplySettlement, error) {
	var o SettleOptions
	if opts != nil {
		o = *opts
	}
	core, view := s.client.core, s.client.core.Settings()
	fail := func(e payonce.JournalEntry, kind, cause error) (*ApplySettlement, error) {
		return nil, &payonce.APIError{Provider: ProviderName, Operation: "cards.settle", Method: http.MethodGet, Path: PathCardList,
			Kind: kind, Err: cause, Key: e.IdempotencyKey()}
	}
	if view.Journal == nil {
		return fail(payonce.JournalEntry{}, payonce.ErrInvalidConfig, errors.New("SettleApply needs a client with payonce.WithJournal"))
	}
	if err := req.Validate(); err != nil {
		return fail(payonce.JournalEntry{}, payonce.ErrInvalidRequest, err)
	}
	e, stands, kind, err := core.LookupEntry(ctx, reference, "cards.apply")
	if err != nil {
		return fail(e, kind, err)
	}
	unchanged := &ApplySettlement{Entry: e}
	if stands {
		return unchanged, nil
	}
	body, err := corekit.MarshalWire(req)
	if err != nil {
		return fail(e, payonce.ErrInvalidRequest, fmt.Errorf("encode request: %w", err))
	}
	if !core.RequestMatches(e, http.MethodPost, PathCardApply, body) {
		return fail(e, payonce.ErrIdempotencyConflict, fmt.Errorf("reference %q was recorded with another request", reference))
	}
	record := func(st payonce.Settlement, c *Card) (*ApplySettlement, error) {
		got, err := core.Settle(ctx, reference, st)
		if err != nil {
			return nil, err
		}
		return &ApplySettlement{Entry: got, Card: c, Recorded: true}, nil
	}
	if !e.Sent && !e.Settled() {
		return record(payonce.Settlement{State: payonce.JournalFailed, NotExecuted: true, Reason: "coinepay lookup: no attempt was ever sent under the key"}, nil)
	}

	finder, err := core.LookupFinder(reference)
	if err != nil {
		return fail(e, payonce.ErrLookupUnsupported, err)
	}
	from, to := corekit.LookupWindow(o.Margin, e.KeyCreated, e.CreatedAt, e.UpdatedAt)
	var found []*Card
	n := 0
	for c, err := range s.All(ctx, &ListOptions{PageSize: DefaultPageSize}) {
		if err != nil {
			return fail(e, payonce.CallKind(err), fmt.Errorf("settle %q: list cards: %w", reference, err))
		}
		if n++; n > maxSettleCards {
			return fail(e, payonce.ErrLookupAmbiguous, fmt.Errorf("settle %q: more than %d cards to read", reference, maxSettleCards))
		}
		if cardMatches(req, e, c, from, to) {
			found = append(found, c)
		}
	}
	// A card another entry holds as its outcome is not this one's; one
	// another entry could have issued leaves nothing to conclude.
	sifted, kind, err := payonce.SiftLookup(ctx, finder, e, found, cardPolicy{}, o.Margin, from, to, view.KeyRules.Window)
	if err != nil {
		return fail(e, kind, err)
	}
	found, rivals := sifted.Kept, sifted.Contested
	window := payonce.LookupWindowText(from, to) + sifted.Note()
	if c := untimed(e, found); c != nil {
		return fail(e, payonce.ErrLookupAmbiguous, fmt.Errorf("settle %q: card %s carries no creation time the lookup can read (created_at in RFC 3339), so it cannot be placed in the window %s: it may be the card of any apply of its header and package, one purged from the journal or made outside it included; nothing recorded: settle it with payonce.Client.Settle",
			reference, c.CardID, window))
	}
	switch {
	case len(found)+len(rivals) > 1:
		for _, c := range rivals {
			found = append(found, c.Record)
		}
		ids := payonce.LookupNamed(found, func(c *Card) string { return c.CardID })
		return fail(e, payonce.ErrLookupAmbiguous, fmt.Errorf("settle %q: %d cards match (%s), %s", reference, len(found), ids, window))
	case len(found) == 1 && found[0].Failed() && e.Settled():
		return unchanged, nil // a failed card: no success found, the recorded failure stands
	case len(found) == 1 && found[0].Failed():
		return record(payonce.Settlement{State: payonce.JournalFailed,
			Reason: fmt.Sprintf("coinepay lookup: card %s in status %q, its apply failed, %s", found[0].CardID, found[0].Status, window)}, nil)
	case len(found) == 1:
		res, err := json.Marshal(Envelope{Code: http.StatusOK, Message: "settled by lookup", Data: json.RawMessage(found[0].Raw)})
		if err != nil {
			return fail(e, payonce.ErrMalformedResponse, err)
		}
		return record(payonce.Settlement{State: payonce.JournalSucceeded, Result: res, StatusCode: http.StatusOK,
			Reason: "coinepay lookup: card " + found[0].CardID + ", " + window}, found[0])
	case len(rivals) == 1:
		return fail(e, payonce.ErrLookupAmbiguous, rivals[0].Ambiguous(reference))
	case e.Settled():
		return unchanged, nil // no success found: the recorded failure stands
	case o.RecordNotExecuted && view.Now().After(to):
		return record(payonce.Settlement{State: payonce.JournalFailed, NotExecuted: true, Reason: "coinepay lookup: no matching card " + window}, nil)
	}
	return fail(e, payonce.ErrLookupNotFound, fmt.Errorf("settle %q: no matching card %s", reference, window))
}

// untimed is the first of found that the lookup cannot place in time: a
// card without the entry's key whose creation time is unknown (no
// created_at, or one that is not RFC 3339). Such a card fits every
// window, so neither its time nor the journal (which holds no purged
// entry, nor anything made outside it) can tell it from the card of any
// other apply of its header and package: no lookup concludes from it.
func untimed(e payonce.JournalEntry, found []*Card) *Card {
	for _, c := range found {
		if c.CreatedAt.IsZero() && !(cardPolicy{}).Exact(e, c) {
			return c
		}
	}
	return nil
}

// cardMatches reports whether c can be the card req issued under e's key:
// its header and package, when reported, are req's, its key, when
// reported, is e's, and, when it carries no key, its creation time, when
// reported, lies in [from, to].
func cardMatches(req *ApplyRequest, e payonce.JournalEntry, c *Card, from, to time.Time) bool {
	switch {
	case c == nil || c.CardID == "":
		return false
	case c.IdempotencyKey != "" && c.IdempotencyKey != e.Key:
		return false
	case c.HeaderID != "" && c.HeaderID != req.HeaderID, c.PackageID != "" && c.PackageID != req.PackageID:
		return false
	case c.IdempotencyKey == "" && !c.CreatedAt.IsZero() && (c.CreatedAt.Before(from) || c.CreatedAt.After(to)):
		// A card that carries the entry's key is the entry's whatever the
		// clocks say; only a card without one is placed by its time.
		return false
	}
	return true
}
