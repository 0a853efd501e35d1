package payonce

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A job whose key comes from a field that happens to be empty (a text
// that did not parse, an error without a key) must not run under a fresh
// random key: every redelivery would then be a new operation and charge
// again. The zero Key given explicitly is refused before sending, as
// NewKey refuses an empty part.
func TestAnExplicitZeroKeyIsRefusedBeforeSending(t *testing.T) {
	unparsed, _ := ParseKey("")
	for name, k := range map[string]Key{
		"zero Key":           {},
		"text that is empty": unparsed,
		"error without key":  KeyOf(errors.New("plain")),
	} {
		t.Run(name, func(t *testing.T) {
			rec := &recorder{}
			c := setup(t, rec)
			_, err := c.Do(t.Context(), postReq(), nil, WithKey(k))
			require.ErrorIs(t, err, ErrKeyRequired)
			var ke *KeyError
			assert.ErrorAs(t, err, &ke)
			assert.False(t, IsResumable(err))
			assert.Empty(t, rec.seen(), "nothing is sent")
		})
	}
}

// WithoutKey together with a key is a contradiction: the operation would go
// out unprotected although the caller named its key.
func TestWithoutKeyAndAKeyTogetherAreRefused(t *testing.T) {
	rec := &recorder{}
	c := setup(t, rec)
	_, err := c.Do(t.Context(), postReq(), nil, WithoutKey(), WithKey(testKey("k-0123456789abcdef")))
	require.ErrorIs(t, err, ErrInvalidRequest)
	assert.Empty(t, rec.seen(), "nothing is sent")

	// WithoutKey alone still sends without a key where keys are optional.
	c = setup(t, rec, WithKeyRules(a55Rules()))
	_, err = c.Do(t.Context(), postReq(), nil, WithoutKey())
	require.NoError(t, err)
	require.Len(t, rec.seen(), 1)
	assert.Empty(t, rec.seen()[0].Key)
}
