package a55

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
)

// A total splits into equal instalments exactly, in the currency's
// decimals, or is refused naming the total and the count: never rounded.
func TestSplitTotal(t *testing.T) {
	for _, tc := range []struct {
		total    string
		count    int
		currency payonce.Currency
		want     string
	}{
		{"300.00", 3, payonce.BRL, "100.00"},
		{"100.00", 4, payonce.BRL, "25.00"},
		{"0.12", 12, payonce.USD, "0.01"},
		{"99", 3, payonce.CLP, "33.00"},
		{"150", 1, payonce.COP, "150.00"},
	} {
		v, err := SplitTotal(mustAmount(tc.total), tc.count, tc.currency)
		require.NoError(t, err, tc)
		assert.Equal(t, tc.want, v.String(), tc)
		back, err := totalOf(v, tc.count)
		require.NoError(t, err)
		assert.Equal(t, mustAmount(tc.total), back, "the split multiplies back to the total")
	}
	for _, tc := range []struct {
		total    string
		count    int
		currency payonce.Currency
		field    string
		text     string
	}{
		{"100.00", 3, payonce.BRL, "installment_value", "a total of 100.00 BRL does not split into 3 equal instalments (installment_count) in BRL's 2 decimals: 99.99 or 100.02 would"},
		{"100", 3, payonce.CLP, "installment_value", "a total of 100.00 CLP does not split into 3 equal instalments (installment_count) in CLP's 0 decimals: 99.00 or 102.00 would"},
		{"0.01", 2, payonce.BRL, "installment_value", "0.02 would"},
		{"100.5", 1, payonce.CLP, "installment_value", "CLP has no decimals"},
		{"100", 0, payonce.BRL, "installment_count", "at least 1"},
		{"100", 1, "EUR", "currency", "want BRL"},
		{"0", 1, payonce.BRL, "installment_value", "greater than 0"},
	} {
		_, err := SplitTotal(mustAmount(tc.total), tc.count, tc.currency)
		var ve *payonce.ValidationError
		require.True(t, errors.As(err, &ve), "%v", tc)
		assert.Equal(t, tc.field, ve.Field, tc)
		assert.Contains(t, ve.Error(), tc.text, tc)
		assert.ErrorIs(t, err, payonce.ErrInvalidRequest)
	}
}

// A request's and a charge's Total is the instalment's value times the
// count, exact.
func TestTotal(t *testing.T) {
	r := refCharge()
	r.InstallmentValue, r.InstallmentCount = mustAmount("33.33"), 3
	total, err := r.Total()
	require.NoError(t, err)
	assert.Equal(t, "99.99", total.String())
	r.InstallmentCount = 0
	_, err = r.Total()
	assert.ErrorIs(t, err, payonce.ErrInvalidRequest)
	big, err := payonce.AmountFromMinor(maxMinor)
	require.NoError(t, err)
	r.InstallmentValue, r.InstallmentCount = big, 2
	_, err = r.Total()
	assert.ErrorIs(t, err, payonce.ErrInvalidAmount, "past the bound: refused, never wrapped")
	ch := Charge{InstallmentValue: mustAmount("10.00"), InstallmentCount: 12}
	total, err = ch.Total()
	require.NoError(t, err)
	assert.Equal(t, "120.00", total.String())
}

// Numbers are written from their digits: in the currency's decimals, or
// the shortest exact form where no currency is known.
func TestAppendNumber(t *testing.T) {
	for in, want := range map[string][2]string{
		"100":    {"100.00", "100"},
		"100.5":  {"100.50", "100.5"},
		"100.05": {"100.05", "100.05"},
		"0.01":   {"0.01", "0.01"},
		"0":      {"0.00", "0"},
	} {
		a := mustAmount(in)
		assert.Equal(t, want[0], string(appendNumber(nil, a, 2)), in)
		assert.Equal(t, want[1], string(appendExact(nil, a)), in)
	}
	assert.Equal(t, "15000", string(appendNumber(nil, mustAmount("15000"), 0)))
}
