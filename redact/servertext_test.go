package redact

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Cutting a text never leaves the head of a card number, a JWT or a
// token in clear, whatever the cut point.
func TestCutServerText(t *testing.T) {
	s := "refused card 4111 1111 1111 1111 and eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig token tok_abc"
	for n := 1; n < len(s); n++ {
		got := String(Cut(s, n))
		assert.LessOrEqual(t, len(Cut(s, n)), n+len(textCut))
		assert.NotContains(t, got, "4111 1111", n)
		assert.NotContains(t, got, "eyJhbG", n)
		assert.NotContains(t, got, "tok_", n)
	}
	assert.Equal(t, s, Cut(s, len(s)))
	assert.Equal(t, "日本"+textCut, Cut("日本語", 8), "never half a rune")
}
