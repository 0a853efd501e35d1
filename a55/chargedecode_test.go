package a55

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// chargeBodies are charge answers for decodeCharge to read as
// json.Unmarshal into a Charge reads them: usual ones, and the ones a
// hostile or broken server may send.
var chargeBodies = []string{
	`{"charge_uuid":"53213ba7","wallet_uuid":"f562a9bb","status":"confirmed","amount":"100.00","captured_amount":"100.00",` +
		`"refunded_amount":"0.00","currency":"BRL","type_charge":"credit_card","capture":true,"card":{"last4":"1111",` +
		`"holder_name":"TEST","expiration_month":"12","expiration_year":"2099"},"message":[],` +
		`"created_at":"2026-12-02T00:13:27.258965821Z","updated_at":"2026-12-02T00:13:27.258965821Z","idempotency_key":"78bca468"}`,
	`{"charge_uuid":"c1","card":{"number":"4111111111111111","last4":"4111 1111 1111 1111","brand":"visa 4111111111111111","holder_name":"Ana"}}`,
	`{"charge_uuid":"c1","card":{"number":"4111111111111111"},"card":{"last4":"1111"}}`,
	`{"charge_uuid":"c1","card":{"number":"4111111111111111"},"Card":{"last4":"1111"}}`,
	`{"charge_uuid":"c1","card":{"number":"4111111111111111","number":"5555555555554444"}}`,
	`{"charge_uuid":"c1","card":null}`,
	`{"charge_uuid":"c1","card":{"number":"4111111111111111"},"card":null}`,
	`{"charge_uuid":"c1","card":[]}`,
	`{"charge_uuid":"c1","card":{"last4":5}}`,
	`{"charge_uuid":"c1","c\u0061rd":{"number":"4111111111111111"}}`,
	`{"charge_uuid":"c1","status":"error","message":[{"code":"card_declined","description":"cvv 123 for 4111111111111111"}]}`,
	`{"charge_uuid":"c1","message":"declined"}`,
	`{"charge_uuid":"c1","message":{"code":"x"}}`,
	`{"charge_uuid":"c1","message":7}`,
	`{"charge_uuid":"c1","amount":"abc"}`,
	`{"charge_uuid":"c1","amount":12.5,"amount":"1.00"}`,
	`{"charge_uuid":"c1","charge_uuid":"c2","payer":{"name":"a"},"payer":{"email":"b"}}`,
	`{"charge_uuid":"c1","created_at":"yesterday"}`,
	`{"charge_uuid":"c1","installment_count":"3"}`,
	`{}`,
	`null`,
	`[]`,
	`"x"`,
	`<html>`,
	`{"charge_uuid":"c1"} x`,
}

// checkDecodeCharge requires decodeCharge, where it reads body, to give
// what json.Unmarshal gives.
func checkDecodeCharge(t *testing.T, body []byte) {
	var once, want Charge
	if !decodeCharge(body, &once) {
		return
	}
	require.NoError(t, json.Unmarshal(body, &want), "%s", body)
	require.Equal(t, want, once, "%s", body)
}

func TestDecodeChargeReadsAsUnmarshal(t *testing.T) {
	for _, b := range chargeBodies {
		checkDecodeCharge(t, []byte(b))
	}
	var ch Charge
	require.True(t, decodeCharge([]byte(chargeBodies[1]), &ch), "the usual answer is read in one pass")
	assert.Equal(t, "1111", ch.Card.Last4)
	assert.Equal(t, "1111", ch.Card.Number.Last4())
	assert.NotContains(t, ch.Card.Brand, "4111111111111111")
	assert.False(t, decodeCharge([]byte(chargeBodies[2]), &ch), "a card given twice: left to json.Unmarshal")
	require.NoError(t, Codec{}.DecodeSuccess(200, nil, []byte(chargeBodies[2]), &ch))
	assert.Empty(t, ch.Card.Number, "the last card member whole: nothing of the first")
}

func FuzzDecodeCharge(f *testing.F) {
	for _, b := range chargeBodies {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, body []byte) { checkDecodeCharge(t, body) })
}

// An empty message list reads as encoding/json reads it into a slice:
// empty, not nil, whether or not it is spaced.
func TestEmptyMessagesReadAsASlice(t *testing.T) {
	var want []Message
	require.NoError(t, json.Unmarshal([]byte(`[]`), &want))
	for _, b := range []string{`[]`, ` [ ] `, "[\n]"} {
		var m Messages
		require.NoError(t, json.Unmarshal([]byte(b), &m))
		assert.NotNil(t, m, b)
		assert.Equal(t, Messages(want), m, b)
	}
}
