package fakeserver

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseDecimalReadsCoinepaysWireForm(t *testing.T) {
	for in, want := range map[string]string{
		"0": "0.00", "100": "100.00", "100.5": "100.50", "100.05": "100.05", "007.10": "7.10",
		"999999999999999.99": "999999999999999.99", "0.01": "0.01",
	} {
		d, err := ParseDecimal(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, d.String(), in)
	}
	d, err := ParseDecimal("100.5")
	require.NoError(t, err)
	assert.Equal(t, int64(10050), d.Cents())
}

func TestParseDecimalRefusesWhatIsNoPlainDecimal(t *testing.T) {
	for _, in := range []string{
		"", ".", "1.", ".5", "1.234", "-5", "+5", "1e2", "1E2", " 1", "1 ", "1,00", "0x10", "1.2.3", "NaN", "Inf",
		"1000000000000000", "١٠٠", // 16 whole digits; Arabic-Indic digits
	} {
		_, err := ParseDecimal(in)
		require.ErrorIs(t, err, ErrInvalidDecimal, "%q", in)
	}
	_, err := ParseDecimal("-5")
	assert.EqualError(t, err, `invalid amount: want only digits and one dot, like "100.00"`)
}

func TestDecimalArithmeticIsExact(t *testing.T) {
	a, b := MustDecimal("0.10"), MustDecimal("0.20")
	sum, err := a.Add(b)
	require.NoError(t, err)
	assert.Equal(t, "0.30", sum.String(), "no float: 0.1 + 0.2 is 0.30")
	rest, err := MustDecimal("1000.00").Sub(MustDecimal("26.50"))
	require.NoError(t, err)
	assert.Equal(t, "973.50", rest.String())
	_, err = MustDecimal("1.00").Sub(MustDecimal("1.01"))
	assert.ErrorIs(t, err, ErrInvalidDecimal, "never negative")
	_, err = MustDecimal("999999999999999.99").Add(MustDecimal("0.01"))
	assert.ErrorIs(t, err, ErrInvalidDecimal, "never past what ParseDecimal reads")
	assert.Equal(t, -1, a.Cmp(b))
	assert.Equal(t, 1, b.Cmp(a))
	assert.Equal(t, 0, a.Cmp(MustDecimal("0.1")))
	assert.True(t, Decimal{}.IsZero())
	assert.Equal(t, "0.00", Decimal{}.String())
}

func TestDecimalFromCents(t *testing.T) {
	d, err := DecimalFromCents(10050)
	require.NoError(t, err)
	assert.Equal(t, "100.50", d.String())
	_, err = DecimalFromCents(-1)
	assert.ErrorIs(t, err, ErrInvalidDecimal)
	_, err = DecimalFromCents(maxCents + 1)
	assert.ErrorIs(t, err, ErrInvalidDecimal)
}

func TestMustDecimalPanicsNamingTheInput(t *testing.T) {
	assert.PanicsWithValue(t, `fakeserver: MustDecimal("1.234"): invalid amount: want a decimal with at most two places, like "100.00"`,
		func() { MustDecimal("1.234") })
}

func TestDecimalJSONIsAStringWithTwoPlaces(t *testing.T) {
	b, err := json.Marshal(map[string]Decimal{"amount": MustDecimal("5")})
	require.NoError(t, err)
	assert.JSONEq(t, `{"amount":"5.00"}`, string(b))
	assert.Equal(t, `{"amount":"5.00"}`, string(b))

	var in struct {
		Amount *Decimal `json:"amount"`
	}
	for body, want := range map[string]string{
		`{"amount":"100.00"}`: "100.00", `{"amount":"1\u0030.5"}`: "10.50", `{"amount":100.5}`: "100.50",
	} {
		in.Amount = nil
		require.NoError(t, json.Unmarshal([]byte(body), &in), body)
		require.NotNil(t, in.Amount, body)
		assert.Equal(t, want, in.Amount.String(), body)
	}
	in.Amount = nil
	require.NoError(t, json.Unmarshal([]byte(`{"amount":null}`), &in))
	assert.Nil(t, in.Amount, "null is no amount")
	for _, body := range []string{`{"amount":"-5"}`, `{"amount":1e2}`, `{"amount":"1.234"}`, `{"amount":-1}`, `{"amount":"x"}`} {
		err := json.Unmarshal([]byte(body), &in)
		assert.ErrorIs(t, err, ErrInvalidDecimal, body)
	}
	var bad struct{ Amount Decimal }
	assert.Error(t, json.Unmarshal([]byte(`{"Amount":true}`), &bad))
	assert.Error(t, json.Unmarshal([]byte(`{"Amount":{}}`), &bad))
}
