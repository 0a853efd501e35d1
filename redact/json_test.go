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
