package coinepay

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce/redact"
)

// decodeBodies are answers for decodeOnce to read as the envelope-then-data
// path reads them: usual ones, and the ones a hostile or broken server may
// send (members given twice, names in other cases or escaped, wrong types,
// nulls, failures with data, times that are not RFC 3339).
var decodeBodies = []string{
	`{"code":200,"message":"ok","message_key":"success","data":{"card_id":"c1","balance":"1.00","fee":"2.00","account_balance":"3.00","created_at":"2026-12-02T00:16:04.258560323Z"}}`,
	`{"code":"200","data":{"card_id":"c1"}}`,
	`{"data":{"card_id":"c1","recharge_id":"r1","amount":"5.00","card_balance":"6.00"}}`,
	` { "code" : 200 , "data" : { "card_id" : "c1" } } `,
	`{"code":200,"data":{"card_id":"first","fee":"9.00"},"data":{"card_id":"second"}}`,
	`{"code":200,"data":{"card_id":"c1"},"Data":{"card_id":"c2"}}`,
	`{"code":200,"DATA":{"card_id":"c1"}}`,
	`{"code":200,"d\u0061ta":{"card_id":"c1"}}`,
	`{"code":200,"dat\u0041":{"card_id":"c1"},"data":null}`,
	`{"code":200,"data":{"card_id":"c1"},"data":null}`,
	`{"code":200,"data":null}`,
	`{"code":200}`,
	`{"code":200,"data":{}}`,
	`{"code":200,"data":[]}`,
	`{"code":200,"data":"c1"}`,
	`{"code":200,"data":{"card_id":7}}`,
	`{"code":200,"data":{"card_id":"c1","balance":"abc"}}`,
	`{"code":200,"data":{"card_id":"c1","balance":1.5}}`,
	`{"code":200,"data":{"card_id":"c1","created_at":"yesterday"}}`,
	`{"code":200,"data":{"card_id":"c1","created_at":"2026-12-02T00:16:04+08:00"}}`,
	`{"code":200,"data":{"card_id":"c1","created_at":"2026-12-02t00:16:04z"}}`,
	`{"code":200,"data":{"card_id":"c1","created_at":"\u0032026-12-02T00:16:04Z"}}`,
	`{"code":200,"data":{"card_id":"c1","created_at":12}}`,
	`{"code":200,"data":{"card_id":"c1","created_at":"2026-12-02T00:16:04Z","created_at":null}}`,
	`{"code":200,"data":{"card_id":"c1","card_id":"c2"}}`,
	`{"code":200,"data":{"card_id":"c1","note":"a \"quoted\" } { ] [ text"}}`,
	`{"code":200,"data":{"card_id":"c1","nested":{"data":{"card_id":"x"}},"list":[{"a":[1,2,{"b":"]"}]}]}}`,
	`{"code":409,"message":"Idempotency-Key 冲突","message_key":"openapi_idempotency_key_conflict","data":null}`,
	`{"code":"400","message_key":"insufficient_balance","data":{"card_id":"c1"}}`,
	`{"code":500,"message_key":"x","data":{"card_id":7}}`,
	`{"code":500,"message_key":7,"data":{"card_id":"c1"}}`,
	`{"code":"abc","data":{"card_id":"c1"}}`,
	`{"code":"abc","code":200,"data":{"card_id":"c1"}}`,
	`{"code":200,"code":500,"message_key":"openapi_internal_error","data":{"card_id":"c1"}}`,
	`{"code":200.5,"data":{"card_id":"c1"}}`,
	`{"code":null,"data":{"card_id":"c1"}}`,
	`{"code":true,"data":{"card_id":"c1"}}`,
	`{"code":200,"message":{"zh":"好"},"message_key":"success","data":{"card_id":"c1"}}`,
	`{"code":404,"message":"a","message":5,"message_key":"openapi_card_not_found"}`,
	`{"code":200,"request_id":"req_1","request_id":"req_2","data":{"card_id":"c1"}}`,
	`{"code":200,"data":{"card_id":"c1","card_number":"4111111111111111","cvv":"123"}}`,
	`null`,
	`[]`,
	`"text"`,
	`12`,
	`<html>`,
	`{"code":200,"data":{"card_id":"c1"}} trailing`,
	`{"code":200,"data":{"card_id":"c1"`,
	"{\"code\":200,\"data\":{\"card_id\":\"c\xff1\"}}",
}

// decodeOutputs makes a fresh out of each type decodeOnce reads.
var decodeOutputs = []func() any{
	func() any { return new(applyData) },
	func() any { return new(Card) },
	func() any { return new(Recharge) },
}

// checkDecodeOnce requires decodeOnce, where it reads body, to give what
// the envelope-then-data path gives: the same error and the same out,
// Raw included.
func checkDecodeOnce(t *testing.T, body []byte) {
	for _, mk := range decodeOutputs {
		once, slow := mk(), mk()
		done, err := decodeOnce(body, once)
		if !done {
			continue
		}
		want := decodeEnvelopeThenData(body, slow)
		if want == nil {
			require.NoError(t, err, "%T %s", once, body)
			require.Equal(t, slow, once, "%T %s", once, body)
			continue
		}
		require.Error(t, err, "%T %s", once, body)
		assert.Equal(t, fmt.Sprintf("%#v", want), fmt.Sprintf("%#v", err), "%T %s", once, body)
	}
}

func TestDecodeOnceReadsAsEnvelopeThenData(t *testing.T) {
	for _, body := range decodeBodies {
		checkDecodeOnce(t, []byte(body))
	}
}

func FuzzDecodeOnce(f *testing.F) {
	for _, body := range decodeBodies {
		f.Add([]byte(body))
	}
	f.Fuzz(func(t *testing.T, body []byte) { checkDecodeOnce(t, body) })
}

// The usual answer is read in one pass, and a data member given twice is
// left to the other path, which keeps the last one whole: nothing of the
// first survives in the card, its cost or Raw.
func TestDecodeOnceTakesTheUsualAnswerAndLeavesDuplicates(t *testing.T) {
	var d applyData
	done, err := decodeOnce([]byte(decodeBodies[0]), &d)
	require.True(t, done)
	require.NoError(t, err)
	assert.Equal(t, "c1", d.CardID)
	assert.Equal(t, "2.00", d.Cost.Fee.String())
	assert.Equal(t, "3.00", d.Cost.AccountBalance.String())
	assert.Equal(t, time.Date(2026, 12, 2, 0, 16, 4, 258560323, time.UTC), d.CreatedAt.UTC())

	dup := []byte(`{"code":200,"data":{"card_id":"first","fee":"9.00"},"data":{"card_id":"second"}}`)
	done, _ = decodeOnce(dup, new(applyData))
	assert.False(t, done, "two data members: left to the envelope-then-data path")
	require.NoError(t, Codec{}.DecodeSuccess(200, nil, dup, &d))
	assert.Equal(t, "second", d.CardID)
	assert.True(t, d.Cost.Fee.IsZero(), "nothing of the first data member")
	assert.Equal(t, `{"card_id":"second"}`, string(d.Raw))
}

// Raw holds the whole data object as sent, fee and balance included (a
// copy: the body it came from may be reused), and prints redacted.
func TestApplyRawIsTheDataObject(t *testing.T) {
	data := `{"account_balance":"999.00","card_id":"card_1","card_number":"4111111111111111","cvv":"123","fee":"1.00"}`
	body := []byte(`{"code":200,"message":"ok","data":` + data + `}`)
	var d applyData
	require.NoError(t, Codec{}.DecodeSuccess(200, nil, body, &d))
	assert.Equal(t, data, string(d.Raw))
	for i := range body {
		body[i] = 'x'
	}
	assert.Equal(t, data, string(d.Raw), "Raw is a copy")
	res := ApplyResult{Card: d.Card, Fee: d.Cost.Fee, AccountBalance: d.Cost.AccountBalance}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		out := fmt.Sprintf(verb, res)
		assert.NotContains(t, out, "4111111111111111", verb)
		assert.False(t, strings.Contains(out, `"cvv":"123"`), verb)
	}
	var _ redact.RawJSON = d.Raw
}
