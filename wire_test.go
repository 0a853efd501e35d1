package payonce_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/corekit"
	"github.com/payonce/payonce/internal/testsupport/logtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func wireCard() payonce.Card {
	return payonce.Card{Number: "4111111111111111", HolderName: "TEST", ExpirationMonth: "12", ExpirationYear: "2030", CVV: "987"}
}

func TestCardJSONIsMasked(t *testing.T) {
	c := wireCard()
	for name, v := range map[string]any{
		"value": c, "pointer": &c, "slice": []payonce.Card{c},
		"embedded": struct{ payonce.Card }{c},
		"fields": struct {
			N payonce.CardNumber
			V payonce.CVV
		}{c.Number, c.CVV},
	} {
		b, err := json.Marshal(v)
		require.NoError(t, err, name)
		assert.NotContains(t, string(b), "4111111111111111", name)
		assert.NotContains(t, string(b), "987", name)
		assert.Contains(t, string(b), "1111", name)
	}
	b, err := json.Marshal(c)
	require.NoError(t, err)
	assert.Equal(t, `{"number":"************1111","holder_name":"TEST","expiration_month":"12","expiration_year":"2030"}`, string(b))

	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, logtest.Options(slog.LevelInfo))).Info("job", "job", struct{ Card *payonce.Card }{&c})
	assert.NotContains(t, logged.String(), "4111111111111111")
	assert.NotContains(t, logged.String(), "987")
}

func TestMarshalWireFallsBackToJSON(t *testing.T) {
	b, err := corekit.MarshalWire(map[string]string{"card_id": "c1"})
	require.NoError(t, err)
	assert.Equal(t, `{"card_id":"c1"}`, string(b))
}
