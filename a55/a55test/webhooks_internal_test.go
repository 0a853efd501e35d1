package a55test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce/internal/fake/a55fake"
)

// The webhook records carry every field from the fake to the test API.
func TestWebhookConversionsCarryEveryField(t *testing.T) {
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	a := a55fake.WebhookAttempt{At: at, StatusCode: 503, Error: "timeout"}
	in := a55fake.WebhookDelivery{ID: "whd_1", ChargeUUID: "c1", Status: "confirmed", URL: "http://127.0.0.1/h",
		State: a55fake.WebhookPending, Attempts: []a55fake.WebhookAttempt{a, a}, NextAttempt: at, Body: json.RawMessage(`{"x":1}`)}
	out := webhookDelivery(in)
	require.Len(t, out.Attempts, 2)
	assert.Equal(t, WebhookAttempt{At: at, StatusCode: 503, Error: "timeout"}, out.Attempts[1])
	want, err := json.Marshal(in)
	require.NoError(t, err)
	got, err := json.Marshal(out)
	require.NoError(t, err)
	assert.JSONEq(t, string(want), string(got))
	// Every exported field of the fake's record is set above, so a field the
	// conversion forgot would differ in the JSON.
	var fields map[string]any
	require.NoError(t, json.Unmarshal(want, &fields))
	for k, v := range fields {
		assert.NotEmpty(t, v, k)
	}
}
