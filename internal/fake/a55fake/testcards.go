package a55fake

import (
	"hash/fnv"
	"strings"
)

// Sandbox test cards of A55's quickstart.
const (
	CardConfirms  = "4111111111111111" // confirmed
	CardDeclined  = "4000000000000002" // declined, CARD_DECLINED
	CardProcError = "4000000000000069" // error, PROCESSING_ERROR
)

// Return codes of the sandbox card simulator (test-cards page), the
// first code of a failed charge's message list.
const (
	CodeNotAuthorized = "05"
	CodeExpiredCard   = "57"
	CodeCardProblem   = "70"
	CodeCanceledCard  = "77"
	CodeBlockedCard   = "78"
	CodeTimeout       = "99"
)

// cardOutcome is what the simulator answers for a card: an empty code
// authorises the charge; otherwise the charge ends in status (error, or
// declined for the quickstart's decline card) with that code.
type cardOutcome struct {
	code, desc, status string
}

// testCardOutcomes maps a card number's last digit to its outcome, as
// A55's sandbox does: 0, 1 and 4 authorise; 9 is drawn by testCardOutcome.
var testCardOutcomes = map[byte]cardOutcome{
	'2': {CodeNotAuthorized, "not authorized", StatusError},
	'3': {CodeExpiredCard, "expired card", StatusError},
	'5': {CodeBlockedCard, "blocked card", StatusError},
	'6': {CodeTimeout, "timeout", StatusError},
	'7': {CodeCanceledCard, "canceled card", StatusError},
	'8': {CodeCardProblem, "credit card problems", StatusError},
}

// testCardOverrides are the quickstart's three cards, which answer as
// that page says whatever their last digit.
var testCardOverrides = map[string]cardOutcome{
	CardConfirms:  {},
	CardDeclined:  {"CARD_DECLINED", "the issuer declined the card", StatusDeclined},
	CardProcError: {"PROCESSING_ERROR", "the charge could not be processed", StatusError},
}

// testCardOutcome returns the simulator's answer for a card number. A
// number ending in 9 succeeds or times out at random, but the same
// Idempotency-Key (or, without one, the same charge) always draws the
// same outcome, so a retried request sees what the first one saw.
func testCardOutcome(number, key, chargeUUID string) cardOutcome {
	if o, ok := testCardOverrides[number]; ok {
		return o
	}
	if number == "" {
		return cardOutcome{}
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
			return cardOutcome{}
		}
		return cardOutcome{CodeTimeout, "timeout", StatusError}
	}
	return testCardOutcomes[last]
}

// cardBrand names the brand of a card number by its first digits, as
// the list filter card_brand: compares it ("" when unknown).
func cardBrand(n string) string {
	has := func(prefixes ...string) bool {
		for _, p := range prefixes {
			if strings.HasPrefix(n, p) {
				return true
			}
		}
		return false
	}
	in := func(digits int, lo, hi int) bool {
		if len(n) < digits {
			return false
		}
		v := 0
		for i := 0; i < digits; i++ {
			v = v*10 + int(n[i]-'0')
		}
		return v >= lo && v <= hi
	}
	switch {
	case has("401178", "401179", "431274", "438935", "451416", "457393", "457631", "457632", "504175", "627780", "636297", "636368") ||
		in(6, 506699, 506778) || in(6, 509000, 509999) || in(6, 650031, 650051) || in(6, 650405, 650439) || in(6, 650485, 650598) ||
		in(6, 650700, 650727) || in(6, 650901, 650978) || in(6, 651652, 651679) || in(6, 655000, 655058):
		return "Elo"
	case has("606282", "3841"):
		return "Hipercard"
	case has("4"):
		return "Visa"
	case in(2, 51, 55) || in(4, 2221, 2720):
		return "Mastercard"
	case has("34", "37"):
		return "Amex"
	case has("36", "38") || in(3, 300, 305):
		return "Diners"
	case has("6011", "65") || in(3, 644, 649):
		return "Discover"
	case in(4, 3528, 3589):
		return "JCB"
	}
	return ""
}
