package redact

import (
	"log/slog"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
)

// digitsOf keeps the ASCII and Unicode decimal digits of s, as ASCII.
func digitsOf(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsDigit(r) {
			if r > '9' {
				r = '0' + (r-'0')%10 // good enough for the scripts used below
			}
			b.WriteRune(r)
		}
	}
	return b.String()
}

// A card number split by any character a server (or a careless merchant
// template) may put between its digits, or glued to a word, keeps at most
// its last four digits.
func TestRedactCardNumberAnySeparator(t *testing.T) {
	for _, sep := range []string{".", "/", "_", "+", "\t", "\n", "\r\n", "\u3000", "\u2003", "\u200b", "\u200c",
		"\u200d", "\u2060", "\ufeff", "\u00ad", " . ", " / ", "\u2043"} {
		for _, in := range []string{
			"4111" + sep + "1111" + sep + "1111" + sep + "1111",
			"4" + strings.Join(strings.Split("111111111111111", ""), sep) + "",
		} {
			got := String("card " + in + " refused")
			assert.NotContains(t, digitsOf(got), "41111111", "%q -> %q", in, got)
			assert.Equal(t, got, String(got), "idempotent")
		}
	}
	for _, in := range []string{"4111-1111-1111-1111a", "a4111 1111 1111 1111", "x4111.1111.1111.1111y",
		"card:4111-1111-1111-1111abc", "pan4111 1111 1111 1111", "4111 1111 1111 1111x 123"} {
		got := String(in)
		assert.NotContains(t, digitsOf(got), "41111111", "%q -> %q", in, got)
	}
}

// What a merchant needs to read in an error or a log line survives
// redaction: UUIDs (charge and wallet IDs, keys), request and trace IDs,
// dates, times, amounts and addresses.
func TestRedactKeepsIdentifiers(t *testing.T) {
	for _, s := range []string{
		"charge 550e8400-e29b-41d4-a716-446655440000 paid",
		"wallet 9b2d7a54-0c1e-4f7a-8d3b-123456789012",
		"key charges.create:550e8400-e29b-41d4-a716-446655440000",
		"request req_01HF3K2M9Q",
		"traceparent 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"at 2026-11-29T11:35:40.123456789Z",
		"Date: Sun, 29 Nov 2026 11:35:40 GMT",
		"due 29/11/2026 and 2026/11/29 or 29.11.2026",
		"amount 1234.56 BRL, R$ 1.234.567,89",
		"from 192.168.100.200:8080",
		"version 1.26.3",
	} {
		assert.Equal(t, s, String(s))
	}
}

// A bare JWT (header.payload.signature) is a bearer token even without a
// name in front of it.
func TestRedactBareJWT(t *testing.T) {
	jwt := "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJtZXJjaGFudCJ9.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
	for _, in := range []string{jwt, "got " + jwt + " back", `{"jwt":"` + jwt + `"}`, "bearer:" + jwt} {
		got := String(in)
		assert.NotContains(t, got, "SflKxwRJSMeKKF2QT4fw", in)
		assert.NotContains(t, got, "eyJzdWIiOiJtZXJjaGFudCJ9", in)
		assert.Equal(t, got, String(got), "idempotent")
	}
}

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

// Secret names in camelCase (hmacSecret, sessionToken, userPassword), as
// JavaScript and Java servers echo them, hide their values like the
// snake_case ones; a camelCase name ending in Key (idempotencyKey) is no
// secret.
func TestRedactCamelCaseNames(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"hmacSecret=abc123", "hmacSecret=[REDACTED]"},
		{`{"sessionToken":"st_live_42"}`, `{"sessionToken":"[REDACTED]"}`},
		{"userPassword: hunter2", "userPassword: [REDACTED]"},
		{"cardCvv=123 ok", "cardCvv=[REDACTED] ok"},
		{"webhookSignature=abc", "webhookSignature=[REDACTED]"},
		{"idempotencyKey: order-1", "idempotencyKey: order-1"},
		{"pinned=1 tokens=2", "pinned=1 tokens=2"},
	} {
		got := String(c.in)
		assert.Equal(t, c.want, got, c.in)
		assert.Equal(t, got, String(got))
	}
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

// Credentials written into a URL (https://user:password@host) are
// hidden; the host stays readable.
func TestRedactURLUserinfo(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"proxy https://merchant:s3cr3t_pw@api.test/v1 refused", "proxy https://[REDACTED]@api.test/v1 refused"},
		{"HTTP://a:b@h.test", "HTTP://[REDACTED]@h.test"},
		{"postgres://postgres:pw42@127.0.0.1:5432/test", "postgres://[REDACTED]@127.0.0.1:5432/test"},
		{"mail user@example.test", "mail user@example.test"},
	} {
		got := String(c.in)
		assert.Equal(t, c.want, got)
		assert.Equal(t, got, String(got))
	}
}
