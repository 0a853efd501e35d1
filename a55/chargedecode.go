package a55

import (
	"encoding/json"

	"github.com/payonce/payonce/internal/jsonmember"
)

// chargeWire is a charge answer's wire form: Charge's fields, the card
// summary without its UnmarshalJSON, so that encoding/json reads the
// answer in one pass (a nested UnmarshalJSON makes it scan the card's
// bytes twice more).
type chargeWire struct {
	chargeFields
	Card *cardSummaryPlain `json:"card,omitempty"`
}

// decodeCharge decodes a charge answer into ch in one pass, with the card
// summary masked as CardSummary.UnmarshalJSON masks it. done is false,
// and ch untouched, when body is left to json.Unmarshal(body, ch): a
// decoding error, a body that is not an object, or a card member given
// twice (which CardSummary.UnmarshalJSON reads as the last one whole,
// where one pass would merge the two).
func decodeCharge(body []byte, ch *Charge) (done bool) {
	var w chargeWire
	if json.Unmarshal(body, &w) != nil {
		return false
	}
	if jsonmember.MayRepeat(body, "card") {
		if _, n, isObject := jsonmember.Last(body, "card"); !isObject || n > 1 {
			return false
		}
	}
	*ch = Charge(w.chargeFields)
	if w.Card != nil {
		c := w.Card.summary()
		ch.Card = &c
	}
	return true
}
