package a55

import "github.com/payonce/payonce/redact"

// answerIdentifiers are the fields of A55's answers that name a resource
// or a request: the journal keeps them exactly as sent, digits and all (an
// ID of 13 to 19 digits passes the Luhn check about one time in ten
// without being a card number).
var answerIdentifiers = []string{
	"charge_uuid", "wallet_uuid", "uuid", "subscription_uuid", "payment_link_uuid",
	"merchant_id", "merchant_uuid", "entity_uuid", "transaction_reference",
	"request_id", "requestId", "idempotency_key",
}

// answerCardData are the fields of A55's answers that may hold card data:
// the journal always masks them, Luhn or not.
var answerCardData = []string{"card_number", "card_cvv", "number", "cvv", "cvc", "security_code", "pan", "cavv"}

// AnswerFields names the identifiers and the card data of A55's answers
// for the journal (redact.Fields): every other field is redacted by
// pattern.
func (Codec) AnswerFields() *redact.Fields {
	return redact.NewFields(answerIdentifiers, answerCardData)
}
