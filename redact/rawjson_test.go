package redact

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/payonce/payonce/internal/testsupport/logtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRawJSONKeepsBytesAndPrintsRedacted(t *testing.T) {
	in := []byte(`{"x":{"card_number":"4111111111111111","cvv":"123","n":1}}`)
	var v struct {
		X RawJSON `json:"x"`
	}
	require.NoError(t, json.Unmarshal(in, &v))
	assert.JSONEq(t, `{"card_number":"4111111111111111","cvv":"123","n":1}`, string(v.X))
	out, err := json.Marshal(v)
	require.NoError(t, err)
	assert.JSONEq(t, string(in), string(out), "marshals back unchanged")

	var empty struct{ X RawJSON }
	out, err = json.Marshal(empty)
	require.NoError(t, err)
	assert.Equal(t, `{"X":null}`, string(out))

	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, logtest.Options(slog.LevelInfo))).Info("card", "raw", v.X)
	assert.NotContains(t, buf.String(), "4111111111111111")
	assert.NotContains(t, buf.String(), `123`)
	assert.Equal(t, String(string(v.X)), v.X.String())
}
