package a55

import "encoding/json"

// ResourceID names the resource an answer of operation made, as the
// journal keeps it with the outcome (payonce.JournalEntry.ResourceID):
// the charge_uuid of a Charges.Create answer, the charge whether it
// succeeded or was declined. Other operations name none (a capture, a
// refund or a cancel acts on a charge another entry made), nor does an
// answer that holds no charge_uuid string.
func (Codec) ResourceID(operation string, body []byte) string {
	if operation != "charges.create" {
		return ""
	}
	var v struct {
		ChargeUUID *string `json:"charge_uuid"`
	}
	if json.Unmarshal(body, &v) != nil || v.ChargeUUID == nil {
		return ""
	}
	return *v.ChargeUUID
}
