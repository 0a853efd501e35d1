package coinepay

import "encoding/json"

// ResourceID names the resource an answer of operation made, as the
// journal keeps it with the outcome (payonce.JournalEntry.ResourceID):
// the card_id of a Cards.Apply answer, the recharge_id of a
// Cards.Recharge one, both in the envelope's data. Other operations, and
// answers without such a string, name none.
func (Codec) ResourceID(operation string, body []byte) string {
	var v struct {
		Data struct {
			CardID     *string `json:"card_id"`
			RechargeID *string `json:"recharge_id"`
		} `json:"data"`
	}
	if json.Unmarshal(body, &v) != nil {
		return ""
	}
	var id *string
	switch operation {
	case "cards.apply":
		id = v.Data.CardID
	case "cards.recharge":
		id = v.Data.RechargeID
	}
	if id == nil {
		return ""
	}
	return *id
}
