package a55test

import (
	"strconv"
)

// testCardBase is the sandbox's ready-made card number without its last
// digit; TestCard fixes one of its digits so that the number passes Luhn.
const testCardBase = "402400715376319"

// TestCard returns a 16-digit card number that passes the Luhn check and
// ends in lastDigit (0..9), the digit that decides what the fake, like
// A55's sandbox, answers: 0, 1, 4 confirm; 2 is declined (code 05), 3 an
// expired card (57), 5 a blocked card (78), 7 a canceled card (77) — all
// a55.ErrCardDeclined —; 6 a timeout (99) and 8 a card problem (70),
// a55.ErrChargeFailed; 9 confirms or times out, the same way for the
// same Idempotency-Key. It returns "" for a digit outside 0..9.
func TestCard(lastDigit int) string {
	if lastDigit < 0 || lastDigit > 9 {
		return ""
	}
	b := []byte(testCardBase + strconv.Itoa(lastDigit))
	for c := byte('0'); c <= '9'; c++ {
		b[6] = c
		if luhn(b) {
			return string(b)
		}
	}
	return "" // unreachable: doubling permutes the digits, so one c fits
}

// luhn reports whether the digits pass the Luhn checksum.
func luhn(b []byte) bool {
	sum := 0
	for i := len(b) - 1; i >= 0; i-- {
		d := int(b[i] - '0')
		if (len(b)-1-i)%2 == 1 {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return sum%10 == 0
}
