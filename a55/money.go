package a55

import (
	"fmt"
	"strconv"

	"github.com/payonce/payonce"
)

// maxMinor bounds an amount the client sends, in payonce.Amount's minor
// units: 10^15 whole units, as payonce.ParseAmount does.
const maxMinor = 100_000_000_000_000_000

// chargeCurrencies are the currencies of A55's create-charge page, in
// its order.
var chargeCurrencies = []payonce.Currency{payonce.BRL, payonce.MXN, payonce.CLP, payonce.COP, payonce.PEN, payonce.ARS, payonce.USD}

// chargeCurrencyList names chargeCurrencies for an error.
const chargeCurrencyList = "BRL, MXN, CLP, COP, PEN, ARS or USD"

// decimalsOf is the number of decimals A55 takes for c: 2, or 0 for CLP
// and COP; ok is false for a currency outside create-charge's list.
func decimalsOf(c payonce.Currency) (int, bool) {
	for _, k := range chargeCurrencies {
		if c == k {
			return c.Decimals()
		}
	}
	return 0, false
}

// checkAmount checks an amount of field in currency c (whose decimals are
// dec): above zero unless zeroOK, at most maxMinor, and whole when c has
// no decimals (100.50 CLP is refused, never rounded).
func checkAmount(field string, a payonce.Amount, c payonce.Currency, dec int, zeroOK bool) error {
	switch {
	case a.IsZero() && !zeroOK:
		return &payonce.ValidationError{Field: field, Reason: "must be greater than 0", Err: payonce.ErrInvalidAmount}
	case a.Minor() > maxMinor:
		return &payonce.ValidationError{Field: field, Reason: "too large", Err: payonce.ErrInvalidAmount}
	case dec == 0 && a.Minor()%100 != 0:
		return &payonce.ValidationError{Field: field, Reason: fmt.Sprintf("%s has no decimals: %s cannot be charged (never rounded)", c, a),
			Err: payonce.ErrInvalidAmount}
	}
	return nil
}

// appendNumber appends a as a JSON number with dec decimals (0 or 2),
// written from its digits, never through a float: 100.50, 100 (CLP).
// An amount in a currency of no decimals has none (checkAmount).
func appendNumber(b []byte, a payonce.Amount, dec int) []byte {
	m := a.Minor()
	b = strconv.AppendInt(b, m/100, 10)
	if dec > 0 {
		f := m % 100
		b = append(b, '.', byte('0'+f/10), byte('0'+f%10))
	}
	return b
}

// appendExact appends a as the shortest JSON number that is exactly a:
// 10.5, 10, 10.05. It is how an amount is written where the request names
// no currency (a refund, a capture or a list filter without one): the
// same number in any currency's decimals.
func appendExact(b []byte, a payonce.Amount) []byte {
	m := a.Minor()
	b = strconv.AppendInt(b, m/100, 10)
	switch f := m % 100; {
	case f == 0:
	case f%10 == 0:
		b = append(b, '.', byte('0'+f/10))
	default:
		b = append(b, '.', byte('0'+f/10), byte('0'+f%10))
	}
	return b
}

// totalOf is value x count, exact: an error when count is below 1 or the
// total would pass maxMinor.
func totalOf(value payonce.Amount, count int) (payonce.Amount, error) {
	if count < 1 {
		return payonce.Amount{}, &payonce.ValidationError{Field: "installment_count", Reason: "must be at least 1", Err: payonce.ErrInvalidRequest}
	}
	if value.Minor() > maxMinor/int64(count) {
		return payonce.Amount{}, &payonce.ValidationError{Field: "installment_value", Reason: "total too large", Err: payonce.ErrInvalidAmount}
	}
	return payonce.AmountFromMinor(value.Minor() * int64(count))
}

// SplitTotal returns the installment_value that charges total in count
// equal instalments of currency: total / count, exact in the currency's
// decimals, or a *payonce.ValidationError (payonce.ErrInvalidAmount) that
// names the total, the count and the nearest totals that split, and
// never a rounded value. A55 takes the value of one instalment and the
// count, not the total:
//
//	v, err := a55.SplitTotal(total, 3, payonce.BRL) // 300.00 BRL: 100.00 each
//	req.InstallmentValue, req.InstallmentCount = v, 3
func SplitTotal(total payonce.Amount, count int, currency payonce.Currency) (payonce.Amount, error) {
	dec, ok := decimalsOf(currency)
	switch {
	case !ok:
		return payonce.Amount{}, invalid("currency", "want "+chargeCurrencyList)
	case count < 1:
		return payonce.Amount{}, &payonce.ValidationError{Field: "installment_count", Reason: "must be at least 1", Err: payonce.ErrInvalidRequest}
	}
	if err := checkAmount("installment_value", total, currency, dec, false); err != nil {
		return payonce.Amount{}, err
	}
	step := int64(1) // the currency's smallest unit, in minor units
	if dec == 0 {
		step = 100
	}
	per := int64(count) * step
	if total.Minor()%per != 0 {
		near := ""
		if lo := total.Minor() / per * per; lo > 0 {
			a, _ := payonce.AmountFromMinor(lo)
			near = a.String() + " or "
		}
		hi, _ := payonce.AmountFromMinor((total.Minor()/per + 1) * per)
		return payonce.Amount{}, &payonce.ValidationError{Field: "installment_value", Err: payonce.ErrInvalidAmount,
			Reason: fmt.Sprintf("a total of %s %s does not split into %d equal instalments (installment_count) in %s's %d decimals: %s%s would",
				total, currency, count, currency, dec, near, hi)}
	}
	return payonce.AmountFromMinor(total.Minor() / int64(count))
}
