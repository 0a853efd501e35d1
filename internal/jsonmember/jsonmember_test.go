package jsonmember

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var bodies = []string{
	`{"data":{"a":1}}`,
	` { "x" : [1, {"data": 2}] , "data" : "s" } `,
	`{"data":1,"data":2}`,
	`{"data":1,"Data":2,"DATA":3}`,
	`{"d\u0061ta":true}`,
	`{"dat\u0041":null,"x":"\"data\":"}`,
	`{"dataa":1,"dat":2}`,
	`{"ｄata":1}`,
	`{"data":"a \\\" } ] [ {","b":{"c":[[],{}]}}`,
	`{}`,
	`{"data":-1.5e3}`,
	"{\"da\xffta\":1,\"data\":[\"\xff\"]}",
	`[{"data":1}]`,
	`"data"`,
	`null`,
}

// check requires Last to find what encoding/json decodes into a field
// tagged "data": the last member whose name matches, byte for byte.
func check(t *testing.T, body []byte) {
	if !json.Valid(body) {
		return
	}
	val, n, isObject := Last(body, "data")
	var v struct {
		Data json.RawMessage `json:"data"`
	}
	err := json.Unmarshal(body, &v)
	if !isObject {
		assert.NotEqual(t, byte('{'), bytes.TrimSpace(body)[0], "%s", body)
		return
	}
	require.NoError(t, err, "%s", body)
	assert.Equal(t, n > 0, v.Data != nil, "%s", body)
	assert.Equal(t, string(v.Data), string(val), "%s", body)
}

func TestLastMatchesEncodingJSON(t *testing.T) {
	for _, b := range bodies {
		check(t, []byte(b))
	}
	_, n, ok := Last([]byte(`{"data":1,"Data":2}`), "data")
	assert.True(t, ok)
	assert.Equal(t, 2, n)
}

func FuzzLast(f *testing.F) {
	for _, b := range bodies {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, body []byte) { check(t, body) })
}

// MayRepeat is false only where Last finds the name at most once.
func checkMayRepeat(t *testing.T, body []byte) {
	if !json.Valid(body) {
		return
	}
	_, n, _ := Last(body, "data")
	if !MayRepeat(body, "data") {
		assert.LessOrEqual(t, n, 1, "%s", body)
	}
}

func TestMayRepeat(t *testing.T) {
	for _, b := range bodies {
		checkMayRepeat(t, []byte(b))
	}
	assert.False(t, MayRepeat([]byte(`{"data":{"x":"y"},"z":"dat"}`), "data"))
	assert.True(t, MayRepeat([]byte(`{"data":1,"DATA":2}`), "data"))
	assert.True(t, MayRepeat([]byte(`{"data":1,"x":"data"}`), "data"), "a value counts too: true is not certain")
	assert.True(t, MayRepeat([]byte(`{"d\u0061ta":1}`), "data"), "an escape: not certain")
}

func FuzzMayRepeat(f *testing.F) {
	for _, b := range bodies {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, body []byte) { checkMayRepeat(t, body) })
}
