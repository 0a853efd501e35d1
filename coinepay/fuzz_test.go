package coinepay_test

import (
	"net/http"
	"testing"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/coinepay"
)

// FuzzEnvelopeDecoding feeds arbitrary answers to the envelope codec: it
// must never panic, and an error answer always gets a kind.
func FuzzEnvelopeDecoding(f *testing.F) {
	f.Add(200, []byte(`{"code":200,"message":"ok","message_key":"success","data":{"card_id":"c1","balance":"1.00"}}`))
	f.Add(409, []byte(`{"code":409,"message":"Idempotency-Key 冲突","message_key":"openapi_idempotency_key_conflict","data":null}`))
	f.Add(200, []byte(`{"code":"400","message_key":"insufficient_balance","data":null}`))
	f.Add(500, []byte(`<html>`))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		var card coinepay.Card
		_ = coinepay.Codec{}.DecodeSuccess(status, http.Header{}, body, &card)
		e := &payonce.APIError{}
		coinepay.Codec{}.DecodeError(status, http.Header{}, body, e)
		_ = e.Error()
	})
}
