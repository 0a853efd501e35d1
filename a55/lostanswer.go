package a55

import (
	"context"
	"fmt"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/corekit"
)

// lostCreate is the lookup Charges.Create asks for before it sends a
// charge again under its key after an attempt whose answer was lost
// (payonce.Request.BeforeResend): A55 keeps only 2xx answers under a
// key, so a TIMEOUT lost on the way (the charge made) would otherwise
// run the charge a second time.
type lostCreate struct {
	s                *ChargesService
	req              *ChargeCreateRequest
	wallet, merchant string

	found   *Charge // the charge the lookup found: the create's
	refused bool    // the lookup could not tell: the create is in doubt
}

// beforeResend lists the wallet's charges created in the key's window
// (from its creation, less the lookup margin, to now plus it), with the
// request's description, and keeps those the request could have made,
// by the settle lookup's rules (chargeMatcher: amount, currency, type,
// wallet, merchant, description, due date, instalments, and the key where
// the server reports one). A55's charges carry no key, so a charge that
// matches may be another order's of the same amount and description;
// the candidates are weighed as SettleCreate weighs them (lookUp): none,
// nothing ran (found false: send again); the create's, kept in l.found
// (found true); or no telling, an error, nothing sent again.
func (l *lostCreate) beforeResend(ctx context.Context, key payonce.Key, reference string) (bool, error) {
	ch, err := l.lookUp(ctx, key, reference)
	switch {
	case err != nil:
		l.refused = true
		return false, err
	case ch != nil:
		l.found = ch
		return true, nil
	}
	return false, nil
}

// lookUp finds the charge of the create under key, journaled under
// reference ("" for a call without a journal entry), by listing (see
// beforeResend), and weighs what matches by chargePolicy: a charge that
// carries the create's mark (Exact: the key, where the server reports
// one) is the create's. Of the others, a journaled call asks the journal
// (payonce.SiftLookup): one held as another entry's outcome is left out,
// one another entry in doubt could have made leaves nothing to conclude,
// a single one left is the create's. A call without a journal entry has
// nothing to weigh them against: a match it cannot prove its own may be
// another order's, so any is an error naming it. It returns nil when
// nothing is left (nothing ran), and an error, nothing concluded, when
// more than one is left, or when the list fails or is too long to read.
func (l *lostCreate) lookUp(ctx context.Context, key payonce.Key, reference string) (*Charge, error) {
	if l.req == nil {
		return nil, errNilRequest
	}
	c := l.s.c
	m := &chargeMatcher{e: payonce.JournalEntry{Key: key.String()}, sum: l.req.summary(l.wallet, l.merchant), req: l.req}
	from, to := corekit.LookupWindow(0, key.Created(), c.view.Now())
	window := payonce.LookupWindowText(from, to)
	list := ChargeListOptions{WalletUUID: l.wallet, Limit: MaxChargeListLimit, Description: l.req.Description, DateStart: from, DateEnd: to}
	var found []*Charge
	pages := 0
	for page, err := range l.s.pages(ctx, list) {
		if err != nil {
			return nil, fmt.Errorf("list charges: %s", lookupFailure(err))
		}
		if pages++; pages > maxSettlePages {
			return nil, fmt.Errorf("more than %d pages of charges to read", maxSettlePages)
		}
		for _, ch := range page.Charges {
			if !m.matches(ch, from, to) {
				continue
			}
			ch.Meta = page.Meta // the list's answer: the lookup's
			found = append(found, ch)
		}
	}
	if len(found) == 0 {
		return nil, nil
	}
	pol := chargePolicy{c: c}
	e := payonce.JournalEntry{Scope: c.core.Scope(), Reference: reference, Operation: "charges.create", Key: key.String()}
	var exact []*Charge
	for _, ch := range found {
		if pol.Exact(e, ch) {
			exact = append(exact, ch)
		}
	}
	named := func(chs []*Charge) string { return payonce.LookupNamed(chs, pol.ID) }
	switch {
	case len(exact) == 1:
		return exact[0], nil
	case len(exact) > 1:
		return nil, fmt.Errorf("%d charges carry the key (%s), %s", len(exact), named(exact), window)
	case reference == "" || c.view.Journal == nil:
		return nil, fmt.Errorf("%d charge(s) match the request (%s), %s, and none carries its key: "+
			"without a journal entry to weigh them against, another order's charge cannot be told from this one's", len(found), named(found), window)
	}
	finder, err := c.core.LookupFinder(reference)
	if err != nil {
		return nil, err
	}
	sifted, _, err := payonce.SiftLookup(ctx, finder, e, found, pol, 0, from, to, c.view.KeyRules.Window)
	switch {
	case err != nil:
		return nil, err
	case len(sifted.Contested) > 0:
		return nil, sifted.Contested[0].Ambiguous(reference)
	case len(sifted.Kept) > 1:
		return nil, fmt.Errorf("%d charges match the request (%s), %s%s", len(sifted.Kept), named(sifted.Kept), window, sifted.Note())
	case len(sifted.Kept) == 1:
		return sifted.Kept[0], nil
	}
	return nil, nil // every match is another entry's outcome: nothing of this one's ran
}
