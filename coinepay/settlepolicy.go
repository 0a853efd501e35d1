package coinepay

import (
	"encoding/json"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/redact"
)

// ApplySummary is what a journal entry of Cards.Apply holds about its
// request (payonce.JournalEntry.Summary): the header and the package, all
// the body holds. A settle lookup reads it to tell which other entries
// could have issued a card it finds.
type ApplySummary struct {
	HeaderID  string `json:"header_id"`
	PackageID string `json:"package_id"`
}

// JournalSummary is the JSON of the request's ApplySummary, the form of
// JournalEntry.Summary: give it to an entry you reserve yourself
// (sqlitejournal and pgjournal ReserveTx).
func (r *ApplyRequest) JournalSummary() string {
	if r == nil {
		return ""
	}
	b, err := json.Marshal(ApplySummary{HeaderID: r.HeaderID, PackageID: r.PackageID})
	if err != nil { // two strings
		return ""
	}
	return string(redact.JSON(b))
}

// applySummary is ApplyRequest as its summary: the same two fields, so
// that a request is its own summary without a copy.
type applySummary ApplyRequest

// summary is the request's summary for the journal (payonce.Request),
// nil for a nil request (which Validate refuses). A pointer, which an
// interface holds without allocating: an apply without a journal pays
// nothing for it.
func (r *ApplyRequest) summary() any {
	if r == nil {
		return nil
	}
	return (*applySummary)(r)
}

// cardPolicy is what SettleApply tells the shared lookup steps
// (payonce.SiftLookup) about Coinepay's cards. Coinepay's apply takes a
// header and a package and nothing else, and its cards carry neither the
// key (only the payonce fake reports one) nor anything of the merchant's:
// a card is an entry's own only by its key, and two applies of one
// header and package in one window are told apart only by what the
// journal holds.
type cardPolicy struct{}

var _ payonce.LookupPolicy[*Card] = cardPolicy{}

// ID is the card's card_id.
func (cardPolicy) ID(c *Card) string { return c.CardID }

// Exact reports a card that carries e's key.
func (cardPolicy) Exact(e payonce.JournalEntry, c *Card) bool {
	return c.IdempotencyKey != "" && c.IdempotencyKey == e.Key
}

// CouldMake reports whether o's apply could have issued c in [from, to]:
// c's key, when reported, is o's; a failed apply issued no card (Coinepay
// refuses before issuing) but one in a failed status (Card.Failed), one
// whose card is known no other but such a card (a key that failed runs
// again: its failed card may be an earlier attempt's); c's creation
// time, when reported, lies in the window (payonce.InLookupWindow); its
// header and package, when reported, are those of o's summary (an entry
// without one, written before applies kept it, could have issued any
// card in its window).
func (cardPolicy) CouldMake(o payonce.JournalEntry, c *Card, from, to time.Time) bool {
	switch {
	case c.IdempotencyKey != "":
		return c.IdempotencyKey == o.Key
	case !c.Failed() && (o.State == payonce.JournalFailed || o.ResourceID != ""):
		return false
	case !payonce.InLookupWindow(c.CreatedAt, from, to):
		return false
	}
	var sum ApplySummary
	if o.Summary == "" || json.Unmarshal([]byte(o.Summary), &sum) != nil {
		return true
	}
	return (c.HeaderID == "" || c.HeaderID == sum.HeaderID) && (c.PackageID == "" || c.PackageID == sum.PackageID)
}

// ResourceOf is the card_id o's stored answer names.
func (cardPolicy) ResourceOf(o payonce.JournalEntry) string {
	return Codec{}.ResourceID(o.Operation, o.Result)
}
