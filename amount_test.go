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
