package a55

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A server that echoes the whole card number in a charge's card summary
// (in number or in last4) does not hand it to the merchant's own JSON
// store or printed logs: the summary keeps the last four digits only.
func TestCardSummaryEchoedNumberMasked(t *testing.T) {
	body := `{"charge_uuid":"c1","status":"paid","amount":"10.00","card":{"number":"4111111111111111",` +
		`"last4":"4111 1111 1111 1111","brand":"visa","holder_name":"Ana","expiration_month":"12","expiration_year":"2030"}}`
	var ch Charge
	require.NoError(t, json.Unmarshal([]byte(body), &ch))
	require.NotNil(t, ch.Card)
	assert.Equal(t, "1111", ch.Card.Number.Last4())
	assert.Equal(t, "1111", ch.Card.Last4)
	assert.Equal(t, "visa", ch.Card.Brand)
	assert.Equal(t, "12", ch.Card.ExpirationMonth)
	out, err := json.Marshal(ch)
	require.NoError(t, err)
	printed := []string{string(out)}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%d", "%x", "%q"} {
		printed = append(printed, fmt.Sprintf(verb, *ch.Card), fmt.Sprintf(verb, ch))
	}
	for _, s := range printed {
		assert.NotContains(t, s, "411111111111")
		assert.NotContains(t, s, "4111 1111")
	}
}
