package payonce

import (
	"errors"

	"github.com/payonce/payonce/internal/corekit"
)

// finalityCodec is a codec that knows which of its provider's failures are
// final for an idempotency key. The journal records a failure as failed
// only when it is final; any other leaves the entry pending, since a
// later attempt with the same key and body may still execute (neither
// provider keeps an answer that is not a 2xx).
type finalityCodec interface {
	codec
	// FinalForKey reports whether e, the failure an attempt under a key
	// ended with, is final for that key: no later attempt with the same
	// key and body can execute the operation.
	FinalForKey(e *APIError) bool
}

// defaultFinalKinds are the failures final for a key whatever the
// provider: a deterministic refusal of this key or this body (validation,
// a resource or path that does not exist, an illegal move, a key the
// server's rules refuse) and a charge the provider decided (declined, or
// ended in an error status). Everything else (5xx, 429, transport, a
// balance to top up, refused credentials or signatures, a key conflict,
// an answer the client could not read) may still execute under the key.
var defaultFinalKinds = []error{
	ErrInvalidRequest, ErrInvalidAmount, ErrInvalidCard, ErrNotFound, corekit.ErrInvalidState,
	corekit.ErrCardDeclined, corekit.ErrChargeFailed,
	ErrKeyRequired, corekit.ErrKeyTooShort, corekit.ErrKeyTooLong, corekit.ErrKeyInvalidChars,
}

// defaultFinalForKey is the table a codec that is not a finalityCodec is
// judged by (defaultFinalKinds), and the one the providers' codecs narrow:
// a refused redirect is final only when the request cannot have run
// (307/308).
func defaultFinalForKey(e *APIError) bool {
	if e == nil {
		return false
	}
	if errors.Is(e.Kind, ErrRedirectRefused) {
		return !redirectMayHaveRun(e)
	}
	for _, k := range defaultFinalKinds {
		if errors.Is(e.Kind, k) {
			return true
		}
	}
	return false
}

// finalForKey asks the client's codec, else defaultFinalForKey, whether
// the run's failure is final for its key.
func (op *operation) finalForKey(e *APIError) bool {
	if e.StatusCode == 0 && !errors.Is(e.Kind, ErrRedirectRefused) {
		// The client stopped the run (spent retries, a context, the
		// key's age, the journal): no answer said anything final.
		return false
	}
	if fc, ok := op.c.codec.(finalityCodec); ok {
		return fc.FinalForKey(e)
	}
	return defaultFinalForKey(e)
}
