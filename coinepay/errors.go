package coinepay

import "github.com/payonce/payonce"

// Errors of Coinepay's answers, its signed requests and its settle lookup, besides
// payonce's. Every answer is an *payonce.APIError whose Kind is one of
// them or of payonce's.
var (
	// ErrInsufficientBalance: the account cannot pay for the operation
	// (insufficient_balance). Coinepay does not store this answer, so the
	// same key and body succeed once the balance is topped up.
	ErrInsufficientBalance = payonce.NewResumableKind("insufficient_balance", "insufficient balance")
	// ErrSignatureInvalid: the request signature was missing or wrong
	// (openapi_signature_invalid).
	ErrSignatureInvalid = payonce.NewKind("signature_invalid", "signature rejected")
	// ErrTimestampExpired: the signed timestamp was outside the server's
	// window (openapi_timestamp_expired).
	ErrTimestampExpired = payonce.NewKind("timestamp_expired", "signature timestamp expired")
	// ErrNonceReplayed: the server saw this nonce before
	// (openapi_nonce_replayed).
	ErrNonceReplayed = payonce.NewKind("nonce_replayed", "signature nonce replayed")
)
