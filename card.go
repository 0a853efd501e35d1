package payonce

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/payonce/payonce/internal/luhn"
)

// CardNumber is a primary account number. Every printed form (String, %v,
// %+v, %#v, %q, slog) and its JSON form show only its last four digits;
// only a Card's wire form (Card.MarshalWire) carries it whole.
type CardNumber string

// Last4 returns the last four digits, or "" when there are fewer than four.
func (n CardNumber) Last4() string {
	d := digitsOnly(string(n))
	if len(d) < 4 {
		return ""
	}
	return d[len(d)-4:]
}

// String masks the number: "************1111".
func (n CardNumber) String() string {
	l4 := n.Last4()
	if l4 == "" {
		return "****"
	}
	return "************" + l4
}

// Format masks the number for every fmt verb.
func (n CardNumber) Format(f fmt.State, verb rune) { formatMasked(f, verb, n.String()) }

// MarshalJSON masks the number as String does: "************1111".
func (n CardNumber) MarshalJSON() ([]byte, error) { return json.Marshal(n.String()) }

// CVV is a card verification value. It never prints: every form, JSON
// included, is "***".
type CVV string

// String returns "***".
func (CVV) String() string { return "***" }

// Format prints "***" for every fmt verb.
func (c CVV) Format(f fmt.State, verb rune) { formatMasked(f, verb, c.String()) }

// MarshalJSON returns "***".
func (CVV) MarshalJSON() ([]byte, error) { return []byte(`"***"`), nil }

func formatMasked(f fmt.State, verb rune, s string) {
	if verb == 'q' || (verb == 'v' && f.Flag('#')) {
		s = strconv.Quote(s)
	}
	_, _ = f.Write([]byte(s))
}

// Card is a payment card as A55's charge payload carries it. Printed,
// logged, formatted or marshalled with encoding/json, it shows at most the
// last four digits and never the CVV; only its wire form (MarshalWire),
// which the SDK sends, carries every field.
type Card struct {
	Number          CardNumber `json:"number"`
	HolderName      string     `json:"holder_name"`
	ExpirationMonth string     `json:"expiration_month"`
	ExpirationYear  string     `json:"expiration_year"`
	CVV             CVV        `json:"cvv"`
}

// String shows the brand-free masked form: "card ************1111 exp 12/2030".
func (c Card) String() string {
	return fmt.Sprintf("card %s exp %s/%s", c.Number.String(), c.ExpirationMonth, c.ExpirationYear)
}

// goString is the %#v form; it masks like String.
func (c Card) goString() string {
	return fmt.Sprintf("payonce.Card{Number:%q, HolderName:%q, ExpirationMonth:%q, ExpirationYear:%q, CVV:\"***\"}",
		c.Number.String(), c.HolderName, c.ExpirationMonth, c.ExpirationYear)
}

// Format masks the card for every fmt verb (%v, %+v, %#v, %s, %q).
func (c Card) Format(f fmt.State, verb rune) {
	switch {
	case verb == 'v' && f.Flag('#'):
		_, _ = f.Write([]byte(c.goString()))
	case verb == 'v' && f.Flag('+'):
		fmt.Fprintf(f, "{Number:%s HolderName:%s ExpirationMonth:%s ExpirationYear:%s CVV:***}",
			c.Number.String(), c.HolderName, c.ExpirationMonth, c.ExpirationYear)
	default:
		formatMasked(f, verb, c.String())
	}
}

// cardJSON is the masked JSON form of a Card: no CVV.
type cardJSON struct {
	Number          string `json:"number"`
	HolderName      string `json:"holder_name"`
	ExpirationMonth string `json:"expiration_month"`
	ExpirationYear  string `json:"expiration_year"`
}

// cardWire is the wire form of a Card, every field whole.
type cardWire struct {
	Number          string `json:"number"`
	HolderName      string `json:"holder_name"`
	ExpirationMonth string `json:"expiration_month"`
	ExpirationYear  string `json:"expiration_year"`
	CVV             string `json:"cvv"`
}

// MarshalJSON is the masked form: the number as "************1111", the
// holder and expiry, and no CVV. A card in a job payload, a JSON log line
// or a stored struct cannot be charged from it.
func (c Card) MarshalJSON() ([]byte, error) {
	return json.Marshal(cardJSON{Number: c.Number.String(), HolderName: c.HolderName,
		ExpirationMonth: c.ExpirationMonth, ExpirationYear: c.ExpirationYear})
}

// MarshalWire is the form a provider receives: every field, the whole
// number and the CVV. Only a request's own MarshalWire calls it.
func (c Card) MarshalWire() ([]byte, error) {
	return json.Marshal(cardWire{Number: string(c.Number), HolderName: c.HolderName,
		ExpirationMonth: c.ExpirationMonth, ExpirationYear: c.ExpirationYear, CVV: string(c.CVV)})
}

// LogValue is the slog form: last four digits and expiry only.
func (c Card) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("last4", c.Number.Last4()),
		slog.String("exp", c.ExpirationMonth+"/"+c.ExpirationYear),
	)
}

// Validate checks the card before any request: 12 to 19 digits passing the
// Luhn check, a holder name, a month 01-12 and a four-digit year not in the
// past at now, and a 3 or 4 digit CVV. The error, a *ValidationError
// wrapping ErrInvalidCard, never contains the number or the CVV.
func (c Card) Validate(now time.Time) error {
	n := string(c.Number)
	if len(n) < 12 || len(n) > 19 || digitsOnly(n) != n {
		return invalid(ErrInvalidCard, "card.number", "want 12 to 19 digits")
	}
	if !luhn.Valid(n) {
		return invalid(ErrInvalidCard, "card.number", "fails the Luhn check")
	}
	if strings.TrimSpace(c.HolderName) == "" {
		return invalid(ErrInvalidCard, "card.holder_name", "required")
	}
	month, err := strconv.Atoi(c.ExpirationMonth)
	if err != nil || month < 1 || month > 12 || len(c.ExpirationMonth) > 2 {
		return invalid(ErrInvalidCard, "card.expiration_month", "want 01 to 12")
	}
	year, err := strconv.Atoi(c.ExpirationYear)
	if err != nil || len(c.ExpirationYear) != 4 {
		return invalid(ErrInvalidCard, "card.expiration_year", "want a four-digit year")
	}
	// A card is valid through the last day of its expiry month.
	expires := time.Date(year, time.Month(month)+1, 1, 0, 0, 0, 0, time.UTC)
	if !now.Before(expires) {
		return invalid(ErrInvalidCard, "card.expiration_year", "card has expired")
	}
	cvv := string(c.CVV)
	if (len(cvv) != 3 && len(cvv) != 4) || digitsOnly(cvv) != cvv {
		return invalid(ErrInvalidCard, "card.cvv", "must be 3 or 4 digits")
	}
	return nil
}

func digitsOnly(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			b.WriteByte(s[i])
		}
	}
	return b.String()
}
