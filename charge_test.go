package payonce

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseAmount(t *testing.T) {
	good := map[string]int64{"100.00": 10000, "100": 10000, "100.5": 10050, "0.01": 1, "0": 0, "007.10": 710}
	for s, minor := range good {
		a, err := ParseAmount(s)
		require.NoError(t, err, s)
		assert.Equal(t, minor, a.Minor(), s)
	}
	for _, s := range []string{"", "-1.00", "+1", "1.234", "1e3", "1.", ".5", "1,00", "NaN", "12345678901234567", " 1"} {
		_, err := ParseAmount(s)
		assert.ErrorIs(t, err, ErrInvalidAmount, s)
	}
}

func TestAmountJSONNoFloats(t *testing.T) {
	a, err := ParseAmount("100.1")
	require.NoError(t, err)
	b, err := json.Marshal(a)
	require.NoError(t, err)
	assert.Equal(t, `"100.10"`, string(b))
	var v struct{ A, B, C Amount }
	require.NoError(t, json.Unmarshal([]byte(`{"A":"0.30","B":0.1,"C":null}`), &v))
	assert.Equal(t, int64(30), v.A.Minor())
	assert.Equal(t, int64(10), v.B.Minor())
	assert.True(t, v.C.IsZero())
	assert.Error(t, json.Unmarshal([]byte(`{"A":"abc"}`), &v))
	assert.Error(t, json.Unmarshal([]byte(`{"A":1e2}`), &v))
}

func TestAmountArithmetic(t *testing.T) {
	a, _ := ParseAmount("10.00")
	b, _ := ParseAmount("2.50")
	assert.Equal(t, "12.50", a.Add(b).String())
	d, err := a.Sub(b)
	require.NoError(t, err)
	assert.Equal(t, "7.50", d.String())
	_, err = b.Sub(a)
	assert.ErrorIs(t, err, ErrInvalidAmount)
	assert.Equal(t, 1, a.Cmp(b))
	assert.Equal(t, -1, b.Cmp(a))
	assert.Equal(t, 0, a.Cmp(a))
	m, err := AmountFromMinor(199)
	require.NoError(t, err)
	assert.Equal(t, "1.99", m.String())
	_, err = AmountFromMinor(-1)
	assert.ErrorIs(t, err, ErrInvalidAmount)
}

// A server may write more decimals than an amount has: zeros past the
// second decimal read exactly, any other digit is refused, never rounded.
func TestAmountJSONReadsExtraZerosExactly(t *testing.T) {
	for in, minor := range map[string]int64{`150.000`: 15000, `"199.900"`: 19990, `100.50`: 10050, `100`: 10000, `150.0`: 15000} {
		var a Amount
		require.NoError(t, json.Unmarshal([]byte(in), &a), in)
		assert.Equal(t, minor, a.Minor(), in)
	}
	for _, in := range []string{`100.505`, `"0.001"`, `100.0001`} {
		var a Amount
		assert.ErrorIs(t, json.Unmarshal([]byte(in), &a), ErrInvalidAmount, in)
	}
	_, err := ParseAmount("150.000")
	assert.ErrorIs(t, err, ErrInvalidAmount, "a merchant's text keeps the two-decimal rule")
}

// Every currency a provider documents has its minor units; CLP and COP
// have none (A55 takes whole pesos).
func TestCurrencyDecimals(t *testing.T) {
	for c, want := range map[Currency]int{BRL: 2, USD: 2, MXN: 2, PEN: 2, ARS: 2, CLP: 0, COP: 0} {
		got, ok := c.Decimals()
		assert.True(t, ok, c)
		assert.Equal(t, want, got, c)
	}
	for _, c := range []Currency{"", "EUR", "brl", "XXX"} {
		_, ok := c.Decimals()
		assert.False(t, ok, c)
	}
}
