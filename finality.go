package payonce

import "errors"

// DefaultFinalKinds are the failures final for a key whatever the
// provider, when its Provider gives no FinalKinds: a deterministic refusal
// of this key or this body (validation, a resource or path that does not
// exist, a key the server's rules refuse). Everything else (5xx, 429,
// transport, refused credentials or signatures, a key conflict, an answer
// the client could not read, and every provider's own kind) may still
// execute under the key.
func DefaultFinalKinds() []error {
	return []error{
		ErrInvalidRequest, ErrInvalidAmount, ErrInvalidCard, ErrNotFound,
		ErrKeyRequired, ErrKeyTooShort, ErrKeyTooLong, ErrKeyInvalidChars,
	}
}

// FinalForKey reports whether e, the failure an attempt under a key ended
// with, is final for that key by p.FinalKinds (DefaultFinalKinds when
// nil): no later attempt with the same key and body can execute the
// operation. A refused redirect is final only when the request cannot
// have run (307/308, not a 301, 302 or 303 answering a request with a
// body). A nil e is not final.
func (p Provider) FinalForKey(e *APIError) bool {
	return finalForKey(e, p.FinalKinds)
}

// finalForKey is Provider.FinalForKey for the final kinds kinds.
func finalForKey(e *APIError, kinds []error) bool {
	if e == nil {
		return false
	}
	if errors.Is(e.Kind, ErrRedirectRefused) {
		return !errors.Is(e.Err, errRedirectRan)
	}
	if kinds == nil {
		kinds = DefaultFinalKinds()
	}
	for _, k := range kinds {
		if errors.Is(e.Kind, k) {
			return true
		}
	}
	return false
}

// finalForKey asks, by the client's Provider.FinalKinds, whether the
// run's failure is final for its key.
func (op *operation) finalForKey(e *APIError) bool {
	if e.StatusCode == 0 && !errors.Is(e.Kind, ErrRedirectRefused) {
		// The client stopped the run (spent retries, a context, the
		// key's age, the journal): no answer said anything final.
		return false
	}
	return finalForKey(e, op.c.finalKinds)
}
