package payonce

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/payonce/payonce/internal/luhn"
)

// CardNumber is a primary account number. Every printed form (%v, %s,
// %+v, %#v, %q, slog) and its JSON form show only its last four digits;
// only the request that carries it (a55.ChargeCreateRequest's wire form,
// which the SDK sends) holds it whole: string(n) is the number itself.
type CardNumber string

// Last4 returns the last four digits, or "" when there are fewer than four.
func (n CardNumber) Last4() string {
	d := digitsOnly(string(n))
	if len(d) < 4 {
		return ""
	}
	return d[len(d)-4:]
}

// masked is the number as every form shows it: "************1111".
func (n CardNumber) masked() string {
	l4 := n.Last4()
	if l4 == "" {
		return "****"
	}
	return "************" + l4
}

// Format masks the number for every fmt verb.
func (n CardNumber) Format(f fmt.State, verb rune) { formatMasked(f, verb, n.masked()) }

// MarshalJSON masks the number as it prints: "************1111".
func (n CardNumber) MarshalJSON() ([]byte, error) { return json.Marshal(n.masked()) }

// CVV is a card verification value. It never prints: every form, JSON
// included, is "***".
type CVV string

// Format prints "***" for every fmt verb.
func (CVV) Format(f fmt.State, verb rune) { formatMasked(f, verb, "***") }

// MarshalJSON returns "***".
func (CVV) MarshalJSON() ([]byte, error) { return []byte(`"***"`), nil }

func formatMasked(f fmt.State, verb rune, s string) {
	if verb == 'q' || (verb == 'v' && f.Flag('#')) {
		s = strconv.Quote(s)
	}
	_, _ = f.Write([]byte(s))
}

// Card is a payment card (A55's charge sends its fields as card_number,
// card_name, card_expiry_month, card_expiry_year and card_cvv). Printed,
// logged, formatted or marshalled with encoding/json, it shows at most the
// last four digits and never the CVV; only the wire form of the request
// that carries it, which the SDK sends, holds every field.
type Card struct {
	Number          CardNumber `json:"number"`
	HolderName      string     `json:"holder_name"`
	ExpirationMonth string     `json:"expiration_month"`
	ExpirationYear  string     `json:"expiration_year"`
	CVV             CVV        `json:"cvv"`
}

// masked is the brand-free masked form %v and %s print:
// "card ************1111 exp 12/2030".
func (c Card) masked() string {
	return fmt.Sprintf("card %s exp %s/%s", c.Number.masked(), c.ExpirationMonth, c.ExpirationYear)
}

// goString is the %#v form; it masks like masked.
func (c Card) goString() string {
	return fmt.Sprintf("payonce.Card{Number:%q, HolderName:%q, ExpirationMonth:%q, ExpirationYear:%q, CVV:\"***\"}",
		c.Number.masked(), c.HolderName, c.ExpirationMonth, c.ExpirationYear)
}

// Format masks the card for every fmt verb (%v, %+v, %#v, %s, %q).
func (c Card) Format(f fmt.State, verb rune) {
	switch {
	case verb == 'v' && f.Flag('#'):
		_, _ = f.Write([]byte(c.goString()))
	case verb == 'v' && f.Flag('+'):
		fmt.Fprintf(f, "{Number:%s HolderName:%s ExpirationMonth:%s ExpirationYear:%s CVV:***}",
			c.Number.masked(), c.HolderName, c.ExpirationMonth, c.ExpirationYear)
	default:
		formatMasked(f, verb, c.masked())
	}
}

// cardJSON is the masked JSON form of a Card: no CVV.
type cardJSON struct {
	Number          string `json:"number"`
	HolderName      string `json:"holder_name"`
	ExpirationMonth string `json:"expiration_month"`
	ExpirationYear  string `json:"expiration_year"`
}

// MarshalJSON is the masked form: the number as "************1111", the
// holder and expiry, and no CVV. A card in a job payload, a JSON log line
// or a stored struct cannot be charged from it.
func (c Card) MarshalJSON() ([]byte, error) {
	return json.Marshal(cardJSON{Number: c.Number.masked(), HolderName: c.HolderName,
		ExpirationMonth: c.ExpirationMonth, ExpirationYear: c.ExpirationYear})
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
