package payonce

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A job that builds its key from a field that happens to be empty
// (WithIdempotencyKey(job.Key), WithKey(ctx, job.Key)) must not run under
// a fresh random key: every redelivery would then be a new operation and
// charge again. An empty key given explicitly is refused before sending,
// as OperationKey refuses an empty part.
func TestAnExplicitEmptyKeyIsRefusedBeforeSending(t *testing.T) {
	for name, run := range map[string]func(c *Client) error{
		"WithIdempotencyKey": func(c *Client) error {
			_, err := c.Do(t.Context(), postReq(), nil, WithIdempotencyKey(""))
			return err
		},
		"WithKey": func(c *Client) error {
			_, err := c.Do(WithKey(t.Context(), ""), postReq(), nil)
			return err
		},
		"WithKeyCreatedAt": func(c *Client) error {
			_, err := c.Do(WithKeyCreatedAt(context.Background(), "", c.now()), postReq(), nil)
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			rec := &recorder{}
			c := setup(t, rec)
			err := run(c)
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
	_, err := c.Do(t.Context(), postReq(), nil, WithoutKey(), WithIdempotencyKey("k-0123456789abcdef"))
	require.ErrorIs(t, err, ErrInvalidRequest)
	assert.Empty(t, rec.seen(), "nothing is sent")

	// WithoutKey alone still sends without a key where keys are optional.
	c = setup(t, rec, WithKeyRules(a55Rules()))
	_, err = c.Do(t.Context(), postReq(), nil, WithoutKey())
	require.NoError(t, err)
	require.Len(t, rec.seen(), 1)
	assert.Empty(t, rec.seen()[0].Key)
}
