package a55fake

import (
	"errors"
	"strconv"
)

// decimal is an exact amount, the fake's own: a whole number of
// hundredths, never a float. A55's currencies have two decimals or none
// (currencyDecimals), so every amount the fake accepts fits.
type decimal struct{ cents int64 }

// maxAmountDigits bounds the integer part of an amount, so that a sum of
// amounts never overflows.
const maxAmountDigits = 13

// Reasons a decimal is refused; each names what is wrong in the fake's
// words (they end up in an error's details).
var (
	errAmountSyntax    = errors.New("want plain decimal digits such as 100.50 (no sign, no exponent)")
	errAmountTooLarge  = errors.New("too many digits")
	errAmountPrecision = errors.New("more decimals than the currency has")
	errAmountZero      = errors.New("must be greater than zero")
)

// currencyDecimals are the minor units of the currencies A55 takes:
// BRL, MXN, PEN, ARS and USD have two decimals, CLP and COP none.
var currencyDecimals = map[string]int{"BRL": 2, "MXN": 2, "PEN": 2, "ARS": 2, "USD": 2, "CLP": 0, "COP": 0}

// parseDecimal reads s, the text of a JSON number or of a decimal string,
// as an amount of a currency with places decimals: digits, an optional
// fraction, nothing else. Trailing zeros of the fraction are allowed
// ("100.00" CLP is 100); a digit the currency has no place for is not
// ("100.5" CLP, "1.001" BRL).
func parseDecimal(s string, places int) (decimal, error) {
	intPart, frac, dot := s, "", false
	for i := 0; i < len(s); i++ {
		if s[i] == '.' {
			intPart, frac, dot = s[:i], s[i+1:], true
			break
		}
	}
	if intPart == "" || (dot && frac == "") || !allDigits(intPart) || !allDigits(frac) {
		return decimal{}, errAmountSyntax
	}
	for len(intPart) > 1 && intPart[0] == '0' {
		intPart = intPart[1:]
	}
	if len(intPart) > maxAmountDigits {
		return decimal{}, errAmountTooLarge
	}
	for len(frac) > 0 && frac[len(frac)-1] == '0' {
		frac = frac[:len(frac)-1]
	}
	if len(frac) > places {
		return decimal{}, errAmountPrecision
	}
	n, _ := strconv.ParseInt(intPart, 10, 64) // at most 13 digits
	cents := n * 100
	for i, c := range []byte(frac) {
		d := int64(c - '0')
		if i == 0 {
			d *= 10
		}
		cents += d
	}
	return decimal{cents: cents}, nil
}

// parsePositive is parseDecimal refusing zero.
func parsePositive(s string, places int) (decimal, error) {
	d, err := parseDecimal(s, places)
	if err == nil && d.cents == 0 {
		return decimal{}, errAmountZero
	}
	return d, err
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func (d decimal) add(o decimal) decimal { return decimal{d.cents + o.cents} }
func (d decimal) sub(o decimal) decimal { return decimal{d.cents - o.cents} }
func (d decimal) mul(n int) decimal     { return decimal{d.cents * int64(n)} }
func (d decimal) isZero() bool          { return d.cents == 0 }
func (d decimal) less(o decimal) bool   { return d.cents < o.cents }

// appendText appends d with places decimals: "100.50" for two, "100"
// for none (a zero-decimal currency's amounts are whole).
func (d decimal) appendText(b []byte, places int) []byte {
	b = strconv.AppendInt(b, d.cents/100, 10)
	if places == 0 {
		return b
	}
	c := d.cents % 100
	return append(b, '.', byte('0'+c/10), byte('0'+c%10))
}

// text is appendText as a string.
func (d decimal) text(places int) string {
	var buf [24]byte
	return string(d.appendText(buf[:0], places))
}

// money is an amount with the decimals of its currency: it writes itself
// as a JSON number with exactly those decimals (100.00 BRL, 100 CLP).
type money struct {
	d      decimal
	places int
}

// MarshalJSON writes m as a JSON number.
func (m money) MarshalJSON() ([]byte, error) { return m.d.appendText(nil, m.places), nil }
