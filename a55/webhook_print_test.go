package a55

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A webhook event printed or logged does not show card data the sender put
// in the body, under any verb; Raw still holds the verified bytes.
func TestPrintedWebhookEventHidesEchoedCardData(t *testing.T) {
	v, err := NewWebhookVerifier("whsec", nil)
	require.NoError(t, err)
	body := []byte(`{"charge_uuid":"c1","status":"confirmed","card":{"number":"4111111111111111","cvv":"123"}}`)
	req := httptest.NewRequest("POST", "/wh", bytes.NewReader(body))
	for k, vs := range SignWebhook("whsec", time.Now(), body) {
		req.Header[k] = vs
	}
	ev, err := v.Parse(req)
	require.NoError(t, err)
	for _, x := range []any{ev, *ev, ev.Raw} {
		for _, verb := range []string{"%v", "%+v", "%s", "%q", "%x", "%#v"} {
			out := fmt.Sprintf(verb, x)
			assert.NotContains(t, out, "4111111111111111", verb)
			assert.NotContains(t, out, `"123"`, verb)
			assert.NotContains(t, out, "52 49 49 49", verb)
			assert.NotContains(t, out, "34313131", verb)
		}
	}
	assert.Equal(t, body, []byte(ev.Raw))
}

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
