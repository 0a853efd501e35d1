package finality_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/corekit"
	"github.com/payonce/payonce/internal/finality"
)

func TestForKey(t *testing.T) {
	kinds := []error{payonce.ErrInvalidRequest}
	assert.False(t, finality.ForKey(nil, kinds))
	assert.True(t, finality.ForKey(&payonce.APIError{Kind: payonce.ErrInvalidRequest}, kinds))
	assert.False(t, finality.ForKey(&payonce.APIError{Kind: payonce.ErrServer}, kinds))
	assert.True(t, finality.ForKey(&payonce.APIError{Kind: payonce.ErrRedirectRefused}, kinds), "no redirect error: cannot have run")
	assert.True(t, finality.ForKey(&payonce.APIError{Kind: payonce.ErrRedirectRefused, Err: payonce.ErrRedirectRefused}, kinds))
	assert.False(t, finality.ForKey(&payonce.APIError{Kind: payonce.ErrRedirectRefused, Err: fmt.Errorf("%w: %w", payonce.ErrRedirectRefused, corekit.ErrRedirectRan)}, kinds))
}
