package a55_test

import (
	"net/http"
	"testing"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
)

// FuzzCodecDecoding feeds arbitrary answers to the A55 codec (general and
// charge-level error shapes, charges): it must never panic.
func FuzzCodecDecoding(f *testing.F) {
	f.Add(200, []byte(`{"charge_uuid":"c1","status":"confirmed","amount":"100.00","currency":"BRL"}`))
	f.Add(409, []byte(`{"charge_uuid":"c1","status":"error","message":[{"code":"CANCEL_NOT_ALLOWED","source":"charge","description":"x"}]}`))
	f.Add(429, []byte(`{"error":{"code":"RATE_LIMIT_EXCEEDED","message":"slow","details":[{"field":"a","reason":"b"}]},"request_id":"req_1"}`))
	f.Add(400, []byte(`{"charge_uuid":"c1","status":"error","message":"PROCESSING_ERROR"}`))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		var ch a55.Charge
		_ = a55.Codec{}.DecodeSuccess(status, http.Header{}, body, &ch)
		e := &payonce.APIError{}
		a55.Codec{}.DecodeError(status, http.Header{}, body, e)
		_ = e.Error()
	})
}
