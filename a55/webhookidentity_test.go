package a55_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce/a55"
)

func decodeEvent(t *testing.T, body string) *a55.WebhookEvent {
	t.Helper()
	var ev a55.WebhookEvent
	require.NoError(t, json.Unmarshal([]byte(body), &ev), body)
	return &ev
}

// A55 sends no event ID: the identity is derived from the body. A
// redelivery (the same fields, whatever the case of the status, the
// number form or key order) has the same identity; a second partial
// refund, at the same status, is its own event, even of the same amount;
// the charge's confirmation and its later partial refund are two events.
func TestWebhookEventIdentity(t *testing.T) {
	const c = "fe5e2c1e-b3fb-4cc4-bb28-004da37d5804"
	confirmed := decodeEvent(t, `{"charge_uuid":"`+c+`","status":"confirmed","transaction_reference":"txn-abc-123","subscription_uuid":null,"payment_link_uuid":null}`)
	assert.Equal(t, c+"/confirmed", confirmed.Key(), "the charge-webhook page's minimal payload")
	for _, again := range []string{
		`{"status":"CONFIRMED","charge_uuid":"` + c + `"}`,
		`{"charge_uuid":"` + c + `","status":"confirmed","amount":"199.90","updated_at":"2030-01-01T00:00:00Z"}`,
	} {
		assert.Equal(t, confirmed.Key(), decodeEvent(t, again).Key(), again)
	}

	refund1 := decodeEvent(t, `{"charge_uuid":"`+c+`","status":"confirmed","amount":"199.90","refund_amount":"10.00","updated_at":"2030-01-02T03:04:05Z"}`)
	refund1Again := decodeEvent(t, `{"updated_at":"2030-01-02T00:04:05-03:00","refund_amount":10,"amount":199.9,"status":"Confirmed","charge_uuid":"`+c+`"}`)
	refund2 := decodeEvent(t, `{"charge_uuid":"`+c+`","status":"confirmed","amount":"199.90","refund_amount":"10.00","updated_at":"2030-01-02T03:09:05Z"}`)
	refund3 := decodeEvent(t, `{"charge_uuid":"`+c+`","status":"confirmed","amount":"199.90","refund_amount":"20.00","updated_at":"2030-01-02T03:09:05Z"}`)
	final := decodeEvent(t, `{"charge_uuid":"`+c+`","status":"refunded","amount":"199.90","refund_amount":"159.90","updated_at":"2030-01-03T00:00:00Z"}`)
	assert.Equal(t, c+"/confirmed/refund/10.00/2030-01-02T03:04:05Z", refund1.Key())
	assert.Equal(t, refund1.Key(), refund1Again.Key(), "the same refund redelivered: one event")
	keys := map[string]bool{}
	for _, ev := range []*a55.WebhookEvent{confirmed, refund1, refund2, refund3, final} {
		keys[ev.Key()] = true
	}
	assert.Len(t, keys, 5, "the confirmation, three partial refunds (two of one amount) and the last refund are five events")
	assert.Equal(t, time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC), refund1.UpdatedAt.UTC())

	// An updated_at a55 cannot read is kept as sent; it never fails the
	// decode.
	odd := decodeEvent(t, `{"charge_uuid":"`+c+`","status":"refund_error","refund_amount":"5","updated_at":"02/01/2030 03:04"}`)
	assert.Equal(t, c+"/refund_error/refund/5.00/02/01/2030 03:04", odd.Key())
	assert.True(t, odd.UpdatedAt.IsZero())
}
