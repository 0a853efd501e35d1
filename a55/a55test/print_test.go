package a55test_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce/a55/a55test"
)

// The public test types print their values with %+v: never an address, and
// a webhook's body as text, not a list of byte values.
func TestPublicTypesPrintWell(t *testing.T) {
	s := newFake(t)
	charge(t, s, "test-key-print-0123456789", withCard(a55test.CardConfirms, ""))
	reqs := s.Requests()
	require.NotEmpty(t, reqs)
	d := a55test.WebhookDelivery{ID: "wh_1", ChargeUUID: "c1", Status: "confirmed", URL: "https://merchant.example/hook",
		State: a55test.WebhookState("delivered"), Attempts: []a55test.WebhookAttempt{{StatusCode: 200}},
		Body: json.RawMessage(`{"charge_uuid":"c1"}`)}
	for _, v := range []any{reqs, reqs[0], s.Ledger().Operations(), s.Stats(), s.Ledger(), s.Clock(), d, &d,
		a55test.Rule{Fault: a55test.FaultDropAfterCommit, Count: 1}} {
		out := fmt.Sprintf("%+v", v)
		assert.NotContains(t, out, "0x", out)
		assert.NotContains(t, out, "[123 34", out)
	}
	assert.Contains(t, fmt.Sprintf("%+v", d), `{"charge_uuid":"c1"}`)
	assert.Contains(t, fmt.Sprintf("%+v", s.Ledger()), "1 operation")
}
