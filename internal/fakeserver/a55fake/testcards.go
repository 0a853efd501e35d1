package a55fake

import "hash/fnv"

// Return codes of the sandbox card simulator, the first code of a failed
// charge's message list.
const (
	CodeNotAuthorized = "05"
	CodeExpiredCard   = "57"
	CodeCardProblem   = "70"
	CodeCanceledCard  = "77"
	CodeBlockedCard   = "78"
	CodeTimeout       = "99"
)

// cardOutcome is what the simulator answers for a card: an empty code
// authorises the charge.
type cardOutcome struct {
	code, desc string
}

// testCardOutcomes maps a card number's last digit to its outcome, as
// A55's sandbox does: 0, 1 and 4 authorise; 9 is settled by randomDigit.
var testCardOutcomes = map[byte]cardOutcome{
	'2': {CodeNotAuthorized, "not authorized"},
	'3': {CodeExpiredCard, "expired card"},
	'5': {CodeBlockedCard, "blocked card"},
	'6': {CodeTimeout, "timeout"},
	'7': {CodeCanceledCard, "canceled card"},
	'8': {CodeCardProblem, "credit card problems"},
}

// testCardOverrides keep the sandbox numbers this project has always
// documented answering as they always did, whatever their last digit says.
var testCardOverrides = map[string]cardOutcome{
	CardConfirms:  {},
	CardDeclined:  {"CARD_DECLINED", "the issuer declined the card"},
	CardProcError: {"PROCESSING_ERROR", "the charge could not be processed"},
}

// testCardOutcome returns the simulator's answer for a card number that
// passed the format checks. A number ending in 9 succeeds or times out at
// random, but the same Idempotency-Key (or, without one, the same charge)
// always draws the same outcome, so a retried request sees what the first
// one saw.
func testCardOutcome(number, key, chargeUUID string) (code, desc string) {
	if o, ok := testCardOverrides[number]; ok {
		return o.code, o.desc
	}
	if number == "" {
		return "", ""
	}
	last := number[len(number)-1]
	if last == '9' {
		seed := key
		if seed == "" {
			seed = chargeUUID
		}
		h := fnv.New32a()
		_, _ = h.Write([]byte(seed))
		if h.Sum32()%2 == 0 {
			return "", ""
		}
		return CodeTimeout, "timeout"
	}
	o := testCardOutcomes[last]
	return o.code, o.desc
}
