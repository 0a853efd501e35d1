package coinepaytest_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce/coinepay/coinepaytest"
)

// The public test types print their values with %+v, never an address
// (SignatureValid was a *bool and printed as 0xc000...).
func TestPublicTypesPrintWell(t *testing.T) {
	s := coinepaytest.New(t)
	apply(t, s, "k-print-0001", applyBody)
	reqs := s.Requests()
	require.NotEmpty(t, reqs)
	for _, v := range []any{reqs, reqs[0], s.Ledger().Operations(), s.Stats(), s.Ledger(), s.Clock(),
		coinepaytest.Rule{Fault: coinepaytest.FaultDropAfterCommit, Count: 1}} {
		out := fmt.Sprintf("%+v", v)
		assert.NotContains(t, out, "0x", out)
	}
	out := fmt.Sprintf("%+v", reqs[len(reqs)-1])
	assert.Contains(t, out, "SignatureChecked:true SignatureValid:true")
	assert.Contains(t, fmt.Sprintf("%+v", s.Ledger()), "1 operation")
}
