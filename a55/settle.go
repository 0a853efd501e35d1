package a55

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/corekit"
)

// maxSettlePages bounds the pages a settle lookup reads: a window holding
// more charges than this is not searched to the end, so nothing is
// concluded from it (payonce.ErrLookupAmbiguous).
const maxSettlePages = 200

// SettleOptions tunes a settle lookup. The zero value is the default.
type SettleOptions struct {
	// Margin widens the lookup window on both sides
	// (around the entry's times); zero means 15 minutes.
	Margin time.Duration
	// RecordNotExecuted lets the lookup record the entry as not executed
	// when no charge matches and the window is over by the client's clock.
	// Without it that case is payonce.ErrLookupNotFound and the entry stays
	// pending (wait for the charge's webhook, then settle by hand).
	RecordNotExecuted bool
	// Request is the request the entry was recorded with, card and all.
	// The lookup needs it only for an entry that holds no request summary
	// (JournalEntry.Summary: an entry reserved by ReserveTx without
	// one, or by a payonce version before summaries); given for any entry,
	// it must match the entry's fingerprint, or for an entry recorded in
	// the guide's wire form its summary (payonce.ErrIdempotencyConflict
	// otherwise). Leave it nil to settle from the journal alone, with no
	// card at hand.
	Request *ChargeCreateRequest
}

// ChargeSettlement is what SettleCreate found and recorded.
type ChargeSettlement struct {
	// Entry is the journal entry after the call: settled (its State and
	// NotExecuted say what the provider did), unless the lookup could not
	// tell (an error) or it stood (Recorded false).
	Entry payonce.JournalEntry
	// Charge is the charge found at A55 (a succeeded or failed outcome);
	// nil when none ran or the entry was settled before.
	Charge *Charge
	// Recorded is true when this call recorded the outcome.
	Recorded bool
}

// SettleCreate settles the journal entry of reference, a Charges.Create
// whose outcome is in doubt (payonce.ErrOutcomeUnknown, or pending after a
// crash), by looking the charge up at A55 instead of sending it again, and
// records what it found with payonce.Client.Settle (fenced like every
// journal write). It needs no card: what it matches by is the request
// summary Charges.Create stored in the entry (ChargeSummary: instalment
// value and count, currency, type, wallet, merchant, description, due
// date), or opts.Request for an entry without one.
//
// It lists the wallet's charges created in the entry's window
// (around the entry's times, by DateStart and DateEnd; by Description when the
// request has one) and keeps those that match it: the amount (the
// instalment's value, or the whole amount), currency, type, wallet,
// merchant, description, due date and instalments (each where A55
// reports it), and the key when the server reports one (the payonce fake
// does). It then asks the journal (payonce.JournalFinder;
// payonce.ErrLookupUnsupported without it) which of them another entry
// holds as its outcome, left out, and whether another entry of the scope
// still in doubt, or settled without a known result, could have made
// one: then payonce.ErrLookupAmbiguous, nothing recorded (docs/journal.md,
// telling look-alike operations apart). Of the charges left:
//
//   - one match not in status error: a success (payonce.JournalSucceeded)
//     with that charge; later calls with the reference answer it from the journal;
//   - several such matches: payonce.ErrLookupAmbiguous, nothing recorded;
//   - only matches in status error (A55 keeps a declined or failed charge
//     and does not store its answer): a failure (payonce.JournalFailed);
//   - none: not executed (JournalEntry.NotExecuted) when
//     opts.RecordNotExecuted is set and the window is over, else
//     payonce.ErrLookupNotFound; an entry under which no attempt was ever sent is
//     recorded as not executed without a lookup.
//
// An entry marked to be looked up first (payonce.JournalEntry.LookUpFirst:
// its last answer was TIMEOUT or DUPLICATE_REQUEST) whose recorded answer
// named its charge is settled by reading that charge (Charges.Get), not by
// listing: a failed status records a failure, another documented status
// but issued and pending a success with the charge; a charge still issued
// or pending is payonce.ErrOutcomeUnknown, nothing recorded.
//
// A succeeded entry is returned as it is (Recorded false). A failed one
// (not executed included) is looked up too: a charge found under its key
// is recorded as succeeded (a success outranks a failure), else it is
// returned as it is. Errors are
// *payonce.APIError values carrying the entry's key and its creation time.
// See docs/a55.md for how to avoid ambiguity (a description per order).
func (s *ChargesService) SettleCreate(ctx context.Context, reference string, opts *SettleOptions) (*ChargeSettlement, error) {
	var o SettleOptions
	if opts != nil {
		o = *opts
	}
	core, view := s.c.core, s.c.core.Settings()
	fail := func(e payonce.JournalEntry, kind, cause error) (*ChargeSettlement, error) {
		return nil, &payonce.APIError{Provider: "a55", Operation: "charges.settle", Method: http.MethodGet, Path: PathChargeList,
			Kind: kind, Err: cause, Key: e.IdempotencyKey()}
	}
	if view.Journal == nil {
		return fail(payonce.JournalEntry{}, payonce.ErrInvalidConfig, errors.New("SettleCreate needs a client with payonce.WithJournal"))
	}
	e, stands, kind, err := core.LookupEntry(ctx, reference, "charges.create")
	if err != nil {
		return fail(e, kind, err)
	}
	unchanged := &ChargeSettlement{Entry: e}
	if stands {
		return unchanged, nil
	}
	var m *chargeMatcher
	if o.Request != nil {
		if m, err = newChargeMatcher(s.c, e, o.Request); err != nil {
			return nil, err
		}
	}
	record := func(st payonce.Settlement, ch *Charge) (*ChargeSettlement, error) {
		got, err := core.Settle(ctx, reference, st)
		if err != nil {
			return nil, err
		}
		return &ChargeSettlement{Entry: got, Charge: ch, Recorded: true}, nil
	}
	if !e.Sent && !e.Settled() {
		return record(payonce.Settlement{State: payonce.JournalFailed, NotExecuted: true, Reason: "a55 lookup: no attempt was ever sent under the key"}, nil)
	}
	if m == nil { // the summary's turn: not needed for an entry never sent
		if m, err = newChargeMatcher(s.c, e, nil); err != nil {
			return nil, err
		}
	}
	if known := recordedCharge(e); known != nil && e.LookUpFirst() {
		// The answer that left the entry in doubt named the charge: it is
		// read, not searched for.
		st, ch, kind, err := s.settleRecorded(ctx, e, known, m)
		if err != nil {
			return fail(e, kind, fmt.Errorf("settle %q: %w", reference, err))
		}
		return record(st, ch)
	}
	finder, err := core.LookupFinder(reference)
	if err != nil {
		return fail(e, payonce.ErrLookupUnsupported, err)
	}

	from, to := corekit.LookupWindow(o.Margin, e.KeyCreated, e.CreatedAt, e.UpdatedAt)
	// The first pass lists the window. When it finds no success, a second
	// pass asks, at every date, for the charges of the entry's key, where a
	// server reports keys (the payonce fake): such a charge is the entry's
	// whatever the clocks say, and must never be concluded not run. A
	// server that reports no keys answers it with none (the client keeps
	// only charges of the key), which ends the pass at its first page.
	var found []*Charge
	for pass := range 2 {
		list := &ChargeListOptions{WalletUUID: m.sum.WalletUUID, Limit: MaxChargeListLimit, Description: m.listDescription()}
		if pass == 0 {
			list.DateStart, list.DateEnd = from, to
		} else if slices.ContainsFunc(found, func(ch *Charge) bool { return !ch.Status.Failed() }) {
			break
		} else {
			list.IdempotencyKey = e.Key
		}
		pages := 0
		for page, err := range s.pages(ctx, *list) {
			if err != nil {
				return fail(e, payonce.CallKind(err), fmt.Errorf("settle %q: list charges: %w", reference, err))
			}
			if pages++; pages > maxSettlePages {
				return fail(e, payonce.ErrLookupAmbiguous, fmt.Errorf("settle %q: more than %d pages of charges to read: narrow them (wallet, description)", reference, maxSettlePages))
			}
			if pass == 1 && len(page.Charges) == 0 {
				break
			}
			for _, ch := range page.Charges {
				switch {
				case pass == 0 && !m.matches(ch, from, to):
					continue
				case pass == 1 && !m.matches(ch, time.Time{}, time.Time{}):
					continue
				case pass == 1 && slices.ContainsFunc(found, func(f *Charge) bool { return f.UUID == ch.UUID }):
					continue
				}
				found = append(found, ch)
			}
		}
	}
	// A charge another entry holds as its outcome is not this one's; one
	// another entry could have made leaves nothing to conclude.
	sifted, kind, err := payonce.SiftLookup(ctx, finder, e, found, chargePolicy{c: s.c}, o.Margin, from, to, view.KeyRules.Window)
	if err != nil {
		return fail(e, kind, err)
	}
	var ok, failed []*Charge
	for _, ch := range sifted.Kept {
		if ch.Status.Failed() {
			failed = append(failed, ch)
		} else {
			ok = append(ok, ch)
		}
	}
	var rivalOK, rivalFailed []payonce.LookupContest[*Charge] // charges another entry could have made too
	for _, c := range sifted.Contested {
		if c.Record.Status.Failed() {
			rivalFailed = append(rivalFailed, c)
		} else {
			rivalOK = append(rivalOK, c)
		}
	}
	window := payonce.LookupWindowText(from, to) + sifted.Note()
	switch {
	case len(ok)+len(rivalOK) > 1:
		ids := payonce.LookupNamed(append(ok, contested(rivalOK)...), func(ch *Charge) string { return ch.UUID })
		return fail(e, payonce.ErrLookupAmbiguous, fmt.Errorf("settle %q: %d charges match (%s), %s", reference, len(ok)+len(rivalOK), ids, window))
	case len(ok) == 1:
		res, err := json.Marshal(ok[0])
		if err != nil {
			return fail(e, payonce.ErrMalformedResponse, err)
		}
		return record(payonce.Settlement{State: payonce.JournalSucceeded, Result: res, StatusCode: http.StatusOK,
			Reason: "a55 lookup: charge " + ok[0].UUID + " in status " + string(ok[0].Status) + ", " + window}, ok[0])
	case len(rivalOK) == 1:
		return fail(e, payonce.ErrLookupAmbiguous, rivalOK[0].Ambiguous(reference))
	case e.Settled():
		return unchanged, nil // no success found: the recorded failure stands
	case len(rivalFailed) > 0:
		return fail(e, payonce.ErrLookupAmbiguous, rivalFailed[0].Ambiguous(reference))
	case len(failed) > 0:
		last := failed[len(failed)-1]
		return record(payonce.Settlement{State: payonce.JournalFailed,
			Reason: fmt.Sprintf("a55 lookup: %d charge(s) in status error, last %s (%s), %s", len(failed), last.UUID, last.Messages.String(), window)}, last)
	case o.RecordNotExecuted && view.Now().After(to):
		return record(payonce.Settlement{State: payonce.JournalFailed, NotExecuted: true, Reason: "a55 lookup: no matching charge " + window}, nil)
	}
	return fail(e, payonce.ErrLookupNotFound, fmt.Errorf("settle %q: no matching charge %s", reference, window))
}

// contested is the charges of cs.
func contested(cs []payonce.LookupContest[*Charge]) []*Charge {
	out := make([]*Charge, 0, len(cs))
	for _, c := range cs {
		out = append(out, c.Record)
	}
	return out
}

// agree reports whether a listed value matches the request's: equal, or
// one side not reported.
func agree(listed, want string) bool { return listed == "" || want == "" || listed == want }
