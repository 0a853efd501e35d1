package fakeserver

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The primary credential is in the table and wins over an extra pair that
// names the same identifier; every other extra pair is kept.
func TestCredentialsPrimaryWins(t *testing.T) {
	got := Credentials("demo", "primary", [][2]string{{"demo", "extra"}, {"other", "s2"}})
	assert.Equal(t, map[string]string{"demo": "primary", "other": "s2"}, got)
}
