package payonce

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Bounds of the keys OperationKey builds: within both providers' rules
// (A55: 16 to 128 characters; Coinepay: at most 128 URL-safe characters).
const (
	operationKeyMinLen = 16
	operationKeyMaxLen = 128
	// operationKeyHashLen is the length of the hash suffix: 32 hex digits,
	// the first 128 bits of SHA-256 of the joined parts.
	operationKeyHashLen = 32
)

// OperationKey builds the Idempotency-Key of one business operation from
// the parts that name it, so that every run of the operation (a retry in a
// new process, a job run again by its queue) sends the same key:
//
//	key, err := payonce.OperationKey("order", orderID, "payment")
//	if err != nil {
//		return err // an empty part: no key could tell this operation apart
//	}
//	ch, err := client.Charges.Create(ctx, req, payonce.WithIdempotencyKey(key),
//		payonce.WithKeyCreated(order.CreatedAt)) // its age, in any process
//
// Without WithKeyCreated the client ages the key from its own first use of
// it (MaxRememberedKeys): another process would take it as new, and send
// it after the provider's 24 h window.
//
// The key is valid for both providers' rules (a55.KeyRules and
// coinepay.KeyRules: 16 to 128 characters of A-Z a-z 0-9 - . _ ~ :), and:
//
//   - It is the parts joined with ':' when that already fits: at least 16
//     and at most 128 characters, only A-Z a-z 0-9 - . _ and ':' (no '~').
//     OperationKey("openapi:apply", taskID) is then TaskKey("openapi:apply",
//     taskID), so keys already in use keep their value.
//   - Otherwise it is a readable form of the joined parts (each character
//     outside that set replaced by '_', cut to fit) followed by '~' and 32
//     hex digits of SHA-256 of the joined parts: "order:1" becomes
//     "order:1~" + 32 hex digits; "pedido:ação" becomes "pedido:a__o~" + 32
//     hex digits.
//
// The same parts always give the same key, and so do parts whose join
// with ':' is the same (("a:b", "c") and ("a", "b:c")); parts whose joins
// differ give different keys (a key of the first form has no '~', one of
// the second ends in a hash of the exact joined bytes).
//
// Parts name the operation, not its payload: two recharges of the same
// amount on the same card are two operations and need parts that differ
// (a recharge ID), not the amount. A part that is empty or only white
// space is refused with a *KeyError wrapping ErrKeyRequired: a missing
// order ID must not give every order one key.
func OperationKey(parts ...string) (string, error) {
	if len(parts) == 0 {
		return "", &KeyError{Rule: "an operation key needs at least one part", Err: ErrKeyRequired}
	}
	for i, p := range parts {
		if strings.TrimSpace(p) == "" {
			return "", &KeyError{Rule: fmt.Sprintf("part %d of the operation key is empty", i+1), Err: ErrKeyRequired}
		}
	}
	joined := strings.Join(parts, ":")
	if len(joined) >= operationKeyMinLen && len(joined) <= operationKeyMaxLen && plainKey(joined) {
		return joined, nil
	}
	sum := sha256.Sum256([]byte(joined))
	var b strings.Builder
	b.Grow(operationKeyMaxLen)
	room := operationKeyMaxLen - 1 - operationKeyHashLen
	for _, r := range joined {
		if b.Len() == room {
			break
		}
		if r < utf8.RuneSelf && plainKeyByte(byte(r)) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	b.WriteByte('~')
	b.WriteString(hex.EncodeToString(sum[:operationKeyHashLen/2]))
	return b.String(), nil
}

// plainKey reports whether s uses only the characters a key of the plain
// form may hold: Coinepay's charset without '~', which marks a hash suffix.
func plainKey(s string) bool {
	for i := 0; i < len(s); i++ {
		if !plainKeyByte(s[i]) {
			return false
		}
	}
	return true
}

// portableKeyChars are the bytes both providers accept in a key (the
// Coinepay charset, coinepay.KeyCharset).
const portableKeyChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:"

func plainKeyByte(c byte) bool {
	return c != '~' && strings.IndexByte(portableKeyChars, c) >= 0
}
