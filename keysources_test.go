package payonce_test

import (
	"testing"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/keytest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Two options naming different keys in one call are refused before
// sending (which one should win is the caller's bug, not a rule to
// guess); the same key twice is fine.
func TestConflictingKeySourcesAreRefused(t *testing.T) {
	created := newClock().Now().Add(-time.Hour) // the clients' clock: a key from the future is refused
	keyA := keytest.Key(t, "order-2026-000123-a", created)
	keyB := keytest.Key(t, "order-2026-000123-b", created)
	keyAOlder := keytest.Key(t, "order-2026-000123-a", created.Add(-time.Minute))
	refused := map[string][]payonce.CallOption{
		"two keys":                 {payonce.WithKey(keyA), payonce.WithKey(keyB)},
		"one key, two ages":        {payonce.WithKey(keyA), payonce.WithKey(keyAOlder)},
		"key then no key":          {payonce.WithKey(keyA), payonce.WithoutKey()},
		"no key then key":          {payonce.WithoutKey(), payonce.WithKey(keyA)},
		"two keys and a third one": {payonce.WithKey(keyA), payonce.WithKey(keyB), payonce.WithKey(keyA)},
	}
	for name, opts := range refused {
		t.Run(name, func(t *testing.T) {
			s := newStub(t, okCharge)
			c := journalClient(t, s, nil, newClock())
			_, err := c.Do(t.Context(), chargeReq("1.00"), nil, opts...)
			require.ErrorIs(t, err, payonce.ErrInvalidRequest)
			var ve *payonce.ValidationError
			require.ErrorAs(t, err, &ve)
			assert.Regexp(t, "different keys|contradict", err.Error())
			assert.Zero(t, s.calls.Load(), "nothing sent")
		})
	}
	s := newStub(t, okCharge)
	c := journalClient(t, s, nil, newClock())
	meta, err := c.Do(t.Context(), chargeReq("1.00"), nil, payonce.WithKey(keyA), payonce.WithKey(keyA))
	require.NoError(t, err, "the same key twice")
	assert.Equal(t, keyA, meta.Key)
}
