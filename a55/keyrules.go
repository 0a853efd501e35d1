package a55

import (
	"github.com/payonce/payonce"
)

// keyRules are A55's rules: 16 to 128 characters, a 24 h window. The
// guide recommends UUID v4; the charset rule (printable ASCII, no spaces) is
// a project assumption. https://docs.a55.tech (Idempotency guide)
func keyRules() payonce.KeyRules {
	return payonce.KeyRules{Provider: "a55", MinLen: 16, MaxLen: 128, Window: payonce.DefaultKeyWindow}
}
