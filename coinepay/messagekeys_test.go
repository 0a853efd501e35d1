package coinepay

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/payonce/payonce"
)

// Every message_key of the Coinepay document and of the project's signing
// scheme maps to a sentinel.
func TestKindForMessageKeyTable(t *testing.T) {
	table := map[string]error{
		"openapi_idempotency_key_required":      payonce.ErrKeyRequired,
		"openapi_idempotency_key_too_long":      payonce.ErrKeyTooLong,
		"openapi_idempotency_key_invalid_chars": payonce.ErrKeyInvalidChars,
		"openapi_idempotency_key_conflict":      payonce.ErrIdempotencyConflict,
		"insufficient_balance":                  ErrInsufficientBalance,
		"openapi_signature_required":            ErrSignatureInvalid,
		"openapi_signature_invalid":             ErrSignatureInvalid,
		"openapi_api_key_invalid":               payonce.ErrUnauthorized,
		"openapi_timestamp_expired":             ErrTimestampExpired,
		"openapi_nonce_replayed":                ErrNonceReplayed,
	}
	for key, want := range table {
		assert.Equal(t, want, kindForMessageKey(key), key)
	}
	assert.Nil(t, kindForMessageKey("something_new"))
}

// A message_key decides whether a failure is final for the key: it is
// read without regard to case, so INSUFFICIENT_BALANCE stays the failure
// a top-up mends, never a final refusal of the request.
func TestKindForMessageKeyInAnyCase(t *testing.T) {
	for _, key := range []string{"INSUFFICIENT_BALANCE", "Insufficient_Balance", " insufficient_balance "} {
		assert.Equal(t, ErrInsufficientBalance, kindForMessageKey(key), key)
		e := envelopeFailure(400, key, "no funds", "")
		assert.False(t, provider().FinalForKey(e.(*payonce.APIError)), key)
	}
	assert.Equal(t, payonce.ErrKeyTooLong, kindForMessageKey("OPENAPI_IDEMPOTENCY_KEY_TOO_LONG"))
}
