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
// the server reports one). A charge that reports the key is the create's
// whatever else matches. Of what is left: none, nothing ran (found
// false: send again); one, the create's (found true, kept in l.found);
// more, or a list that failed or is too long to read, ambiguous: an
// error, nothing sent again.
func (l *lostCreate) beforeResend(ctx context.Context, key payonce.Key) (bool, error) {
	ch, err := l.lookUp(ctx, key)
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

func (l *lostCreate) lookUp(ctx context.Context, key payonce.Key) (*Charge, error) {
	if l.req == nil {
		return nil, errNilRequest
	}
	m := &chargeMatcher{e: payonce.JournalEntry{Key: key.String()}, sum: l.req.summary(l.wallet, l.merchant), req: l.req}
	from, to := corekit.LookupWindow(0, key.Created(), l.s.c.view.Now())
	list := ChargeListOptions{WalletUUID: l.wallet, Limit: MaxChargeListLimit, Description: l.req.Description, DateStart: from, DateEnd: to}
	var found, exact []*Charge
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
			if ch.IdempotencyKey == key.String() {
				exact = append(exact, ch)
			}
		}
	}
	if len(exact) > 0 {
		found = exact
	}
	switch len(found) {
	case 0:
		return nil, nil
	case 1:
		return found[0], nil
	}
	ids := payonce.LookupNamed(found, func(ch *Charge) string { return ch.UUID })
	return nil, fmt.Errorf("%d charges match the request (%s), %s", len(found), ids, payonce.LookupWindowText(from, to))
}
