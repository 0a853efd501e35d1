package coinepay

import (
	"github.com/payonce/payonce"
)

// KeyCharset is the URL-safe charset the project accepts for
// Coinepay keys; the colon is in it because the document's own task-queue
// example is "openapi:apply:{task_id}".
const KeyCharset = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:"

// keyRules are Coinepay's rules: required on card/apply and
// card/recharge, at most 128 URL-safe characters, a 24 h window.
func keyRules() payonce.KeyRules {
	return payonce.KeyRules{Provider: "coinepay", Required: true, MaxLen: 128, Charset: KeyCharset, Window: payonce.DefaultKeyWindow}
}
