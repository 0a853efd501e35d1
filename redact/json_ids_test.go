package redact

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A result answered from the journal must name the same resources as the
// answer that was stored: identifiers whose hex digits happen to hold a
// long run of decimal digits are not card numbers. (The crash run found
// card IDs such as card_486314928837d1e5850d507d coming back masked.)
func TestRedactJSONKeepsIdentifiers(t *testing.T) {
	in := `{"card_id":"card_486314928837d1e5850d507d","recharge_id":"card_4415d17307521799828029a7",` +
		`"charge_uuid":"0e8a4f2c-4111-1111-1111-a1b2c3d4e5f6","id":"tx_12345678901234567","wallet_uuid":"ba7c0f44-67eb-49a4-8ab9-aebdff9b772c"}`
	var got, want map[string]any
	require.NoError(t, json.Unmarshal(JSON([]byte(in)), &got))
	require.NoError(t, json.Unmarshal([]byte(in), &want))
	assert.Equal(t, want, got)

	// An identifier field that holds a card number itself is still masked,
	// and so is a card number in any other field.
	out := string(JSON([]byte(`{"card_id":"4111111111111111","token_id":"4111 1111 1111 1111","note":"card 4111111111111111 declined"}`)))
	assert.NotContains(t, out, "4111111111111111")
	assert.NotContains(t, out, "4111 1111 1111 1111")
	assert.Contains(t, out, "1111")
}

// A card number glued into an identifier ("card_4111111111111111") is not
// kept verbatim: only the digit runs of ordinary IDs are.
func TestRedactJSONMasksCardNumbersInsideIdentifiers(t *testing.T) {
	for _, in := range []string{
		`{"card_id":"card_4111111111111111"}`,
		`{"id":"ch_4111-1111-1111-1111_x"}`,
		`{"chargeId":"x99994111111111111111"}`,
	} {
		out := string(JSON([]byte(in)))
		assert.NotContains(t, out, "4111111111111111", in)
		assert.NotContains(t, out, "4111-1111-1111-1111", in)
	}
}

// Digits glued to a hex letter on one side only are part of the hex ID
// too, however long their run (the chaos crash run found
// card_830186349586224382650c29 coming back from the journal masked,
// which its reconciliation counted as a lost operation); a run glued to
// a letter that is not a hex digit, or to nothing, is still searched
// for a card number.
func TestRedactJSONKeepsHexIdentifiersWithLongDigitRuns(t *testing.T) {
	for _, id := range []string{
		"card_830186349586224382650c29",
		"card_c830186349586224382650",
		"card_4111111111111111c29",
		"rc_9999941111111111111111ab",
	} {
		in := `{"card_id":"` + id + `"}`
		assert.JSONEq(t, in, string(JSON([]byte(in))), id)
	}
	for _, in := range []string{
		`{"card_id":"card_830186349586224382650"}`, // no hex letter: a Luhn-valid run hides in it
		`{"card_id":"x99994111111111111111"}`,
		`{"card_id":"card_4111111111111111_c29"}`,
	} {
		assert.NotEqual(t, in, string(JSON([]byte(in))), in)
	}
}

// A server may key an object by card number: the name is redacted like a
// value, and two names that redact alike both keep their values.
func TestRedactJSONRedactsObjectNames(t *testing.T) {
	out := string(JSON([]byte(`{"4111111111111111":"a","4111 1111 1111 1111":"b","************1111":"c","token=abc":1,"id":"ch_1"}`)))
	var v map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &v), out)
	assert.NotContains(t, out, "4111111111111111")
	assert.NotContains(t, out, "4111 1111")
	assert.NotContains(t, out, "abc")
	assert.Len(t, v, 5, out)
	assert.Equal(t, "c", v["************1111"], out)
	assert.Equal(t, "ch_1", v["id"])
	assert.Equal(t, out, string(JSON([]byte(`{"4111111111111111":"a","4111 1111 1111 1111":"b","************1111":"c","token=abc":1,"id":"ch_1"}`))), "the same names every time")
}
