package redact_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/payonce/payonce/redact"
)

func TestHeader(t *testing.T) {
	assert.Nil(t, redact.Header(nil))
	in := http.Header{
		"Authorization":   {"Bearer abc.def.ghi"},
		"X-Api-Key":       {"demo-key"},
		"X-Signature":     {"67a3222a"},
		"Set-Cookie":      {"sid=1", "other=2"},
		"X-Echo":          {"4111 1111 1111 1111"},
		"Location":        {"https://pay.example/v1/x?token=abc"},
		"Idempotency-Key": {"550e8400-e29b-41d4-a716-446655440000"},
		"Content-Type":    {"application/json"},
	}
	out := redact.Header(in)
	assert.Equal(t, []string{"[REDACTED]"}, out["Authorization"])
	assert.Equal(t, []string{"[REDACTED]"}, out["X-Api-Key"])
	assert.Equal(t, []string{"[REDACTED]"}, out["X-Signature"])
	assert.Equal(t, []string{"[REDACTED]", "[REDACTED]"}, out["Set-Cookie"])
	assert.NotContains(t, out.Get("X-Echo"), "4111 1111 1111 1111")
	assert.Contains(t, out.Get("X-Echo"), "1111")
	assert.Equal(t, "https://pay.example/v1/x?[REDACTED]", out.Get("Location"))
	assert.Equal(t, in["Idempotency-Key"], out["Idempotency-Key"])
	assert.Equal(t, in["Content-Type"], out["Content-Type"])
	// A copy: the caller's header is untouched.
	assert.Equal(t, "Bearer abc.def.ghi", in.Get("Authorization"))
}
