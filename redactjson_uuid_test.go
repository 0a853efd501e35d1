package payonce

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A UUID whose digits run across its hyphens into 13 Luhn-valid digits
// ("4ed1-9573-71482498": 1957371482498) is a resource ID, not a card
// number: the journal keeps it verbatim, or a replay would hand back
// another ID than the server's. Card numbers written in groups inside an
// ID are still masked.
func TestRedactJSONKeepsUUIDsWithLuhnDigitRuns(t *testing.T) {
	const id = "724d9f31-3df0-4ed1-9573-71482498dcfd"
	require.True(t, LuhnValid("1957371482498"))
	out := RedactJSON([]byte(`{"uuid":"` + id + `","charge_id":"` + id + `"}`))
	var m map[string]string
	require.NoError(t, json.Unmarshal(out, &m))
	assert.Equal(t, id, m["uuid"])
	assert.Equal(t, id, m["charge_id"])

	for _, hostile := range []string{
		"abcd4111-1111-1111-1111-abcdefabcdef",
		"card_4111 1111 1111 1111",
		"amex-3782-822463-10005",
		"x4111111111111111y",
	} {
		out := string(RedactJSON([]byte(`{"id":"` + hostile + `"}`)))
		assert.NotContains(t, out, "4111-1111-1111", hostile)
		assert.NotContains(t, out, "4111 1111 1111", hostile)
		assert.NotContains(t, out, "822463", hostile)
		assert.NotContains(t, out, "4111111111111111", hostile)
	}
}
