package redact

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Card numbers whose groups are split by punctuation a JSON encoder, a
// template or a locale puts there (an escaped slash, a backslash, an
// Arabic thousands separator, an ampersand, '*', '#', '=', '~'), or by
// more invisible characters than any visible separator run, are masked.
func TestRedactCardNumberPunctuationAndInvisibleRuns(t *testing.T) {
	for _, in := range []string{
		`{"number":"4111\/1111\/1111\/1111"}`,
		`4111\1111\1111\1111`,
		"4111\u066c1111\u066c1111\u066c1111",
		"4111&amp;1111&amp;1111&amp;1111",
		"4111*1111*1111*1111", "4111#1111#1111#1111", "4111=1111=1111=1111", "4111 ~ 1111 ~ 1111 ~ 1111",
		"4111" + strings.Repeat("\u200b", 6) + "1111" + strings.Repeat("\u200b", 6) + "1111" + strings.Repeat("\u200b", 6) + "1111",
		"5555" + strings.Repeat("\u00ad\u200f", 8) + "5555" + strings.Repeat("\u00ad", 9) + "5555 4444",
	} {
		got := String("card " + in + " refused")
		assert.NotContains(t, digitsOf(got), "41111111", "%q -> %q", in, got)
		assert.NotContains(t, digitsOf(got), "55555555", "%q -> %q", in, got)
		assert.Equal(t, got, String(got), "idempotent")
	}
}

// Numbers logged as numbers (an int, a uint64, a float) go through
// redaction like strings: a card number logged as an integer is masked.
func TestRedactingHandlerNumbers(t *testing.T) {
	var buf bytes.Buffer
	l := slog.New(NewHandler(slog.NewJSONHandler(&buf, nil)))
	l.WithGroup("g").Info("m", "n", 4111111111111111, "u", uint64(5555555555554444), "f", 6011000990139424.0,
		"b", []byte("378282246310005"), "amount", 10000, "ms", int64(1764614400001))
	out := buf.String()
	for _, pan := range []string{"4111111111111111", "5555555555554444", "6011000990139424", "378282246310005", "52 49 49"} {
		assert.NotContains(t, out, pan)
	}
	assert.Contains(t, out, `"amount":10000`)
	assert.Contains(t, out, `"ms":1764614400001`)
}
