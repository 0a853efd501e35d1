package payonce

import (
	"context"
	"testing"

	"github.com/payonce/payonce/internal/corekit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A key refused by the provider's rules gives an *APIError whose Kind is
// the rule's sentinel (not nil), so its text, its journal kind name and
// observers name the rule that was broken.
func TestRefusedKeyErrorKindIsTheRule(t *testing.T) {
	c, err := NewClient(WithBaseURL("https://api.example"), WithKeyRules(a55Rules()))
	require.NoError(t, err)
	for key, kind := range map[string]error{
		"short":                 ErrKeyTooShort,
		"has spaces in the key": ErrKeyInvalidChars,
	} {
		_, err := c.Do(context.Background(), &Request{Operation: "things.create", Method: "POST", Path: "/x", Keyed: true}, nil, WithKey(testKey(key)))
		var e *APIError
		require.ErrorAs(t, err, &e)
		assert.Equal(t, kind, e.Kind, key)
		assert.Equal(t, corekit.KindName(kind), outcome(err), key)
		assert.ErrorIs(t, err, ErrInvalidRequest, key)
	}
}
