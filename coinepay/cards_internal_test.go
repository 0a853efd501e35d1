package coinepay

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Raw keeps whatever the server sent; a printed card or recharge must not
// show a card number or CVV it echoed, under any verb, while the caller
// still reads Raw's bytes on purpose.
func TestPrintedRawHidesEchoedCardData(t *testing.T) {
	body := []byte(`{"card_id":"card_1","card_number":"4111111111111111","cvv":"123","balance":"1.00"}`)
	var c Card
	require.NoError(t, json.Unmarshal(body, &c))
	var r Recharge
	require.NoError(t, json.Unmarshal([]byte(`{"card_id":"card_1","amount":"1.00","card_number":"4111111111111111","cvv":"123"}`), &r))
	for _, v := range []any{c, &c, CardResult{Card: c}, r, RechargeResult{Recharge: r}, c.Raw} {
		for _, verb := range []string{"%v", "%+v", "%s", "%q", "%x", "%#v"} {
			out := fmt.Sprintf(verb, v)
			assert.NotContains(t, out, "4111111111111111", verb)
			assert.NotContains(t, out, `"123"`, verb)
			assert.NotContains(t, out, "34 49 50 51 34", verb) // "123" as bytes
			assert.NotContains(t, out, "52 49 49 49", verb)    // "4111" as bytes
			assert.NotContains(t, out, "34313131", verb)       // "4111" in hex
		}
	}
	var m map[string]any
	require.NoError(t, json.Unmarshal(c.Raw, &m), "Raw is still the server's bytes")
	assert.Equal(t, "4111111111111111", m["card_number"])
	assert.Equal(t, "card_1", fmt.Sprint(c.CardID))
}
