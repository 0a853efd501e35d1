package a55_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
)

// The A55 table of failures final for a key: refusals of the body or key
// and the charges A55 decided; everything else leaves the entry pending.
func TestFinalForKey(t *testing.T) {
	final := []error{payonce.ErrInvalidRequest, payonce.ErrNotFound, payonce.ErrInvalidState, payonce.ErrCardDeclined,
		payonce.ErrChargeFailed, payonce.ErrKeyTooShort, payonce.ErrKeyTooLong, payonce.ErrKeyInvalidChars, payonce.ErrKeyRequired}
	open := []error{payonce.ErrServer, payonce.ErrRateLimited, payonce.ErrUnauthorized, payonce.ErrForbidden,
		payonce.ErrIdempotencyConflict, payonce.ErrInsufficientBalance, payonce.ErrMalformedResponse, payonce.ErrRetriesExhausted,
		payonce.ErrTransport}
	var c a55.Codec
	for _, k := range final {
		assert.True(t, c.FinalForKey(&payonce.APIError{Kind: k, StatusCode: 400}), k.Error())
	}
	for _, k := range open {
		assert.False(t, c.FinalForKey(&payonce.APIError{Kind: k, StatusCode: 400}), k.Error())
	}
	assert.False(t, c.FinalForKey(nil))
	assert.True(t, c.FinalForKey(&payonce.APIError{Kind: payonce.ErrRedirectRefused, StatusCode: 307}), "a 307 never ran")
	assert.False(t, c.FinalForKey(&payonce.APIError{Kind: payonce.ErrRedirectRefused, StatusCode: 303,
		Err: &payonce.RedirectError{StatusCode: 303, MayHaveRun: true}}), "a 303 to a POST may have run")
}
