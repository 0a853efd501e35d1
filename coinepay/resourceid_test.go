package coinepay_test

import (
	"testing"

	"github.com/payonce/payonce/coinepay"
	"github.com/stretchr/testify/assert"
)

func TestCodecNamesTheCardOfAnApplyAndTheRecharge(t *testing.T) {
	for _, tc := range []struct{ op, body, want string }{
		{"cards.apply", `{"code":200,"data":{"card_id":"card_1","header_id":"h"}}`, "card_1"},
		{"cards.recharge", `{"code":200,"data":{"recharge_id":"rch_1","card_id":"card_1"}}`, "rch_1"},
		{"cards.apply", `{"code":400,"message_key":"openapi_package_not_found","data":null}`, ""},
		{"cards.apply", `{"data":{"card_id":12}}`, ""},
		{"cards.apply", `{"data":[1]}`, ""},
		{"cards.info", `{"data":{"card_id":"card_1"}}`, ""},
		{"cards.apply", `not json`, ""},
	} {
		assert.Equal(t, tc.want, coinepay.Codec{}.ResourceID(tc.op, []byte(tc.body)), tc.op+" "+tc.body)
	}
}
