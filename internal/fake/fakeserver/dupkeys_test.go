package fakeserver

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Go decodes object keys case-insensitively, the last one winning, while
// the fingerprint sorts them: a body with two keys that differ only in
// case would be one payload for the fingerprint and two for the handler.
func TestDuplicateKeyIsFound(t *testing.T) {
	for _, body := range []string{
		`{"amount":1,"amount":2}`,
		`{"Amount":1,"amount":2}`,
		`{"amount":2,"Amount":1}`,
		`{"card":{"number":"1","NUMBER":"2"}}`,
		`[{"a":1},{"b":[{"x":1,"X":2}]}]`,
		`{"a":{"b":{"c":{"d":{"e":1,"E":2}}}}}`,
		"{\"\u212a\":1,\"k\":2}", // KELVIN SIGN folds to k
		`{"a\u0062":1,"ab":2}`,   // escapes decode to the same key
	} {
		assert.True(t, duplicateKey([]byte(body)), body)
	}
	for _, body := range []string{
		`{"amount":1,"currency":"BRL"}`,
		`{"a":{"x":1},"b":{"x":1}}`,
		`[{"a":1},{"a":2}]`,
		`{"a":"a","b":"a"}`,
		`{"a":["a","a"]}`,
		`{"a":{"a":{"a":1}}}`,
		`not json`,
		`{"a":1`,
		``,
		`"amount"`,
		strings.Repeat("[", 20000) + strings.Repeat("]", 20000),
	} {
		assert.False(t, duplicateKey([]byte(body)), body)
	}
}
