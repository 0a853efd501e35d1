package payoncetest_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce/payoncetest"
)

// The shared types print their values with %+v, never an address (a
// Coinepay attempt's SignatureValid was a *bool and printed as
// 0xc000...).
func TestPublicTypesPrintWell(t *testing.T) {
	forEach(t, func(t *testing.T, p provider) {
		f := p.start(t)
		_, _, err := f.op()
		require.NoError(t, err)
		reqs := f.Requests()
		require.NotEmpty(t, reqs)
		for _, v := range []any{reqs, reqs[0], f.Ledger().Operations(), f.Stats(), f.Ledger(), f.Clock(),
			payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Count: 1}} {
			out := fmt.Sprintf("%+v", v)
			assert.NotContains(t, out, "0x", out)
		}
		assert.Equal(t, "payoncetest.Ledger{1 operation}", fmt.Sprintf("%+v", f.Ledger()))
		assert.Contains(t, fmt.Sprintf("%v", f.Clock()), "payoncetest.Clock{20")
		if p.name == "coinepaytest" {
			assert.Contains(t, fmt.Sprintf("%+v", reqs[len(reqs)-1]), "SignatureChecked:true SignatureValid:true")
		}
	})
}
