package a55

import (
	"time"

	"github.com/payonce/payonce"
)

// chargePolicy is what SettleCreate tells the shared lookup steps
// (payonce.SiftLookup) about A55's charges: a charge is named by its
// charge_uuid; a charge is an entry's own by its mark; another entry
// could have made a charge when its request summary and window fit.
//
// This is where a charge will be told apart exactly: A55's documented
// charges carry no idempotency key (only the payonce fake reports one,
// as an extension), so today a charge is an entry's own only by its key,
// and two entries with one amount and description in one window are told
// apart only by what the journal holds. A field of the request that A55
// reports back in its list (a reference of the merchant's) would make
// Exact true for the entry whose reference it carries and CouldMake
// false for every other entry; Charges.Create would put the entry's
// reference in it. The field is chosen with the client's request form.
type chargePolicy struct{ c *Client }

var _ payonce.LookupPolicy[*Charge] = chargePolicy{}

// ID is the charge's charge_uuid.
func (chargePolicy) ID(ch *Charge) string { return ch.UUID }

// Exact reports a charge that carries e's key.
func (chargePolicy) Exact(e payonce.JournalEntry, ch *Charge) bool {
	return ch.IdempotencyKey != "" && ch.IdempotencyKey == e.Key
}

// CouldMake reports whether o's request could have made ch in [from,
// to] (payonce.InLookupWindow): ch's key, when reported, is o's; a failed
// entry (declined, or settled as failed) made no charge but a failed one
// (Status.Failed: error or declined, in any case), and one whose charge
// is known made no other that succeeded (a key runs to success once; a
// failed charge may be an earlier attempt's); every field A55 reports agrees with o's summary (an entry
// without a readable summary could have made any charge in its window).
func (p chargePolicy) CouldMake(o payonce.JournalEntry, ch *Charge, from, to time.Time) bool {
	if ch.IdempotencyKey != "" {
		return ch.IdempotencyKey == o.Key
	}
	if !ch.Status.Failed() && (o.State == payonce.JournalFailed || o.ResourceID != "") {
		return false
	}
	if !payonce.InLookupWindow(ch.CreatedAt, from, to) {
		return false
	}
	m, err := newChargeMatcher(p.c, o, nil)
	if err != nil {
		return true
	}
	return m.matches(ch, time.Time{}, time.Time{}) // the time is checked above
}

// ResourceOf is the charge_uuid o's stored answer names.
func (chargePolicy) ResourceOf(o payonce.JournalEntry) string {
	return Codec{}.ResourceID(o.Operation, o.Result)
}
