package coinepay

import "github.com/payonce/payonce/internal/corekit"

// Errors of Coinepay's answers, its signed requests and its settle lookup, besides
// payonce's. Every answer is an *payonce.APIError whose Kind is one of
// them or of payonce's.
var (
	// ErrInsufficientBalance: the account cannot pay for the operation
	// (insufficient_balance). Coinepay does not store this answer, so the
	// same key and body succeed once the balance is topped up.
	ErrInsufficientBalance = corekit.ErrInsufficientBalance
	// ErrSignatureInvalid: the request signature was missing or wrong
	// (openapi_signature_invalid).
	ErrSignatureInvalid = corekit.ErrSignatureInvalid
	// ErrTimestampExpired: the signed timestamp was outside the server's
	// window (openapi_timestamp_expired).
	ErrTimestampExpired = corekit.ErrTimestampExpired
	// ErrNonceReplayed: the server saw this nonce before
	// (openapi_nonce_replayed).
	ErrNonceReplayed = corekit.ErrNonceReplayed
	// ErrLookupAmbiguous: more than one card at Coinepay could be the
	// entry's (SettleApply). The lookup never picks one: settle by hand
	// (payonce.Client.Settle) once you know which, if any, is yours.
	ErrLookupAmbiguous = corekit.ErrLookupAmbiguous
	// ErrLookupNotFound: no card at Coinepay matches the entry, and the
	// lookup was not allowed to conclude that none was made (or its window
	// is not over yet).
	ErrLookupNotFound = corekit.ErrLookupNotFound
)
