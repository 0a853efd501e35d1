package errortext

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRepeatedPhrase(t *testing.T) {
	assert.Equal(t, "idempotency key too",
		RepeatedPhrase("idempotency key too old to retry safely: post: idempotency key too old to retry safely"))
	assert.Empty(t, RepeatedPhrase("payonce: a55 charges.create: retries exhausted (HTTP 503) [idempotency key k-1, 5 attempt(s)]"))
}

func TestSharesPhrase(t *testing.T) {
	assert.True(t, SharesPhrase("idempotency key reused with a different payload", "Idempotency-Key was already used with a different payload"))
	assert.False(t, SharesPhrase("invalid state for this operation", "the charge was canceled"))
	assert.False(t, SharesPhrase("charge failed", "charge failed"), "fewer than three words")
}
