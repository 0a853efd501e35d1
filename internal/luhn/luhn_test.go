package luhn

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestLuhn(t *testing.T) {
	for _, n := range []string{"4111111111111111", "4000000000000002", "4000000000000069", "5555555555554444", "378282246310005"} {
		assert.True(t, Valid(n), n)
	}
	for _, n := range []string{"", "4111111111111112", "abc", "4111-1111"} {
		assert.False(t, Valid(n), n)
	}
}
