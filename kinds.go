package payonce

import (
	"context"
	"errors"
	"net/http"
)

// errKind is the kind of an error raised before sending: the sentinel of a
// *ValidationError, ErrInvalidConfig, or def.
func errKind(err error, def error) error {
	var ve *ValidationError
	switch {
	case errors.As(err, &ve):
		return ve.Err
	case errors.Is(err, ErrInvalidConfig):
		return ErrInvalidConfig
	}
	return def
}

// keyKind is the kind of a validateKey error: the *ValidationError's
// sentinel (ErrKeyRequired, ErrKeyTooShort, ErrKeyTooLong or
// ErrKeyInvalidChars), else ErrInvalidRequest.
func keyKind(err error) error {
	var ke *ValidationError
	if errors.As(err, &ke) && ke.Err != nil {
		return ke.Err
	}
	return ErrInvalidRequest
}

// kind is an error kind: a sentinel with a stable name that journals
// store and metrics report, and, for a kind that is one way its parent
// happens (ErrKeyTooShort, ErrRetryBudgetExhausted), the parent callers
// match it as.
type kind struct {
	name, text string
	parent     error
	resumable  bool // NewResumableKind
}

func (k *kind) Error() string { return k.text }

// Unwrap returns the parent kind, nil for none.
func (k *kind) Unwrap() error { return k.parent }

// newKind is one of the core's kinds.
func newKind(name, text string) error { return &kind{name: name, text: text} }

// newSubKind is one of the core's kinds that callers match as parent too.
func newSubKind(name, text string, parent error) error {
	return &kind{name: name, text: text, parent: parent}
}

// NewKind returns a new error kind: a sentinel that callers match with
// errors.Is, whose text is text and whose stable name, which journals
// store and metrics report (KindName), is name. A provider makes the
// kinds only its answers give with it and lists them in Provider.Kinds; a
// name never changes once released, and is not one of the core's.
func NewKind(name, text string) error { return &kind{name: name, text: text} }

// NewResumableKind is NewKind for a kind whose operation, run again later
// with the same key and body, may succeed although the failure is not
// temporary: the provider does not store the answer and it depends on
// something the merchant can change (a balance to top up). IsResumable
// reports true for it.
func NewResumableKind(name, text string) error { return &kind{name: name, text: text, resumable: true} }

// resumableKind reports whether err is, or wraps, a NewResumableKind kind.
func resumableKind(err error) bool {
	var k *kind
	for e := err; errors.As(e, &k); e = k.parent {
		if k.resumable {
			return true
		}
		if k.parent == nil {
			break
		}
	}
	return false
}

// KindName returns the stable name of an error kind (one of the Err*
// sentinels of payonce or of a provider, context.Canceled or
// context.DeadlineExceeded), e.g. "card_declined"; "" for anything else.
// Journals store kinds by name.
func KindName(k error) string {
	switch k {
	case context.Canceled:
		return "canceled"
	case context.DeadlineExceeded:
		return "deadline_exceeded"
	}
	if kd, ok := k.(*kind); ok {
		return kd.name
	}
	return ""
}

// coreKinds are the core's kinds, found again by name (kindByName).
var coreKinds = []error{
	ErrKeyRequired, ErrKeyTooShort, ErrKeyTooLong, ErrKeyInvalidChars, ErrKeyInvalid,
	ErrIdempotencyConflict, ErrUnauthorized, ErrForbidden, ErrNotFound, ErrInvalidRequest,
	ErrRateLimited, ErrServer, ErrKeyExpired, ErrRetriesExhausted, ErrRetryBudgetExhausted,
	ErrTransport, ErrMalformedResponse, ErrInvalidAmount, ErrInvalidCard, ErrInvalidConfig,
	ErrRedirectRefused, ErrSignerTemporary, ErrOutcomeUnknown, ErrJournal, ErrJournalFenced,
	ErrJournalLeased, ErrKeyCreatedInFuture, ErrNotExecuted, ErrSettledFailed,
	ErrLookupAmbiguous, ErrLookupNotFound, ErrInvalidEvent, ErrEventHandled, ErrEventInProgress,
	ErrEventHandlerFailed, ErrLookupUnsupported, context.Canceled, context.DeadlineExceeded,
}

// kindByName returns the kind, the core's or the client's provider's
// (Provider.Kinds), that KindName names name, or nil.
func (c *Client) kindByName(name string) error {
	if name == "" {
		return nil
	}
	for _, set := range [][]error{coreKinds, c.kinds} {
		for _, k := range set {
			if KindName(k) == name {
				return k
			}
		}
	}
	return nil
}

// KindForStatus maps an HTTP status to its kind when no code is known,
// for a Codec's DecodeError. A 409 without a known code is taken as a
// key conflict, the meaning both providers' documents give it.
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
