package fakeserver

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
)

// ErrInvalidDecimal is the error of a money amount the fakes refuse: not a
// plain decimal with at most two places, signed, or out of range.
var ErrInvalidDecimal = errors.New("invalid amount")

// MaxDecimalWhole is the most digits a Decimal's whole part may have.
const MaxDecimalWhole = 15

// Decimal is an exact, non-negative money amount with two decimal places,
// held as a count of hundredths: the form Coinepay's card API writes its
// amounts in on the wire, a JSON string such as "100.00". It is the
// fakes' own, written apart from the SDK's money type, so that a mistake
// in one is caught by the other instead of shared. The zero value is
// 0.00. Nothing passes through a float.
type Decimal struct {
	cents int64
}

// ParseDecimal reads a plain decimal: digits, then optionally a dot and
// one or two digits ("100", "100.5", "100.00"). A sign, an exponent,
// spaces, a third decimal or more than MaxDecimalWhole whole digits are
// refused with an error wrapping ErrInvalidDecimal.
func ParseDecimal(s string) (Decimal, error) {
	if s == "" {
		return Decimal{}, decimalError("empty")
	}
	whole, frac, dot := strings.Cut(s, ".")
	switch {
	case whole == "" || dot && (frac == "" || len(frac) > 2):
		return Decimal{}, decimalError(`want a decimal with at most two places, like "100.00"`)
	case len(whole) > MaxDecimalWhole:
		return Decimal{}, decimalError("too large")
	case !allDigits(whole) || !allDigits(frac):
		return Decimal{}, decimalError(`want only digits and one dot, like "100.00"`)
	}
	w, _ := strconv.ParseInt(whole, 10, 64) // at most 15 digits: no overflow
	var f int64
	if frac != "" {
		f, _ = strconv.ParseInt(frac, 10, 64)
		if len(frac) == 1 {
			f *= 10
		}
	}
	return Decimal{cents: w*100 + f}, nil
}

// MustDecimal is ParseDecimal for a constant of the program: it panics
// when s is refused.
func MustDecimal(s string) Decimal {
	d, err := ParseDecimal(s)
	if err != nil {
		panic("fakeserver: MustDecimal(" + strconv.Quote(s) + "): " + err.Error())
	}
	return d
}

// DecimalFromCents returns the amount of cents hundredths: 10050 is
// "100.50". A negative count, or one beyond what ParseDecimal reads, is
// refused.
func DecimalFromCents(cents int64) (Decimal, error) {
	if cents < 0 || cents > maxCents {
		return Decimal{}, decimalError("out of range")
	}
	return Decimal{cents: cents}, nil
}

// maxCents is the largest amount ParseDecimal reads, 999999999999999.99.
const maxCents = 1e17 - 1

func decimalError(reason string) error { return &decimalErr{reason: reason} }

// decimalErr is a refused amount and why.
type decimalErr struct{ reason string }

func (e *decimalErr) Error() string { return ErrInvalidDecimal.Error() + ": " + e.reason }
func (e *decimalErr) Unwrap() error { return ErrInvalidDecimal }

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Cents returns the amount in hundredths.
func (d Decimal) Cents() int64 { return d.cents }

// IsZero reports whether the amount is 0.00.
func (d Decimal) IsZero() bool { return d.cents == 0 }

// String returns the wire form: the whole part, a dot and two decimals.
func (d Decimal) String() string {
	var b [24]byte
	out := strconv.AppendInt(b[:0], d.cents/100, 10)
	f := d.cents % 100
	out = append(out, '.', byte('0'+f/10), byte('0'+f%10))
	return string(out)
}

// Add returns d+e, or an error when the sum is beyond the range
// ParseDecimal reads.
func (d Decimal) Add(e Decimal) (Decimal, error) {
	if d.cents > math.MaxInt64-e.cents || d.cents+e.cents > maxCents {
		return Decimal{}, decimalError("sum out of range")
	}
	return Decimal{cents: d.cents + e.cents}, nil
}

// Sub returns d-e, or an error when e is larger than d (an amount is
// never negative).
func (d Decimal) Sub(e Decimal) (Decimal, error) {
	if e.cents > d.cents {
		return Decimal{}, decimalError("result would be negative")
	}
	return Decimal{cents: d.cents - e.cents}, nil
}

// Cmp compares d and e: -1, 0 or +1.
func (d Decimal) Cmp(e Decimal) int {
	switch {
	case d.cents < e.cents:
		return -1
	case d.cents > e.cents:
		return 1
	}
	return 0
}

// MarshalJSON writes the amount as a JSON string, "100.00".
func (d Decimal) MarshalJSON() ([]byte, error) {
	return []byte(`"` + d.String() + `"`), nil
}

// UnmarshalJSON reads a JSON string holding a decimal ParseDecimal
// accepts. A JSON number of the same form (100.5) is read too, as the
// fakes always have: Coinepay's own clients send strings, and the decimal
// of a number is read from its text, never through a float. null leaves
// the zero amount.
func (d *Decimal) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*d = Decimal{}
		return nil
	}
	s := string(b)
	if len(b) > 0 && b[0] == '"' {
		if err := json.Unmarshal(b, &s); err != nil {
			return decimalError("not a JSON string")
		}
	}
	v, err := ParseDecimal(s)
	if err != nil {
		return err
	}
	*d = v
	return nil
}
