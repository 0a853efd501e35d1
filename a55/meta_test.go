package a55

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/payoncetest"
	"github.com/payonce/payonce/redact"
)

// A charge printed or logged, its ResponseMeta included, shows the rate
// limit and never what the answer's headers echoed: card data, a cookie.
func TestChargeMetaPrintedHidesEchoedHeaders(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("X-Echo-Card", "4111111111111111 cvv 737")
		h.Set("Set-Cookie", "sid=topsecretsessionvalue")
		h.Set("X-RateLimit-Limit", "100")
		h.Set("X-RateLimit-Remaining", "99")
		_, _ = io.WriteString(w, `{"charge_uuid":"ch_1","status":"confirmed"}`)
	}))
	defer srv.Close()
	c, err := NewClient(AccessToken("fixed-token-value"), payonce.WithBaseURL(srv.URL), payonce.WithRetryPolicy(fastPolicy()),
		payoncetest.ClientClock(func() time.Time { return guideTime }))
	require.NoError(t, err)
	ch, err := c.Charges.Create(context.Background(), refCharge())
	require.NoError(t, err)
	require.Equal(t, 99, ch.Meta.RateLimit.Remaining)
	// What is printed of the echo holds no digit of the CVV.
	assert.NotContains(t, redact.Header(ch.Meta.Header).Get("X-Echo-Card"), "737")

	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("charged", "meta", ch.Meta, "charge", ch)
	outs := []string{logged.String()}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q"} {
		outs = append(outs, fmt.Sprintf(verb, ch.Meta), fmt.Sprintf(verb, ch), fmt.Sprintf(verb, *ch))
	}
	for _, out := range outs {
		// The CVV with its label: the output also holds a random key and
		// the call's duration, whose digits hold "737" now and then.
		for _, leak := range []string{"4111111111111111", "cvv 737", "topsecretsessionvalue", "fixed-token-value"} {
			assert.NotContains(t, out, leak)
		}
	}
	assert.Contains(t, fmt.Sprintf("%+v", ch.Meta), "Remaining:99")
	assert.Contains(t, fmt.Sprintf("%v", ch.Meta), ch.Meta.Key.String())
	assert.Contains(t, fmt.Sprintf("%#v", ch.Meta), "a55.ResponseMeta{Meta:payonce.Meta{")
	assert.Contains(t, logged.String(), `"remaining":99`)
}

// A ResponseMeta written as JSON keeps its rate limit (the embedded
// payonce.Meta's MarshalJSON, promoted, would write the Meta alone) and
// hides the echoed headers as payonce.Meta's JSON does.
func TestResponseMetaAsJSONKeepsTheRateLimit(t *testing.T) {
	m := ResponseMeta{
		Meta:      payonce.Meta{StatusCode: 200, Header: http.Header{"X-Echo-Card": {"4111111111111111"}, "Set-Cookie": {"sid=topsecretsessionvalue"}}},
		RateLimit: RateLimit{Limit: 100, Remaining: 99},
	}
	for _, v := range []any{m, ChargePage{Meta: m}} {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		assert.Contains(t, string(b), `"Remaining":99`)
		assert.Contains(t, string(b), `"StatusCode":200`)
		assert.NotContains(t, string(b), "4111111111111111")
		assert.NotContains(t, string(b), "topsecretsessionvalue")
	}
}
