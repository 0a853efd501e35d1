package payonce

import (
	"context"
	"errors"
	"testing"

	"github.com/payonce/payonce/internal/corekit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestKindNames(t *testing.T) {
	kinds := []error{ErrKeyRequired, corekit.ErrKeyTooShort, corekit.ErrKeyTooLong, corekit.ErrKeyInvalidChars,
		ErrIdempotencyConflict, corekit.ErrInsufficientBalance, ErrUnauthorized, ErrForbidden,
		ErrNotFound, corekit.ErrInvalidState, ErrInvalidRequest, ErrRateLimited, ErrServer,
		corekit.ErrSignatureInvalid, corekit.ErrTimestampExpired, corekit.ErrNonceReplayed, corekit.ErrCardDeclined,
		corekit.ErrChargeFailed, ErrKeyExpired, ErrRetriesExhausted, corekit.ErrRetryBudgetExhausted,
		ErrTransport, ErrMalformedResponse, ErrInvalidAmount, ErrInvalidCard,
		ErrInvalidConfig, ErrRedirectRefused, ErrSignerTemporary, ErrOutcomeUnknown, ErrJournal, context.Canceled, context.DeadlineExceeded}
	names := map[string]bool{}
	for _, k := range kinds {
		n := corekit.KindName(k)
		require.NotEmpty(t, n, k.Error())
		assert.False(t, names[n], "duplicate name %s", n)
		names[n] = true
		assert.Equal(t, k, corekit.KindByName(n))
	}
	assert.Empty(t, corekit.KindName(errors.New("other")))
	assert.Nil(t, corekit.KindByName("no_such_kind"))
	assert.Equal(t, "card_declined", corekit.KindName(corekit.ErrCardDeclined), "names are stable")
}
