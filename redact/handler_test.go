package redact

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The core's debug lines name the key in an idempotency_key attribute:
// the redacting handler leaves it readable, and still redacts the rest.
func TestRedactingHandlerKeepsKey(t *testing.T) {
	var buf strings.Builder
	log := slog.New(NewHandler(slog.NewTextHandler(&buf, nil)))
	log.Info("attempt card 4111 1111 1111 1111", slog.String("idempotency_key", "order:4222222222222"),
		slog.String("note", "order:4222222222222"))
	out := buf.String()
	assert.Contains(t, out, "idempotency_key=order:4222222222222")
	assert.Contains(t, out, "note=order:*********2222")
	assert.NotContains(t, out, "4111 1111")
}

// Log attributes named like secrets in any casing or spelling
// (clientSecret, accessToken, api-key, X-Api-Key, hmac_secret,
// userPassword, Card-Number) are hidden whole, whatever their value
// looks like.
func TestRedactingHandlerSecretAttrNames(t *testing.T) {
	var buf strings.Builder
	log := slog.New(NewHandler(slog.NewJSONHandler(&buf, nil)))
	names := []string{"clientSecret", "accessToken", "api-key", "X-Api-Key", "hmac_secret", "userPassword",
		"Card-Number", "CVV", "sessionToken", "Authorization", "webhook_signature"}
	for _, n := range names {
		log.Info("x", slog.String(n, "plainvalue42"), slog.Group("g", slog.String(n, "plainvalue42")))
	}
	log.Info("x", slog.String("token_type", "Bearer"), slog.String("description", "plainvalue43"))
	out := buf.String()
	assert.NotContains(t, out, "plainvalue42")
	assert.Contains(t, out, "plainvalue43", "other names are kept")
}
