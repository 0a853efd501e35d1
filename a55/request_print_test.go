package a55

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A charge request's webhook URL may carry the merchant's own secret in
// its query string (?token=...): no printed form of the request shows it,
// %#v and %d included, and the card stays masked.
func TestPrintedRequestHidesWebhookQuery(t *testing.T) {
	req := seedCharge()
	req.WebhookURL = "https://merchant.example/hooks/a55?token=whsec_merchant_42"
	for _, v := range []any{req, *req} {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%d", "%x"} {
			s := fmt.Sprintf(verb, v)
			assert.NotContains(t, s, "whsec_merchant_42", verb)
			assert.NotContains(t, s, "4111111111111111", verb)
		}
	}
	assert.Contains(t, fmt.Sprintf("%#v", req), "a55.ChargeCreateRequest{")
}
