// Package finality tells, for the providers' codecs, whether an error ends
// its idempotency key.
package finality

import (
	"errors"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/corekit"
)

// ForKey reports whether e is final for its idempotency key: a refused
// redirect is final only when the request cannot have run (307/308, not a
// 301, 302 or 303 whose request may have run); any other error when its
// kind is one of kinds. A nil e is not final.
func ForKey(e *payonce.APIError, kinds []error) bool {
	if e == nil {
		return false
	}
	if errors.Is(e.Kind, payonce.ErrRedirectRefused) {
		return !errors.Is(e.Err, corekit.ErrRedirectRan)
	}
	for _, k := range kinds {
		if errors.Is(e.Kind, k) {
			return true
		}
	}
	return false
}
