package redact

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRedactJSON(t *testing.T) {
	in := `{"id":"ch_1","amount":"10.00","created":1764412800123,"card":{"number":"4111 1111 1111 1111","cvv":"123","CVC":456,"holder":"ANA"},
		"items":[{"pan":"5555555555554444"},{"note":"card 4000-0000-0000-0002 ok"}],"client_secret":"s3cr3t","accessToken":"abc","Authorization":"Bearer xyz",
		"echo":"password=hunter2&x=1","raw_pan":4111111111111111,"single":"{'cvv': '987', 'api_token':'t0k3n'} Authorization: Bearer b3ar3r"}`
	out := string(JSON([]byte(in)))
	for _, secret := range []string{"4111 1111 1111 1111", "4111111111111111", "5555555555554444", "4000-0000-0000-0002", `"123"`, "456", "s3cr3t", "abc", "xyz", "hunter2", "987", "t0k3n", "b3ar3r"} {
		assert.NotContains(t, out, secret)
	}
	var v map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &v), out)
	assert.Equal(t, "ch_1", v["id"])
	assert.Equal(t, "10.00", v["amount"])
	assert.Equal(t, 1764412800123.0, v["created"], "a non-card number is kept")
	assert.Contains(t, out, "1111")
	assert.Equal(t, "ANA", v["card"].(map[string]any)["holder"])

	notJSON := string(JSON([]byte("oops 4111111111111111 token=abc")))
	assert.NotContains(t, notJSON, "4111111111111111")
	assert.NotContains(t, notJSON, "abc")
	assert.True(t, json.Valid([]byte(notJSON)))
	assert.Nil(t, JSON(nil))
}

// An answer that hands out an OAuth client (an A55 wallet created with
// create_credentials) is stored without it: client ID and secret alike.
func TestRedactJSONDropsCredentials(t *testing.T) {
	out := string(JSON([]byte(`{"wallet_uuid":"w-1","credentials":{"client_id":"wallet-client-7","client_secret":"wallet-secret-7"}}`)))
	assert.NotContains(t, out, "wallet-client-7")
	assert.NotContains(t, out, "wallet-secret-7")
	assert.JSONEq(t, `{"wallet_uuid":"w-1","credentials":null}`, out)
}

func FuzzRedactJSON(f *testing.F) {
	f.Add([]byte(`{"card":{"number":"4111111111111111","cvv":"123"},"token":"t"}`))
	f.Add([]byte(`["4111 1111 1111 1111", 4111111111111111, {"x": null}]`))
	f.Add([]byte(`not json 4111111111111111`))
	f.Add([]byte(`{"id":"ch_NDExMTExMTExMTExMTExMQ","note":"%34%31%31%31%31%31%31%31%31%31%31%31%31%31%31%31"}`))
	f.Add([]byte(`{"digits":[4,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1],"groups":["4111","1111","1111","1111"],"e":"&#52;&#x31;\\061"}`))
	f.Add([]byte(`{"body":"eyJudW1iZXIiOiI0MTExMTExMTExMTExMTExIn0","at":"2026-11-29T18:49:12.123456789Z"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		out := JSON(b)
		if out == nil {
			return
		}
		require.True(t, json.Valid(out), "%q -> %q", b, out)
		// A card number is a run of 12 to 19 digits (separators allowed);
		// a longer digit run (a barcode) is not one and is kept.
		assert.NotRegexp(t, `(^|[^0-9])4111[ -]?1111[ -]?1111[ -]?1111([^0-9]|$)`, string(out))
	})
}

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

	// Without a codec's list (JSONWith), a field merely named like an ID
	// that holds a whole card number is masked by the pattern rules, and
	// so is a card number in any other field. (A Coinepay card_id is an
	// identifier: its codec says so, and it comes back as sent.)
	out := string(JSON([]byte(`{"source_id":"4111111111111111","token_id":"4111 1111 1111 1111","note":"card 4111111111111111 declined"}`)))
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
