// Package finality tells, for the providers' codecs, whether an error ends
// its idempotency key.
package finality

import (
	"errors"

	"github.com/payonce/payonce"
)

// ForKey reports whether e is final for its key: for a refused redirect
// what payonce.DefaultFinalForKey says, else whether e's kind is one of
// kinds. A nil e is not final.
func ForKey(e *payonce.APIError, kinds []error) bool {
	if e == nil {
		return false
	}
	if errors.Is(e.Kind, payonce.ErrRedirectRefused) {
		return payonce.DefaultFinalForKey(e)
	}
	for _, k := range kinds {
		if errors.Is(e.Kind, k) {
			return true
		}
	}
	return false
}
