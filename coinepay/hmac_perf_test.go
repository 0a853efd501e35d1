package coinepay

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The signer reuses keyed HMAC states: signatures made concurrently and
// one after the other stay exactly Sign(secret, canonical), and the four
// header values it sets stay apart.
func TestHMACSignerReusedStatesSignLikeSign(t *testing.T) {
	s, err := NewHMACSigner("demo-key", "demo-secret")
	require.NoError(t, err)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				body := fmt.Sprintf(`{"card_id":"c%d","amount":"%d.00"}`, g, i)
				req := httptest.NewRequest("POST", "http://x/api/v1/openapi/card/recharge?b=2&a=1", strings.NewReader(body))
				if !assert.NoError(t, s.Sign(req, []byte(body))) {
					return
				}
				h := req.Header
				canonical := CanonicalString("POST", "/api/v1/openapi/card/recharge", "b=2&a=1", h.Get(HeaderTimestamp), h.Get(HeaderNonce), []byte(body))
				assert.Equal(t, Sign([]byte("demo-secret"), canonical), h.Get(HeaderSignature))
				assert.Equal(t, "demo-key", h.Get(HeaderAPIKey))
				h.Add(HeaderAPIKey, "second")
				assert.Len(t, h.Get(HeaderTimestamp), 10, "an append to one header leaves the next alone")
				assert.Len(t, h.Get(HeaderNonce), 32)
			}
		}()
	}
	wg.Wait()
}
