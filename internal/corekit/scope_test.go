package corekit

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Printable refuses what a terminal or a log would obey rather than show;
// text of any script, emoji and joiners pass.
func TestPrintable(t *testing.T) {
	for _, s := range []string{"order-42/attempt-1", "pedido-ç-中文", "🙂 👩‍💻", "", "a b"} {
		assert.True(t, Printable(s), "%q", s)
	}
	for _, s := range []string{"a\x1b[31m", "a\x07", "a\rb", "a\nb", "a\x7f", "a\u0085", "a\u009b", "a\u202eb", "a\u2066b",
		"a\u200fb", "a\u061cb", "a\u2028b", "a\xff", "é\x1b"} {
		assert.False(t, Printable(s), "%q", s)
	}
	assert.Equal(t, "empty", NameProblem(""))
	assert.Contains(t, NameProblem(strings.Repeat("a", MaxReferenceLen+1)), "longer than")
	assert.Contains(t, NameProblem("o-1\u202e"), "bidirectional")
	assert.Empty(t, NameProblem("o-1"))
}
