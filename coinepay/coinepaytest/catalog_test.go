package coinepaytest_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/coinepay/coinepaytest"
)

// The SDK's amount and the fake's own meet through the wire form: every
// amount both read crosses unchanged, and one the fake cannot hold is
// refused naming the option, never cut.
func TestAmountsCrossToTheFakeUnchanged(t *testing.T) {
	for _, s := range []string{"0.00", "0.01", "10.50", "999999999999999.99"} {
		srv := coinepaytest.New(t, coinepaytest.WithBalance(amt(s)))
		assert.Equal(t, s, srv.Balance(srv.APIKey()).String())
		srv.SetBalance(srv.APIKey(), amt("1.05"))
		assert.Equal(t, "1.05", srv.Balance(srv.APIKey()).String())
	}
	huge, err := payonce.AmountFromMinor(100_000_000_000_000_000) // 1000000000000000.00: one digit past the wire's 15
	require.NoError(t, err)
	assert.PanicsWithValue(t, "invalid configuration: coinepaytest.WithBalance(1000000000000000.00): invalid amount: too large",
		func() { coinepaytest.NewServer(coinepaytest.WithBalance(huge)) })
	assert.PanicsWithValue(t, "invalid configuration: coinepaytest.WithFee(1000000000000000.00): invalid amount: too large",
		func() { coinepaytest.NewServer(coinepaytest.WithFee(huge)) })
	assert.PanicsWithValue(t, `invalid configuration: coinepaytest.WithCatalog: package "h"/"p": invalid amount: too large`,
		func() {
			coinepaytest.NewServer(coinepaytest.WithCatalog(coinepaytest.Package{HeaderID: "h", PackageID: "p", Fee: huge}))
		})
	srv := coinepaytest.New(t)
	assert.PanicsWithValue(t, `coinepaytest: SetBalance("demo-key", 1000000000000000.00): invalid amount: too large`,
		func() { srv.SetBalance(srv.APIKey(), huge) })
	assert.Equal(t, "1000.00", srv.Balance(srv.APIKey()).String(), "a refused balance changes nothing")
}
