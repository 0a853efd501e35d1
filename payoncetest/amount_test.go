package payoncetest_test

import (
	"testing"

	"github.com/payonce/payonce/payoncetest"
	"github.com/stretchr/testify/assert"
)

func TestAmount(t *testing.T) {
	assert.Equal(t, "100.50", payoncetest.Amount("100.5").String())
	assert.PanicsWithValue(t, `payoncetest: Amount("1.234"): invalid amount: want a decimal string with at most two decimals, like "100.00"`,
		func() { payoncetest.Amount("1.234") })
	assert.Panics(t, func() { payoncetest.Amount("") })
}
