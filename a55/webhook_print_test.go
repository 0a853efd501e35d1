package a55

import (
	"bytes"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A parsed event prints nothing of its delivery's signature.
func TestWebhookEventPrintsNoSignature(t *testing.T) {
	now := time.Now()
	v, err := NewWebhookVerifier("whsec-print", func() time.Time { return now })
	require.NoError(t, err)
	body := []byte(`{"charge_uuid":"c1","status":"confirmed","description":"order-42"}`)
	r, err := NewSignedWebhookRequest("http://127.0.0.1/hooks", "whsec-print", now, body)
	require.NoError(t, err)
	ev, err := v.Parse(r)
	require.NoError(t, err)
	sig := r.Header.Get(HeaderWebhookSignature)
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		assert.NotContains(t, fmt.Sprintf(verb, ev), sig, verb)
		assert.NotContains(t, fmt.Sprintf(verb, *ev), sig, verb)
	}
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("hook", "event", ev)
	assert.NotContains(t, buf.String(), sig)
	assert.Equal(t, "order-42", ev.Description)
}
