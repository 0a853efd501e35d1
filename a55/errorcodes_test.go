package a55

import (
	"github.com/payonce/payonce/internal/corekit"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/payonce/payonce"
)

// A55's error codes map to a sentinel.
func TestCodeKindTable(t *testing.T) {
	table := map[string]error{
		"RATE_LIMIT_EXCEEDED":       payonce.ErrRateLimited,
		"CARD_DECLINED":             ErrCardDeclined,
		"INSUFFICIENT_FUNDS":        ErrCardDeclined,
		"PROCESSING_ERROR":          ErrChargeFailed,
		"CANCEL_NOT_ALLOWED":        ErrInvalidState,
		"IDEMPOTENCY_KEY_CONFLICT":  payonce.ErrIdempotencyConflict,
		"IDEMPOTENCY_KEY_TOO_SHORT": corekit.ErrKeyTooShort,
		"AMOUNT_INVALID":            payonce.ErrInvalidRequest,
	}
	for code, want := range table {
		assert.Equal(t, want, codeKind(code), code)
	}
	assert.Nil(t, codeKind("something_new"))
}
