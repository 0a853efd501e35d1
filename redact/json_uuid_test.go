package redact

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A UUID whose digits run across its hyphens into 13 to 19 Luhn-valid
// digits ("4ed1-9573-71482498": 1957371482498) is a resource ID, not a
// card number: the journal keeps it verbatim, or a replay would hand back
// another ID than the server's; so are digits between the hex letters of
// a hex ID. Card numbers written in groups inside any other ID, or glued to
// a non-hex prefix, are still masked.
func TestRedactJSONKeepsUUIDsWithLuhnDigitRuns(t *testing.T) {
	// IDs the crash run saw come back masked: 1957371482498,
	// 95204122920949 and 15662624484291 pass the Luhn check.
	for _, id := range []string{
		"724d9f31-3df0-4ed1-9573-71482498dcfd",
		"73ffbaea-9520-4122-9209-49a98bc56df5",
		"df156626-2448-4291-a920-c8de0e704d0e",
		"card_60fc99c4830198454379ff58", // 4830198454379 between hex letters
	} {
		out := JSON([]byte(`{"uuid":"` + id + `","charge_id":"` + id + `"}`))
		var m map[string]string
		require.NoError(t, json.Unmarshal(out, &m))
		assert.Equal(t, id, m["uuid"])
		assert.Equal(t, id, m["charge_id"])
	}

	for _, hostile := range []string{
		"abcd4111-1111-1111-1111-abcdefabcdefx",
		"card-4111-1111-1111-1111",
		"card_4111 1111 1111 1111",
		"amex-3782-822463-10005",
		"x4111111111111111y",
	} {
		out := string(JSON([]byte(`{"id":"` + hostile + `"}`)))
		assert.NotContains(t, out, "4111-1111-1111", hostile)
		assert.NotContains(t, out, "4111 1111 1111", hostile)
		assert.NotContains(t, out, "822463", hostile)
		assert.NotContains(t, out, "4111111111111111", hostile)
	}
}

// UUIDs written in free text or in fields that are not named as IDs (an
// idempotency key, a description) come back exactly as sent; a grouped
// card number in the same text is still masked, also with a CVV group.
func TestRedactJSONKeepsUUIDsInText(t *testing.T) {
	for _, u := range []string{
		"14c67164-d547-4066-9558-27d09727c667", "6ad12345-6789-4104-b484-e6b4706291ca",
		"4e86e232-e0c1-2345-6787-384f0f53d9d7",
	} {
		in := `{"idempotency_key":"` + u + `","description":"order ` + u + ` paid"}`
		out := string(JSON([]byte(in)))
		assert.Contains(t, out, `"idempotency_key":"`+u+`"`)
		assert.Contains(t, out, "order "+u+" paid")
	}
	out := string(JSON([]byte(`{"note":"card 4111 1111 1111 1111 cvv-less, again 4111-1111-1111-1111-123"}`)))
	assert.NotContains(t, out, "4111 1111 1111 1111")
	assert.NotContains(t, out, "4111-1111-1111-1111")
}
