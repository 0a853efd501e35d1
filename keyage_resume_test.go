package payonce

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A checkout builds its key from the order (OperationKey) and passes it with
// WithIdempotencyKey on every run; a job that failed resumes with
// ResumeContext(ctx, err). The per-call key is then the context's key, and
// the age the context carries must not be lost: without it the key-age guard
// would treat a 25-hour-old key as new and send it to a server that forgot
// it, which charges a second time.
func TestPerCallKeyKeepsTheAgeOfTheSameKeyInTheContext(t *testing.T) {
	now := time.Date(2030, 1, 2, 12, 0, 0, 0, time.UTC)
	first := now.Add(-25 * time.Hour)
	failed := &APIError{Kind: ErrRetriesExhausted, Err: ErrServer, Key: "order:5:payment-key", KeyCreated: first}
	ctx := ResumeContext(context.Background(), failed)

	key, created, err := resolveKey(ctx, []CallOption{WithIdempotencyKey("order:5:payment-key")}, now)
	require.NoError(t, err)
	assert.Equal(t, "order:5:payment-key", key)
	assert.Equal(t, first, created, "the age of the resumed key")

	// Another key per call is another operation: it is new.
	key, created, err = resolveKey(ctx, []CallOption{WithIdempotencyKey("order:6:payment-key")}, now)
	require.NoError(t, err)
	assert.Equal(t, "order:6:payment-key", key)
	assert.Equal(t, now, created)

	// An explicit WithKeyCreated still wins.
	later := now.Add(-time.Hour)
	_, created, err = resolveKey(ctx, []CallOption{WithIdempotencyKey("order:5:payment-key"), WithKeyCreated(later)}, now)
	require.NoError(t, err)
	assert.Equal(t, later, created)
}

// End to end: the guard refuses the resumed key before anything is sent.
func TestResumeWithPerCallKeyPastTheWindowIsRefused(t *testing.T) {
	rec := &recorder{}
	now := time.Now()
	c := setup(t, rec, WithClock(func() time.Time { return now }))
	failed := &APIError{Kind: ErrRetriesExhausted, Err: ErrServer, Key: "order:5:payment-key", KeyCreated: now.Add(-25 * time.Hour)}
	_, err := c.Do(ResumeContext(t.Context(), failed), postReq(), nil, WithIdempotencyKey("order:5:payment-key"))
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrKeyExpired), "%v", err)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	assert.Empty(t, rec.attempts, "nothing is sent")
}
