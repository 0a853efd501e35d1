package coinepay

import (
	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/corekit"
)

// kindForMessageKey maps a Coinepay message_key to its sentinel, or nil
// for a key it does not know (the HTTP status then decides).
//
// Sources: the Coinepay idempotency document (openapi_idempotency_key_*,
// insufficient_balance), the project's Coinepay signing scheme
// (openapi_signature_*, openapi_timestamp_expired, openapi_nonce_replayed,
// openapi_api_key_invalid) and the keys the card API answers.
func kindForMessageKey(key string) error {
	switch corekit.StatusKey(key) {
	case "openapi_idempotency_key_required":
		return payonce.ErrKeyRequired
	case "openapi_idempotency_key_too_long":
		return payonce.ErrKeyTooLong
	case "openapi_idempotency_key_too_short":
		return payonce.ErrKeyTooShort
	case "openapi_idempotency_key_invalid_chars":
		return payonce.ErrKeyInvalidChars
	case "openapi_idempotency_key_conflict":
		return payonce.ErrIdempotencyConflict
	case "insufficient_balance":
		return ErrInsufficientBalance
	case CodeSignatureRequired, CodeSignatureInvalid:
		return ErrSignatureInvalid
	case CodeAPIKeyInvalid:
		return payonce.ErrUnauthorized
	case CodeTimestampExpired:
		return ErrTimestampExpired
	case CodeNonceReplayed:
		return ErrNonceReplayed
	case "openapi_not_found", "openapi_package_not_found":
		return payonce.ErrNotFound
	case "openapi_rate_limited":
		return payonce.ErrRateLimited
	case "openapi_invalid_request", "openapi_invalid_json", "openapi_method_not_allowed", "openapi_body_too_large":
		return payonce.ErrInvalidRequest
	case "openapi_internal_error":
		return payonce.ErrServer
	}
	return nil
}
