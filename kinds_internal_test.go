package payonce

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestKindNames(t *testing.T) {
	// A provider's own kinds (Provider.Kinds) are found by name too; the
	// names of a55's and coinepay's are asserted in their packages.
	op := &operation{c: &Client{kinds: []error{testErrInsufficientBalance, testErrInvalidState, testErrSignatureInvalid, testErrTimestampExpired, testErrNonceReplayed, testErrCardDeclined, testErrChargeFailed}}}
	kinds := []error{ErrKeyRequired, ErrKeyTooShort, ErrKeyTooLong, ErrKeyInvalidChars,
		ErrIdempotencyConflict, testErrInsufficientBalance, ErrUnauthorized, ErrForbidden,
		ErrNotFound, testErrInvalidState, ErrInvalidRequest, ErrRateLimited, ErrServer,
		testErrSignatureInvalid, testErrTimestampExpired, testErrNonceReplayed, testErrCardDeclined,
		testErrChargeFailed, ErrKeyExpired, ErrRetriesExhausted, ErrRetryBudgetExhausted,
		ErrTransport, ErrMalformedResponse, ErrInvalidAmount, ErrInvalidCard,
		ErrInvalidConfig, ErrRedirectRefused, ErrSignerTemporary, ErrOutcomeUnknown, ErrJournal, context.Canceled, context.DeadlineExceeded}
	names := map[string]bool{}
	for _, k := range kinds {
		n := KindName(k)
		require.NotEmpty(t, n, k.Error())
		assert.False(t, names[n], "duplicate name %s", n)
		names[n] = true
		assert.Equal(t, k, op.c.kindByName(n))
	}
	assert.Empty(t, KindName(errors.New("other")))
	assert.Nil(t, op.c.kindByName("no_such_kind"))
	assert.Equal(t, "key_too_short", KindName(ErrKeyTooShort), "names are stable")
}
