package corekit

import (
	"context"
	"net/http"
)

// kindNames lists every error kind with its stable name: journals store the
// name, so a name never changes once released.
var kindNames = []struct {
	name string
	kind error
}{
	{"key_required", ErrKeyRequired},
	{"key_too_short", ErrKeyTooShort},
	{"key_too_long", ErrKeyTooLong},
	{"key_invalid_chars", ErrKeyInvalidChars},
	{"key_invalid", ErrKeyInvalid},
	{"idempotency_conflict", ErrIdempotencyConflict},
	{"insufficient_balance", ErrInsufficientBalance},
	{"unauthorized", ErrUnauthorized},
	{"forbidden", ErrForbidden},
	{"not_found", ErrNotFound},
	{"invalid_state", ErrInvalidState},
	{"invalid_request", ErrInvalidRequest},
	{"rate_limited", ErrRateLimited},
	{"server", ErrServer},
	{"signature_invalid", ErrSignatureInvalid},
	{"timestamp_expired", ErrTimestampExpired},
	{"nonce_replayed", ErrNonceReplayed},
	{"card_declined", ErrCardDeclined},
	{"charge_failed", ErrChargeFailed},
	{"three_ds_required", ErrThreeDSRequired},
	{"key_expired", ErrKeyExpired},
	{"retries_exhausted", ErrRetriesExhausted},
	{"retry_budget_exhausted", ErrRetryBudgetExhausted},
	{"transport", ErrTransport},
	{"malformed_response", ErrMalformedResponse},
	{"invalid_amount", ErrInvalidAmount},
	{"invalid_card", ErrInvalidCard},
	{"invalid_config", ErrInvalidConfig},
	{"redirect_refused", ErrRedirectRefused},
	{"signer_temporary", ErrSignerTemporary},
	{"outcome_unknown", ErrOutcomeUnknown},
	{"journal", ErrJournal},
	{"journal_fenced", ErrJournalFenced},
	{"journal_leased", ErrJournalLeased},
	{"key_created_in_future", ErrKeyCreatedInFuture},
	{"not_executed", ErrNotExecuted},
	{"settled_failed", ErrSettledFailed},
	{"lookup_ambiguous", ErrLookupAmbiguous},
	{"lookup_not_found", ErrLookupNotFound},
	{"invalid_event", ErrInvalidEvent},
	{"event_handled", ErrEventHandled},
	{"event_in_progress", ErrEventInProgress},
	{"event_handler_failed", ErrEventHandlerFailed},
	{"lookup_unsupported", ErrLookupUnsupported},
	{"canceled", context.Canceled},
	{"deadline_exceeded", context.DeadlineExceeded},
}

// KindName returns the stable name of an error kind (one of the Err*
// sentinels, context.Canceled or context.DeadlineExceeded), e.g.
// "card_declined"; "" for anything else. Journals store kinds by name.
func KindName(kind error) string {
	for _, k := range kindNames {
		if k.kind == kind {
			return k.name
		}
	}
	return ""
}

// KindByName returns the kind named name by KindName, or nil.
func KindByName(name string) error {
	for _, k := range kindNames {
		if k.name == name {
			return k.kind
		}
	}
	return nil
}

// KindForStatus maps an HTTP status to its sentinel when no code is known.
// A 409 without a known code is taken as a key conflict, the meaning both
// source documents give it.
func KindForStatus(status int) error {
	switch {
	case status == http.StatusUnauthorized:
		return ErrUnauthorized
	case status == http.StatusForbidden:
		return ErrForbidden
	case status == http.StatusNotFound:
		return ErrNotFound
	case status == http.StatusConflict:
		return ErrIdempotencyConflict
	case status == http.StatusTooManyRequests:
		return ErrRateLimited
	case status >= 500:
		return ErrServer
	case status >= 400:
		return ErrInvalidRequest
	}
	return ErrMalformedResponse
}
