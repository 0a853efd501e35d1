package payonce

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The memory of first uses holds at most its limit, forgetting the first
// remembered first, whatever number of keys goes through it.
func TestKeyMemoryStaysBounded(t *testing.T) {
	const limit = 64
	m := newKeyMemory(limit)
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 10 * limit {
		m.firstUse(fmt.Sprintf("key-%04d", i), t0.Add(time.Duration(i)*time.Second))
		require.LessOrEqual(t, m.len(), limit)
	}
	assert.Equal(t, limit, m.len())
	assert.Len(t, m.ring, limit, "the ring never grows past the limit")
	last := fmt.Sprintf("key-%04d", 10*limit-1)
	assert.Equal(t, t0.Add(time.Duration(10*limit-1)*time.Second), m.firstUse(last, t0.Add(time.Hour*99)), "a remembered key keeps its first use")
	now := t0.Add(1000 * time.Hour)
	assert.Equal(t, now, m.firstUse("key-0000", now), "the oldest was forgotten and counts as new")
}

// The client's memory has the documented cap.
func TestClientKeyMemoryCap(t *testing.T) {
	c, err := NewClient(WithBaseURL("https://example.test"))
	require.NoError(t, err)
	assert.Equal(t, MaxRememberedKeys, c.keys.limit)
}
