package redact

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// answerFields is a codec's list as a test uses it: identifiers and card
// data, named as a provider writes them.
func answerFields() *Fields {
	return NewFields([]string{"card_id", "id", "charge_uuid", "request_id"}, []string{"card_number", "number", "cvv"})
}

// About one identifier of 13 to 19 digits in ten passes the Luhn check:
// a field the codec names an identifier comes back exactly as sent, as a
// string or as a JSON integer, at any depth, while the same digits in a
// field it does not know are still masked.
func TestJSONWithKeepsIdentifiersAsSent(t *testing.T) {
	in := `{"card_id":"4111111111111111","id":4111111111111111,"data":{"charge_uuid":"5105-1051-0510-5100","items":[{"id":"4000056655665556"}]},` +
		`"request_id":"req 4111 1111 1111 1111","note":"card 4111111111111111","other_id":"4111111111111111"}`
	var got map[string]any
	dec := json.NewDecoder(bytes.NewReader(JSONWith([]byte(in), answerFields())))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&got))
	assert.Equal(t, "4111111111111111", got["card_id"])
	assert.Equal(t, json.Number("4111111111111111"), got["id"], "a JSON integer stays an integer")
	data := got["data"].(map[string]any)
	assert.Equal(t, "5105-1051-0510-5100", data["charge_uuid"])
	assert.Equal(t, "4000056655665556", data["items"].([]any)[0].(map[string]any)["id"])
	assert.Equal(t, "req 4111 1111 1111 1111", got["request_id"])
	assert.Equal(t, "card ************1111", got["note"], "a field the codec does not know: masked by pattern")
	assert.NotEqual(t, "4111111111111111", got["other_id"], "not in the list: the pattern rules decide")
}

// Field names are matched as encoding/json matches them to a struct's
// tags: without regard to case.
func TestJSONWithMatchesNamesAsEncodingJSON(t *testing.T) {
	out := string(JSONWith([]byte(`{"CARD_ID":"4111111111111111","Card_Number":"5105105105105100"}`), answerFields()))
	assert.Contains(t, out, `"CARD_ID":"4111111111111111"`)
	assert.NotContains(t, out, "5105105105105100")
}

// What a codec names card data is always masked, whatever it holds: a
// number that fails the Luhn check, one in a JSON number, letters, a
// CVV; a value already masked stays as it is.
func TestJSONWithAlwaysMasksCardData(t *testing.T) {
	for in, want := range map[string]string{
		`{"card_number":"4111111111111112"}`:    `{"card_number":"************1112"}`,
		`{"card_number":"4111 1111 1111 1112"}`: `{"card_number":"**** **** **** 1112"}`,
		`{"number":"NDExMTExMTExMTExMTExMQ"}`:   `{"number":"[REDACTED]"}`,
		`{"number":"tok123456789x"}`:            `{"number":"********6789*"}`,
		`{"number":4111111111111112}`:           `{"number":null}`,
		`{"number":{"a":"4111111111111112"}}`:   `{"number":null}`,
		`{"cvv":"123"}`:                         `{"cvv":"[REDACTED]"}`,
		`{"number":"12"}`:                       `{"number":"[REDACTED]"}`,
		`{"number":"411111******1111"}`:         `{"number":"************1111"}`,
		`{"number":"************1111"}`:         `{"number":"************1111"}`,
		`{"number":null,"card_number":""}`:      `{"card_number":"","number":null}`,
	} {
		out := JSONWith([]byte(in), answerFields())
		assert.JSONEq(t, want, string(out), in)
		assert.Equal(t, string(out), string(JSONWith(out, answerFields())), "idempotent: %s", in)
	}
}

// An identifier keeps its digits, never a secret: the client's own, a
// JSON Web Token, a secret named in it.
func TestJSONWithIdentifiersHoldNoSecret(t *testing.T) {
	r := newRedactor([]string{"sk_live_Vb8Nc3Zt6Qp1Ry5K"})
	out := string(r.JSONWith([]byte(`{"id":"ch_1 sk_live_Vb8Nc3Zt6Qp1Ry5K","card_id":"x?access_token=abc123","charge_uuid":"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln"}`), answerFields()))
	assert.NotContains(t, out, "Vb8Nc3Zt6Qp1Ry5K")
	assert.NotContains(t, out, "abc123")
	assert.NotContains(t, out, "eyJzdWIiOiIxIn0")
	assert.Contains(t, out, "ch_1")
}

// Without a list, JSONWith is JSON.
func TestJSONWithoutFieldsIsJSON(t *testing.T) {
	in := []byte(`{"card_id":"4111111111111111","id":4111111111111111,"uuid":"724d9f31-3df0-4ed1-9573-71482498dcfd"}`)
	assert.Equal(t, string(JSON(in)), string(JSONWith(in, nil)))
	assert.Equal(t, string(JSON(in)), string(JSONWith(in, NewFields(nil, nil))))
}

// FuzzJSONWith: any body stored with a codec's list is valid JSON, and
// the card data it names never keeps more than four digits.
func FuzzJSONWith(f *testing.F) {
	f.Add([]byte(`{"card_id":"4111111111111111","card_number":"4111 1111 1111 1111","cvv":"123","id":4111111111111111}`))
	f.Add([]byte(`{"data":{"items":[{"id":"x","number":["4111","1111"]}]},"CARD_NUMBER":"５１０５１０５１０５１０５１００"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		out := JSONWith(b, answerFields())
		if out == nil {
			return
		}
		require.True(t, json.Valid(out), "%q -> %q", b, out)
		var v any
		require.NoError(t, json.Unmarshal(out, &v))
		var walk func(v any)
		walk = func(v any) {
			switch x := v.(type) {
			case map[string]any:
				for k, e := range x {
					if s, ok := e.(string); ok && answerFields().kind(k) == cardDataField {
						digits := 0
						for _, r := range s {
							if digitValue(r) >= 0 {
								digits++
							}
						}
						require.LessOrEqual(t, digits, 4, "%s: %q", k, s)
					}
					walk(e)
				}
			case []any:
				for _, e := range x {
					walk(e)
				}
			}
		}
		walk(v)
	})
}
