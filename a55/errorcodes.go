package a55

import (
	"strings"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/corekit"
)

// threeDSUnavailableWait is how long A55 asks a client to wait after
// 3DS_UNAVAILABLE ("Retry after 60 seconds").
const threeDSUnavailableWait = 60 * time.Second

// codeRule is what one A55 error code means to the client: the kind of
// the error, and what the core does next (corekit.Advice: the zero value
// leaves it to the HTTP status).
type codeRule struct {
	kind   error
	advice corekit.Advice
	// action: the code decides the kind in either error shape and at any
	// HTTP status (a 409 included), and in a 2xx charge in a failed
	// status; the other codes' kinds give way to the shape's own rules.
	action bool
}

// codeRules is A55's code table (https://docs.a55.tech/docs/reference/code-response
// and the pages that name a code; docs/a55.md, "Codes", says what each
// means to a caller). A code is read without regard to case.
var codeRules = map[string]codeRule{
	// An action, not a decline: the payer must pass the challenge at the
	// answer's url_3ds. Final for the key: the same body is answered the same.
	"3DS_REQUIRED": {kind: ErrThreeDSRequired, action: true},
	// A55: "Retry after 60 seconds": under the same key, never sooner.
	"3DS_UNAVAILABLE": {kind: payonce.ErrServer, action: true,
		advice: corekit.Advice{Retry: corekit.RetrySameKey, NotBefore: threeDSUnavailableWait}},
	// A55: "Retry with exponential backoff", "include idempotency key".
	"PROCESSING_ERROR": {kind: payonce.ErrServer, action: true,
		advice: corekit.Advice{Retry: corekit.RetrySameKey}},
	// The acquirer did not answer in time: the charge may have gone
	// through. Never final, never sent again before it is looked up.
	"TIMEOUT": {kind: payonce.ErrOutcomeUnknown, action: true,
		advice: corekit.Advice{Retry: corekit.RetryNever}},
	// The key was used already: the original charge is looked up and
	// given back (or, without its charge_uuid, it is in doubt like TIMEOUT).
	"DUPLICATE_REQUEST": {kind: payonce.ErrOutcomeUnknown, action: true,
		advice: corekit.Advice{Retry: corekit.RetryNever}},

	"CARD_DECLINED":      {kind: ErrCardDeclined},
	"INVALID_CARD":       {kind: ErrCardDeclined},
	"EXPIRED_CARD":       {kind: ErrCardDeclined},
	"INSUFFICIENT_FUNDS": {kind: ErrCardDeclined},
	"INVALID_CVC":        {kind: ErrCardDeclined},
	"3DS_FAILED":         {kind: ErrCardDeclined},
	"FRAUD_SUSPECTED":    {kind: ErrCardDeclined},

	"CURRENCY_NOT_SUPPORTED": {kind: payonce.ErrInvalidRequest},
	"AMOUNT_INVALID":         {kind: payonce.ErrInvalidRequest},
	"VALIDATION_ERROR":       {kind: payonce.ErrInvalidRequest},
	"INVALID_REQUEST":        {kind: payonce.ErrInvalidRequest},
	"INVALID_JSON":           {kind: payonce.ErrInvalidRequest},
	"METHOD_NOT_ALLOWED":     {kind: payonce.ErrInvalidRequest},
	"PAYLOAD_TOO_LARGE":      {kind: payonce.ErrInvalidRequest},

	"CANCEL_NOT_ALLOWED":      {kind: ErrInvalidState},
	"CAPTURE_NOT_ALLOWED":     {kind: ErrInvalidState},
	"REFUND_NOT_ALLOWED":      {kind: ErrInvalidState},
	"REFUND_EXCEEDS_AMOUNT":   {kind: ErrInvalidState},
	"CHARGE_ALREADY_PAID":     {kind: ErrInvalidState},
	"CHARGE_ALREADY_CANCELED": {kind: ErrInvalidState},
	"CHARGE_ALREADY_SETTLED":  {kind: ErrInvalidState},
	"INVALID_STATE":           {kind: ErrInvalidState},

	"IDEMPOTENCY_KEY_REQUIRED":  {kind: payonce.ErrKeyRequired},
	"IDEMPOTENCY_KEY_TOO_LONG":  {kind: payonce.ErrKeyTooLong},
	"IDEMPOTENCY_KEY_TOO_SHORT": {kind: payonce.ErrKeyTooShort},
	"IDEMPOTENCY_KEY_INVALID":   {kind: payonce.ErrKeyInvalidChars},
	"IDEMPOTENCY_KEY_CONFLICT":  {kind: payonce.ErrIdempotencyConflict},

	"UNAUTHORIZED":  {kind: payonce.ErrUnauthorized},
	"INVALID_TOKEN": {kind: payonce.ErrUnauthorized},
	"FORBIDDEN":     {kind: payonce.ErrForbidden},
	"NOT_FOUND":     {kind: payonce.ErrNotFound},
	// A55's rate limit: retried after its Retry-After, at any status.
	"RATE_LIMIT_EXCEEDED": {kind: payonce.ErrRateLimited, advice: corekit.Advice{Retry: corekit.RetrySameKey}},
	"INTERNAL_ERROR":      {kind: payonce.ErrServer},
}

// ruleOf returns code's rule, read without regard to case or surrounding
// spaces; the zero rule for a code A55 does not document.
func ruleOf(code string) codeRule {
	if r, ok := codeRules[code]; ok { // the usual spelling: no copy
		return r
	}
	return codeRules[strings.ToUpper(strings.TrimSpace(code))]
}

// codeKind maps an A55 error code to its sentinel, or nil for a code it
// does not know (the HTTP status then decides).
func codeKind(code string) error { return ruleOf(code).kind }

// actionKind is the kind of an action code (ruleOf's action), nil for
// any other code.
func actionKind(code string) error {
	if r := ruleOf(code); r.action {
		return r.kind
	}
	return nil
}
