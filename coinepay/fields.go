package coinepay

import "github.com/payonce/payonce/redact"

// answerIdentifiers are the fields of Coinepay answers that name a
// resource or a request: the journal keeps them exactly as sent, digits
// and all (a card_id of 16 digits may pass the Luhn check without being a
// card number).
var answerIdentifiers = []string{"card_id", "recharge_id", "header_id", "package_id", "request_id", "idempotency_key"}

// answerCardData are the fields of Coinepay answers that may hold card
// data: the journal always masks them, Luhn or not.
var answerCardData = []string{"card_number", "number", "pan", "cvv", "cvc", "cvv2", "security_code"}

// AnswerFields names the identifiers and the card data of Coinepay's
// answers for the journal (redact.Fields): every other field is redacted
// by pattern.
func (Codec) AnswerFields() *redact.Fields {
	return redact.NewFields(answerIdentifiers, answerCardData)
}
