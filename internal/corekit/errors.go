package corekit

import "errors"

// The kinds of failure. Each is exported, with its meaning documented,
// by the package whose callers meet it: the root package payonce for the
// core's, a55 and coinepay for those only their answers give, journal for
// the journals' own (ErrJournalNotFound as journal.ErrNotFound). The key
// rules' three kinds stay here: callers match them as payonce.ErrKeyInvalid;
// so does the spent retry budget, matched as payonce.ErrRetriesExhausted.
// They live here so that the plumbing below the root can name them.
var (
	ErrKeyRequired          = errors.New("idempotency key required")
	ErrKeyInvalid           = errors.New("idempotency key invalid")
	ErrKeyTooShort          = &keyRuleError{"idempotency key too short"}
	ErrKeyTooLong           = &keyRuleError{"idempotency key too long"}
	ErrKeyInvalidChars      = &keyRuleError{"idempotency key has invalid characters"}
	ErrIdempotencyConflict  = errors.New("idempotency key reused with a different payload")
	ErrInsufficientBalance  = errors.New("insufficient balance")
	ErrUnauthorized         = errors.New("unauthorized")
	ErrForbidden            = errors.New("forbidden")
	ErrNotFound             = errors.New("not found")
	ErrInvalidState         = errors.New("invalid state for this operation")
	ErrInvalidRequest       = errors.New("invalid request")
	ErrRateLimited          = errors.New("rate limited")
	ErrServer               = errors.New("server error")
	ErrSignatureInvalid     = errors.New("signature rejected")
	ErrTimestampExpired     = errors.New("signature timestamp expired")
	ErrNonceReplayed        = errors.New("signature nonce replayed")
	ErrCardDeclined         = errors.New("card declined")
	ErrChargeFailed         = errors.New("charge failed")
	ErrThreeDSRequired      = errors.New("3DS challenge required")
	ErrKeyExpired           = errors.New("idempotency key too old to retry safely")
	ErrRetriesExhausted     = errors.New("retries exhausted")
	ErrRetryBudgetExhausted = &subKindError{"retry budget exhausted", ErrRetriesExhausted}
	ErrTransport            = errors.New("transport error")
	ErrMalformedResponse    = errors.New("malformed response")
	ErrInvalidAmount        = errors.New("invalid amount")
	ErrInvalidCard          = errors.New("invalid card")
	ErrInvalidConfig        = errors.New("invalid configuration")
	ErrOutcomeUnknown       = errors.New("outcome unknown: reconciliation needed")
	ErrJournal              = errors.New("journal error")
	ErrKeyCreatedInFuture   = errors.New("idempotency key creation time is in the future")
	ErrNotExecuted          = errors.New("operation not executed: nothing moved; a new reference may run it")
	ErrSettledFailed        = errors.New("operation settled as failed")
	ErrJournalNotFound      = errors.New("journal entry not found")
	ErrJournalSettled       = errors.New("journal entry already settled")
	ErrJournalFenced        = errors.New("journal entry taken over by another run")
	ErrJournalLeased        = errors.New("journal entry leased to another run")
	ErrJournalRecorded      = errors.New("recorded in the journal")
	ErrLookupAmbiguous      = errors.New("settle lookup ambiguous: the provider's records do not tell which operation is the entry's")
	ErrLookupNotFound       = errors.New("settle lookup found no matching operation")
	ErrLookupUnsupported    = errors.New("settle lookup needs a journal that finds entries by resource and look-alikes (payonce.JournalFinder)")
	ErrRedirectRefused      = errors.New("redirect refused")
	// ErrRedirectRan marks a refused redirect whose request may have run
	// (a 301/302/303 answering a POST): it is not final for its key.
	ErrRedirectRan     = errors.New("the redirected request may have run")
	ErrSignerTemporary = errors.New("signer temporarily unable to sign")
)

// subKindError is a kind with its own name in the journals and the
// metrics that callers match as its parent: the spent client-wide retry
// budget is one way retries run out (payonce.ErrRetriesExhausted).
type subKindError struct {
	msg    string
	parent error
}

func (e *subKindError) Error() string { return e.msg }

// Unwrap returns the parent kind.
func (e *subKindError) Unwrap() error { return e.parent }

// keyRuleError is the kind of a key that breaks one of the provider's
// rules (too short, too long, a character refused): each has its own kind
// name in the journals and its own finality in the codecs, and every one
// is an ErrKeyInvalid.
type keyRuleError struct{ msg string }

func (e *keyRuleError) Error() string { return e.msg }

// Unwrap returns ErrKeyInvalid.
func (e *keyRuleError) Unwrap() error { return ErrKeyInvalid }
