package a55

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// Past MaxWebhookReplays deliveries in the window the guard forgets the
// oldest first, so its memory stays bounded, and still tells every
// delivery it remembers from a replay.
func TestWebhookReplayGuardForgetsTheOldestPastItsBound(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	g := NewWebhookReplayGuard(func() time.Time { return now })
	ev := func(i int) *WebhookEvent {
		return &WebhookEvent{delivery: webhookDelivery{signedAt: now, signature: "sig-" + strconv.Itoa(i)}}
	}
	for i := range MaxWebhookReplays + 10 {
		assert.True(t, g.First(ev(i)))
	}
	assert.Equal(t, MaxWebhookReplays, g.Len())
	assert.True(t, g.First(ev(0)), "the oldest was forgotten")
	assert.False(t, g.First(ev(MaxWebhookReplays+9)), "the newest is remembered")
}
