package chaos

import (
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A race report is seen whole or split across writes, and stays seen
// after the tail has dropped it.
func TestTailBufferSeesARaceReport(t *testing.T) {
	b := &tailBuffer{max: 16}
	_, _ = io.WriteString(b, "clean output\n")
	assert.False(t, b.sawRace())
	_, _ = io.WriteString(b, "==================\nWARNING: DA")
	assert.False(t, b.sawRace())
	_, _ = io.WriteString(b, "TA RACE\nRead at 0x00c000012345")
	assert.True(t, b.sawRace())
	_, _ = io.WriteString(b, strings.Repeat("later output\n", 10))
	assert.NotContains(t, b.String(), raceWarning)
	assert.True(t, b.sawRace(), "the tail dropped the report, not the fact")
}
