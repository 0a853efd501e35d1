package payonce

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A job that failed resumes with the key its error carries (KeyOf): the
// key's age comes with it, so the key-age guard cannot take a 25-hour-old
// key for a new one and send it to a server that forgot it, which would
// charge a second time.
func TestResumedKeyKeepsItsAge(t *testing.T) {
	now := time.Date(2030, 1, 2, 12, 0, 0, 0, time.UTC)
	first := now.Add(-25 * time.Hour)
	failed := &APIError{Kind: ErrRetriesExhausted, Err: ErrServer, Key: testKeyAt("order:5:payment-key", first)}

	var o callOptions
	o.apply([]CallOption{WithKey(KeyOf(failed))})
	key, err := o.resolveKey(now)
	require.NoError(t, err)
	assert.Equal(t, "order:5:payment-key", key.ID())
	assert.True(t, first.Equal(key.Created()), "the age of the resumed key")

	// Another key is another operation, with its own age.
	later := now.Add(-time.Hour)
	o = callOptions{}
	o.apply([]CallOption{WithKey(testKeyAt("order:6:payment-key", later))})
	key, err = o.resolveKey(now)
	require.NoError(t, err)
	assert.Equal(t, "order:6:payment-key", key.ID())
	assert.True(t, later.Equal(key.Created()))
}

// End to end: the guard refuses the resumed key before anything is sent.
func TestResumePastTheWindowIsRefused(t *testing.T) {
	rec := &recorder{}
	now := time.Now()
	c := setup(t, rec, WithClock(func() time.Time { return now }))
	failed := &APIError{Kind: ErrRetriesExhausted, Err: ErrServer, Key: testKeyAt("order:5:payment-key", now.Add(-25*time.Hour))}
	_, err := c.Do(t.Context(), postReq(), nil, WithKey(KeyOf(failed)))
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrKeyExpired), "%v", err)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	assert.Empty(t, rec.attempts, "nothing is sent")
}
