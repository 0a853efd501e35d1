package reconcile_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce/reconcile"
)

// The default rule is DefaultOrderPattern's; a pattern needs exactly one
// group, the order.
func TestOrderRules(t *testing.T) {
	pat, err := reconcile.OrderPattern(reconcile.DefaultOrderPattern)
	require.NoError(t, err)
	def := reconcile.AttemptOrders()
	for _, ref := range []string{"order-42/attempt-1", "order-42/attempt-12", "a/b/attempt-3", "a/attempt-1/attempt-x",
		"order-42/attempt-", "/attempt-1", "order-42", "attempt-1", "x/attempt-1a", "", "a/attempt-1/attempt-2"} {
		o1, ok1 := pat(ref)
		o2, ok2 := def(ref)
		assert.Equal(t, ok1, ok2, ref)
		assert.Equal(t, o1, o2, ref)
	}
	o, ok := def("order-42/attempt-2")
	assert.True(t, ok)
	assert.Equal(t, "order-42", o)
	for _, bad := range []string{`(`, `^order$`, `^(a)(b)$`} {
		_, err := reconcile.OrderPattern(bad)
		assert.ErrorIs(t, err, reconcile.ErrInvalidOptions, bad)
	}
}
