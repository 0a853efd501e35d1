package payonce

// The providers' own kinds as the core's tests meet them: the core names
// none of a provider's sentinels, so its tests make their own, with the
// providers' names and texts.
var (
	testErrInsufficientBalance = NewResumableKind("insufficient_balance", "insufficient balance")
	testErrInvalidState        = NewKind("invalid_state", "invalid state for this operation")
	testErrSignatureInvalid    = NewKind("signature_invalid", "signature rejected")
	testErrTimestampExpired    = NewKind("timestamp_expired", "signature timestamp expired")
	testErrNonceReplayed       = NewKind("nonce_replayed", "signature nonce replayed")
	testErrCardDeclined        = NewKind("card_declined", "card declined")
	testErrChargeFailed        = NewKind("charge_failed", "charge failed")
)
