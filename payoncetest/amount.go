package payoncetest

import (
	"fmt"

	"github.com/payonce/payonce"
)

// Amount is payonce.ParseAmount for a test's literals: it panics, with a
// message naming s and the reason, when s is not a valid amount. Never use
// it on input from users or servers.
func Amount(s string) payonce.Amount {
	a, err := payonce.ParseAmount(s)
	if err != nil {
		panic(fmt.Sprintf("payoncetest: Amount(%q): %v", s, err))
	}
	return a
}
