package a55

import "github.com/payonce/payonce/internal/corekit"

// Errors of A55's answers, besides payonce's: every failure is an
// *payonce.APIError whose Kind is one of them or of payonce's.
var (
	// ErrCardDeclined: the issuer refused the card (CARD_DECLINED and kin).
	ErrCardDeclined = corekit.ErrCardDeclined
	// ErrChargeFailed: the charge ended in an error status A55 decided
	// (return codes 70 and 99, or no decline code).
	ErrChargeFailed = corekit.ErrChargeFailed
	// ErrThreeDSRequired: A55 answered 3DS_REQUIRED: the payer must pass
	// the 3DS challenge (ChallengeURL gives its url_3ds, ChargeFromError
	// the charge when the answer names one). An action, not a decline
	// (it never matches ErrCardDeclined); final for the key, since the
	// same body is answered the same: ask for the challenge, or send the
	// charge again with threeds_authentication under a new reference.
	ErrThreeDSRequired = corekit.ErrThreeDSRequired
	// ErrInvalidState: a 409 that is not a key conflict: the charge cannot
	// make this move (already paid, canceled or settled).
	ErrInvalidState = corekit.ErrInvalidState
)

// Errors of a settle lookup (ChargesService.SettleCreate): A55's records
// did not tell what happened, so nothing was recorded and the entry stays
// pending.
var (
	// ErrLookupAmbiguous: more than one charge at A55 could be the
	// entry's. The lookup never picks one: settle by hand
	// (payonce.Client.Settle) once you know which, if any, is yours.
	ErrLookupAmbiguous = corekit.ErrLookupAmbiguous
	// ErrLookupNotFound: no charge at A55 matches the entry, and the
	// lookup was not allowed to conclude that none ran (or its window is
	// not over yet).
	ErrLookupNotFound = corekit.ErrLookupNotFound
)
