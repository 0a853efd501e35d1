package a55

import (
	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/corekit"
)

// codeKind maps an A55 error code to its sentinel, or nil for a code it
// does not know (the HTTP status then decides). Source: A55's public
// error codes (https://docs.a55.tech).
func codeKind(code string) error {
	switch code {
	case "IDEMPOTENCY_KEY_REQUIRED":
		return payonce.ErrKeyRequired
	case "IDEMPOTENCY_KEY_TOO_LONG":
		return corekit.ErrKeyTooLong
	case "IDEMPOTENCY_KEY_TOO_SHORT":
		return corekit.ErrKeyTooShort
	case "IDEMPOTENCY_KEY_INVALID":
		return corekit.ErrKeyInvalidChars
	case "IDEMPOTENCY_KEY_CONFLICT", "DUPLICATE_REQUEST":
		return payonce.ErrIdempotencyConflict
	case "UNAUTHORIZED", "INVALID_TOKEN":
		return payonce.ErrUnauthorized
	case "FORBIDDEN":
		return payonce.ErrForbidden
	case "NOT_FOUND":
		return payonce.ErrNotFound
	case "RATE_LIMIT_EXCEEDED":
		return payonce.ErrRateLimited
	case "CARD_DECLINED", "INSUFFICIENT_FUNDS", "INVALID_CARD", "EXPIRED_CARD",
		"INVALID_CVC", "3DS_REQUIRED", "3DS_FAILED", "FRAUD_SUSPECTED":
		return ErrCardDeclined
	case "PROCESSING_ERROR", "TIMEOUT":
		return ErrChargeFailed
	case "CURRENCY_NOT_SUPPORTED", "AMOUNT_INVALID", "VALIDATION_ERROR", "INVALID_REQUEST",
		"INVALID_JSON", "METHOD_NOT_ALLOWED", "PAYLOAD_TOO_LARGE":
		return payonce.ErrInvalidRequest
	case "CANCEL_NOT_ALLOWED", "CAPTURE_NOT_ALLOWED", "REFUND_NOT_ALLOWED", "REFUND_EXCEEDS_AMOUNT",
		"CHARGE_ALREADY_PAID", "CHARGE_ALREADY_CANCELED", "CHARGE_ALREADY_SETTLED", "INVALID_STATE":
		return ErrInvalidState
	case "INTERNAL_ERROR":
		return payonce.ErrServer
	}
	return nil
}
