package fakeserver

import (
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestWithoutKeyEchoLeavesOutTheKeyAtAnyDepth(t *testing.T) {
	for in, want := range map[string]string{
		`{"charge_uuid":"c1","idempotency_key":"k1","amount":"1.00"}`:                                          `{"charge_uuid":"c1","amount":"1.00"}`,
		`{"data":[{"idempotency_key":"k1","card_id":"c1"},{"card_id":"c2","idempotency_key":"k2"}],"total":2}`: `{"data":[{"card_id":"c1"},{"card_id":"c2"}],"total":2}`,
		`{"code":200,"data":{"card_id":"c<&>","idempotency_key":{"nested":[1,2]}},"n":12345678901234567890}`:   `{"code":200,"data":{"card_id":"c<&>"},"n":12345678901234567890}`,
		`{"idempotency_key":"k"}`:    `{}`,
		`{"note":"idempotency_key"}`: `{"note":"idempotency_key"}`,
		`not json "idempotency_key"`: `not json "idempotency_key"`,
		`{"a":1}`:                    `{"a":1}`,
	} {
		assert.Equal(t, want, string(withoutKeyEcho([]byte(in))), in)
	}
}

func TestDocumentedRequestDropsTheKeyFilter(t *testing.T) {
	r := httptest.NewRequest("GET", "/api/v1/bank/wallet/charges/?wallet_uuid=w&idempotency_key=k&page=2", nil)
	documentedRequest(r)
	assert.Equal(t, "page=2&wallet_uuid=w", r.URL.RawQuery)
	r = httptest.NewRequest("GET", "/x?a=1", nil)
	documentedRequest(r)
	assert.Equal(t, "a=1", r.URL.RawQuery)
}
