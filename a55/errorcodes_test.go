package a55

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/payonce/payonce"
)

// A55's error codes map to a sentinel.
func TestCodeKindTable(t *testing.T) {
	table := map[string]error{
		"RATE_LIMIT_EXCEEDED":       payonce.ErrRateLimited,
		"CARD_DECLINED":             payonce.ErrCardDeclined,
		"INSUFFICIENT_FUNDS":        payonce.ErrCardDeclined,
		"PROCESSING_ERROR":          payonce.ErrChargeFailed,
		"CANCEL_NOT_ALLOWED":        payonce.ErrInvalidState,
		"IDEMPOTENCY_KEY_CONFLICT":  payonce.ErrIdempotencyConflict,
		"IDEMPOTENCY_KEY_TOO_SHORT": payonce.ErrKeyTooShort,
		"AMOUNT_INVALID":            payonce.ErrInvalidRequest,
	}
	for code, want := range table {
		assert.Equal(t, want, codeKind(code), code)
	}
	assert.Nil(t, codeKind("something_new"))
}
