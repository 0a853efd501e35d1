package payonce_test

import (
	"context"
	"testing"
	"time"

	"github.com/payonce/payonce"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Two sources naming different keys in one call are refused before
// sending (the last one used to win silently); the same key from two
// sources is fine.
func TestConflictingKeySourcesAreRefused(t *testing.T) {
	created := newClock().Now().Add(-time.Hour) // the clients' clock: a token from the future is refused
	tokA := payonce.ResumeToken{Key: "order-2026-000123-a", Created: created}.String()
	tokB := payonce.ResumeToken{Key: "order-2026-000123-b", Created: created}.String()
	bg := context.Background()
	withA := payonce.WithKey(bg, "order-2026-000123-a")
	withB := payonce.WithKey(bg, "order-2026-000123-b")
	taskB := payonce.WithTaskKey(bg, "openapi:apply", "job-b", created)
	refused := map[string]struct {
		ctx  context.Context
		opts []payonce.CallOption
	}{
		"token then other key":  {bg, []payonce.CallOption{payonce.WithResumeToken(tokA), payonce.WithIdempotencyKey("order-2026-000123-b")}},
		"other key then token":  {bg, []payonce.CallOption{payonce.WithIdempotencyKey("order-2026-000123-b"), payonce.WithResumeToken(tokA)}},
		"two tokens":            {bg, []payonce.CallOption{payonce.WithResumeToken(tokA), payonce.WithResumeToken(tokB)}},
		"token and context key": {withB, []payonce.CallOption{payonce.WithResumeToken(tokA)}},
		"token and task key":    {taskB, []payonce.CallOption{payonce.WithResumeToken(tokA)}},
		"token and no key":      {bg, []payonce.CallOption{payonce.WithResumeToken(tokA), payonce.WithoutKey()}},
	}
	for name, tc := range refused {
		t.Run(name, func(t *testing.T) {
			s := newStub(t, okCharge)
			c := journalClient(t, s, nil, newClock())
			_, err := c.Do(tc.ctx, chargeReq("1.00"), nil, tc.opts...)
			require.ErrorIs(t, err, payonce.ErrInvalidRequest)
			var ve *payonce.ValidationError
			require.ErrorAs(t, err, &ve)
			assert.Regexp(t, "different keys|contradict", err.Error())
			assert.Zero(t, s.calls.Load(), "nothing sent")
		})
	}
	same := map[string]struct {
		ctx  context.Context
		opts []payonce.CallOption
	}{
		"token and same key":         {bg, []payonce.CallOption{payonce.WithResumeToken(tokA), payonce.WithIdempotencyKey("order-2026-000123-a")}},
		"token and same context key": {withA, []payonce.CallOption{payonce.WithResumeToken(tokA)}},
		"same token twice":           {bg, []payonce.CallOption{payonce.WithResumeToken(tokA), payonce.WithResumeToken(tokA)}},
		// The documented precedence without a token: the per-call key wins
		// over the context's.
		"per-call key over context key": {withB, []payonce.CallOption{payonce.WithIdempotencyKey("order-2026-000123-a")}},
	}
	for name, tc := range same {
		t.Run(name, func(t *testing.T) {
			s := newStub(t, okCharge)
			c := journalClient(t, s, nil, newClock())
			meta, err := c.Do(tc.ctx, chargeReq("1.00"), nil, tc.opts...)
			require.NoError(t, err)
			assert.Equal(t, "order-2026-000123-a", meta.Key)
		})
	}
}
