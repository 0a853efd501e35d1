package a55

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWebhookRoundTrip(t *testing.T) {
	const secret = "whsec_test"
	now := time.Unix(1_900_000_000, 0)
	body := []byte(`{"charge_uuid":"c1","wallet_uuid":"w1","status":"confirmed","amount":"100.00","extra":true}`)
	h := SignWebhook(secret, now, body)
	assert.Equal(t, "1900000000", h.Get(HeaderWebhookTimestamp))
	assert.Len(t, h.Get(HeaderWebhookSignature), 64)
	require.NoError(t, VerifyWebhook(secret, h, body, now.Add(4*time.Minute)))

	assert.ErrorIs(t, VerifyWebhook(secret, h, append(body, ' '), now), ErrWebhookSignature)
	assert.ErrorIs(t, VerifyWebhook("other", h, body, now), ErrWebhookSignature)
	assert.ErrorIs(t, VerifyWebhook(secret, h, body, now.Add(6*time.Minute)), ErrWebhookTimestamp)
	assert.ErrorIs(t, VerifyWebhook(secret, h, body, now.Add(-6*time.Minute)), ErrWebhookTimestamp)

	moved := h.Clone()
	moved.Set(HeaderWebhookTimestamp, "1900000001")
	assert.ErrorIs(t, VerifyWebhook(secret, moved, body, now), ErrWebhookSignature, "the timestamp is signed")
	missing := h.Clone()
	missing.Del(HeaderWebhookSignature)
	assert.ErrorIs(t, VerifyWebhook(secret, missing, body, now), ErrWebhookSignature)
	missing = h.Clone()
	missing.Del(HeaderWebhookTimestamp)
	assert.ErrorIs(t, VerifyWebhook(secret, missing, body, now), ErrWebhookTimestamp)
	garbled := h.Clone()
	garbled.Set(HeaderWebhookSignature, "zz")
	assert.ErrorIs(t, VerifyWebhook(secret, garbled, body, now), ErrWebhookSignature)

	_, err := NewWebhookVerifier("", nil)
	assert.Error(t, err)
}

func TestWebhookParse(t *testing.T) {
	const secret = "whsec_test"
	now := time.Now()
	v, err := NewWebhookVerifier(secret, func() time.Time { return now })
	require.NoError(t, err)
	assert.NotContains(t, v.String(), secret)
	body := []byte(`{"charge_uuid":"c1","status":"refunded","amount":"12.34"}`)
	req, err := NewSignedWebhookRequest("http://merchant.example/hooks/a55", secret, now, body)
	require.NoError(t, err)

	seen := map[string]bool{} // dedupe on charge_uuid + status
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ev, err := v.Parse(r)
		if err != nil {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		k := ev.ChargeUUID + "/" + string(ev.Status)
		if seen[k] {
			w.WriteHeader(http.StatusOK) // duplicate delivery: acknowledge, do nothing
			return
		}
		seen[k] = true
		assert.Equal(t, "12.34", ev.Amount.String())
		assert.JSONEq(t, string(body), string(ev.Raw))
		w.WriteHeader(http.StatusNoContent)
	})
	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, req)
	assert.Equal(t, http.StatusNoContent, rec.Code)
	req, _ = NewSignedWebhookRequest("http://merchant.example/hooks/a55", secret, now, body)
	rec = httptest.NewRecorder()
	handler.ServeHTTP(rec, req)
	assert.Equal(t, http.StatusOK, rec.Code)
	req, _ = NewSignedWebhookRequest("http://merchant.example/hooks/a55", "wrong", now, body)
	rec = httptest.NewRecorder()
	handler.ServeHTTP(rec, req)
	assert.Equal(t, http.StatusUnauthorized, rec.Code)
}

// A webhook event printed or logged does not show card data the sender put
// in the body, under any verb; Raw still holds the verified bytes.
func TestPrintedWebhookEventHidesEchoedCardData(t *testing.T) {
	v, err := NewWebhookVerifier("whsec", nil)
	require.NoError(t, err)
	body := []byte(`{"charge_uuid":"c1","status":"confirmed","card":{"number":"4111111111111111","cvv":"123"}}`)
	req := httptest.NewRequest("POST", "/wh", bytes.NewReader(body))
	for k, vs := range SignWebhook("whsec", time.Now(), body) {
		req.Header[k] = vs
	}
	ev, err := v.Parse(req)
	require.NoError(t, err)
	for _, x := range []any{ev, *ev, ev.Raw} {
		for _, verb := range []string{"%v", "%+v", "%s", "%q", "%x", "%#v"} {
			out := fmt.Sprintf(verb, x)
			assert.NotContains(t, out, "4111111111111111", verb)
			assert.NotContains(t, out, `"123"`, verb)
			assert.NotContains(t, out, "52 49 49 49", verb)
			assert.NotContains(t, out, "34313131", verb)
		}
	}
	assert.Equal(t, body, []byte(ev.Raw))
}

// A parsed event prints nothing of its delivery's signature.
func TestWebhookEventPrintsNoSignature(t *testing.T) {
	now := time.Now()
	v, err := NewWebhookVerifier("whsec-print", func() time.Time { return now })
	require.NoError(t, err)
	body := []byte(`{"charge_uuid":"c1","status":"confirmed","description":"order-42"}`)
	r, err := NewSignedWebhookRequest("http://127.0.0.1/hooks", "whsec-print", now, body)
	require.NoError(t, err)
	ev, err := v.Parse(r)
	require.NoError(t, err)
	sig := r.Header.Get(HeaderWebhookSignature)
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		assert.NotContains(t, fmt.Sprintf(verb, ev), sig, verb)
		assert.NotContains(t, fmt.Sprintf(verb, *ev), sig, verb)
	}
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("hook", "event", ev)
	assert.NotContains(t, buf.String(), sig)
	assert.Equal(t, "order-42", ev.Description)
}
