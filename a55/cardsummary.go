package a55

import (
	"encoding/json"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/redact"
)

// UnmarshalJSON reads a card summary and keeps no more of the card than
// its last four digits, whatever the server sends: a whole number in
// number or last4 would otherwise reach the merchant's JSON store, and
// fmt prints the fields of a *CardSummary inside a Charge without its
// masking methods when the verb does not suit a struct (%s, %d).
func (c *CardSummary) UnmarshalJSON(b []byte) error {
	var p cardSummaryPlain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*c = p.summary()
	return nil
}

// cardSummaryPlain is CardSummary without its UnmarshalJSON: the wire
// form a charge answer decodes into in one pass (decodeCharge).
type cardSummaryPlain CardSummary

// summary returns the card summary masked and redacted as
// CardSummary.UnmarshalJSON keeps it.
func (p *cardSummaryPlain) summary() CardSummary {
	c := CardSummary(*p)
	if c.Number != "" {
		c.Number = maskedNumber(c.Number) // "************1111"
	}
	if len(c.Last4) > 4 {
		c.Last4 = payonce.CardNumber(c.Last4).Last4()
	}
	c.Brand, c.HolderName = redact.String(c.Brand), redact.String(c.HolderName)
	c.ExpirationMonth, c.ExpirationYear = redact.String(c.ExpirationMonth), redact.String(c.ExpirationYear)
	return c
}

// maskedNumber is n as payonce.CardNumber prints it: "************1111",
// "****" with fewer than four digits.
func maskedNumber(n payonce.CardNumber) payonce.CardNumber {
	if l4 := n.Last4(); l4 != "" {
		return "************" + payonce.CardNumber(l4)
	}
	return "****"
}
