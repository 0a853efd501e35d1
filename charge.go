package payonce

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Amount is a non-negative money amount with two decimal places, held as an
// integer count of minor units (cents). It never passes through a float: it
// is parsed from and written as a decimal string such as "100.00", the form
// both providers use on the wire.
type Amount struct {
	minor int64
}

// ParseAmount parses a decimal string ("100", "100.5", "100.00"). Signs,
// exponents, more than two decimals and values above 10^15 are refused with a
// *ValidationError wrapping ErrInvalidAmount.
func ParseAmount(s string) (Amount, error) {
	if s == "" {
		return Amount{}, invalid(ErrInvalidAmount, "amount", "empty")
	}
	whole, frac, hasDot := strings.Cut(s, ".")
	if whole == "" || (hasDot && (frac == "" || len(frac) > 2)) {
		return Amount{}, invalid(ErrInvalidAmount, "amount", "want a decimal string with at most two decimals, like \"100.00\"")
	}
	if len(whole) > 15 {
		return Amount{}, invalid(ErrInvalidAmount, "amount", "too large")
	}
	for _, part := range []string{whole, frac} {
		for i := 0; i < len(part); i++ {
			if part[i] < '0' || part[i] > '9' {
				return Amount{}, invalid(ErrInvalidAmount, "amount", "want only digits and one dot, like \"100.00\"")
			}
		}
	}
	w, _ := strconv.ParseInt(whole, 10, 64)
	var f int64
	if frac != "" {
		f, _ = strconv.ParseInt(frac, 10, 64)
		if len(frac) == 1 {
			f *= 10
		}
	}
	return Amount{minor: w*100 + f}, nil
}

// AmountFromMinor returns the amount of minor units (cents): 10050 is "100.50".
func AmountFromMinor(minor int64) (Amount, error) {
	if minor < 0 || minor > math.MaxInt64/2 {
		return Amount{}, invalid(ErrInvalidAmount, "amount", "out of range")
	}
	return Amount{minor: minor}, nil
}

// Minor returns the amount in minor units.
func (a Amount) Minor() int64 { return a.minor }

// IsZero reports whether the amount is 0.00 (also the zero value).
func (a Amount) IsZero() bool { return a.minor == 0 }

// String returns the decimal form, e.g. "100.00".
func (a Amount) String() string {
	return fmt.Sprintf("%d.%02d", a.minor/100, a.minor%100)
}

// Add returns a+b.
func (a Amount) Add(b Amount) Amount { return Amount{minor: a.minor + b.minor} }

// Sub returns a-b, or an error when b is larger than a.
func (a Amount) Sub(b Amount) (Amount, error) {
	if b.minor > a.minor {
		return Amount{}, invalid(ErrInvalidAmount, "amount", "result would be negative")
	}
	return Amount{minor: a.minor - b.minor}, nil
}

// Cmp compares a and b: -1, 0 or +1.
func (a Amount) Cmp(b Amount) int {
	switch {
	case a.minor < b.minor:
		return -1
	case a.minor > b.minor:
		return 1
	}
	return 0
}

// MarshalJSON writes the amount as a JSON string, "100.00".
func (a Amount) MarshalJSON() ([]byte, error) {
	return []byte(`"` + a.String() + `"`), nil
}

// UnmarshalJSON reads a JSON string ("100.00") or a JSON number (100.5,
// 150.000), without converting through a float. A value with a non-zero
// digit past the second decimal is refused, never rounded.
func (a *Amount) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		*a = Amount{}
		return nil
	}
	s := string(b)
	if len(b) >= 2 && b[0] == '"' {
		if b[len(b)-1] == '"' && bytes.IndexByte(b[1:len(b)-1], '\\') < 0 && bytes.IndexByte(b[1:len(b)-1], '"') < 0 {
			s = string(b[1 : len(b)-1]) // the common case: no escapes
		} else if err := json.Unmarshal(b, &s); err != nil {
			return invalid(ErrInvalidAmount, "amount", "not a JSON string")
		}
	}
	v, err := ParseAmount(trimExtraZeros(s))
	if err != nil {
		return err
	}
	*a = v
	return nil
}

// trimExtraZeros drops the zeros past the second decimal of a decimal
// text ("150.000" is "150.00"): a server may write a number with more
// decimals than it has. Any other digit there stays, for ParseAmount to
// refuse: an amount is never rounded.
func trimExtraZeros(s string) string {
	dot := strings.IndexByte(s, '.')
	if dot < 0 {
		return s
	}
	end := len(s)
	for end > dot+3 && s[end-1] == '0' {
		end--
	}
	return s[:end]
}

// Currency is an ISO 4217 code such as "BRL" or "USD".
type Currency string

// Currencies the providers document.
const (
	BRL Currency = "BRL" // Brazilian real
	USD Currency = "USD" // US dollar
	MXN Currency = "MXN" // Mexican peso
	CLP Currency = "CLP" // Chilean peso, no decimals
	COP Currency = "COP" // Colombian peso, no decimals
	PEN Currency = "PEN" // Peruvian sol
	ARS Currency = "ARS" // Argentine peso
)

// Decimals returns how many decimals an amount in c has where the
// providers write it: 2 for BRL, USD, MXN, PEN and ARS; 0 for CLP and
// COP, which A55 takes as whole units (an amount of 100.50 CLP cannot be
// paid). ok is false for a currency the SDK does not know the minor units
// of. An Amount always holds two decimals; one in a currency of 0 decimals
// must have none set (Amount.Minor()%100 == 0).
func (c Currency) Decimals() (decimals int, ok bool) {
	switch c {
	case BRL, USD, MXN, PEN, ARS:
		return 2, true
	case CLP, COP:
		return 0, true
	}
	return 0, false
}
