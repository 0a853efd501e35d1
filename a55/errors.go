package a55

import "github.com/payonce/payonce"

// Errors of A55's answers, besides payonce's: every failure is an
// *payonce.APIError whose Kind is one of them or of payonce's.
var (
	// ErrCardDeclined: the issuer refused the card (CARD_DECLINED and kin).
	ErrCardDeclined = payonce.NewKind("card_declined", "card declined")
	// ErrChargeFailed: the charge ended in an error status A55 decided
	// (return codes 70 and 99, or no decline code).
	ErrChargeFailed = payonce.NewKind("charge_failed", "charge failed")
	// ErrThreeDSRequired: A55 answered 3DS_REQUIRED: the payer must pass
	// the 3DS challenge (ChallengeURL gives its url_3ds, ChargeFromError
	// the charge when the answer names one). An action, not a decline
	// (it never matches ErrCardDeclined); final for the key, since the
	// same body is answered the same: ask for the challenge, or send the
	// charge again with threeds_authentication under a new reference.
	ErrThreeDSRequired = payonce.NewKind("three_ds_required", "3DS challenge required")
	// ErrInvalidState: a 409 that is not a key conflict: the charge cannot
	// make this move (already paid, canceled or settled).
	ErrInvalidState = payonce.NewKind("invalid_state", "invalid state for this operation")
)
