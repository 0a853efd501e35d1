package redact

import (
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"

	"github.com/payonce/payonce/internal/luhn"
)

func TestRedactString(t *testing.T) {
	cases := map[string]string{
		"card 4111111111111111 ok":                     "card ************1111 ok",
		"short 12345 and long 12345678901234567890123": "short 12345 and long ***********************",
		`{"cvv":"123","client_secret":"abc"}`:          `{"cvv":"[REDACTED]","client_secret":"[REDACTED]"}`,
		"Authorization: Bearer eyJhbGciOi.x.y":         "Authorization: [REDACTED]",
		"got bearer abc.def":                           "got bearer [REDACTED]",
		"GET https://api.x/charge/?charge_uuid=1&t=2":  "GET https://api.x/charge/?[REDACTED]",
		"token=tok_1&x=1":                              "token=[REDACTED]&x=1",
		"nothing here":                                 "nothing here",
	}
	for in, want := range cases {
		assert.Equal(t, want, String(in), in)
	}
}

// Hostile echoes: whatever a server sends back, no card number, CVV,
// secret, token or query string survives String, and redacting
// twice changes nothing.
func TestRedactStringHostileEchoes(t *testing.T) {
	cases := []struct{ in, want string }{
		{"card 4111 1111 1111 1111 refused", "card **** **** **** 1111 refused"},
		{"card 4111-1111-1111-1111", "card ****-****-****-1111"},
		{"pan 4111 1111 1111 1111 123", "pan **** **** **** **** ***"},
		{"amex 3782 822463 10005", "amex **** ****** *****"},
		{"13 digits 4222222222222 x", "13 digits *********2222 x"},
		{"19 digits 6011000990139424123", "19 digits *******************"}, // a card number and its CVV glued
		{"order 1234567890123456 and 12345678901234567", "order 1234567890123456 and 12345678901234567"},
		{"spaced 4111  1111  1111  1111", "spaced ****  ****  ****  1111"},
		{"full-width ４１１１１１１１１１１１１１１１", "full-width ************１１１１"},
		{"nbsp 4111\u00a01111\u00a01111\u00a01111", "nbsp ****\u00a0****\u00a0****\u00a01111"},
		{"date 2026-11-29 and amount 100.00", "date 2026-11-29 and amount 100.00"},
		{"phone 11 91234", "phone 11 91234"},
		{"cvv: 123", "cvv: [REDACTED]"},
		{"CVV=1234", "CVV=[REDACTED]"},
		{`"cvv":"123"`, `"cvv":"[REDACTED]"`},
		{`{\"cvv\":\"123\"}`, `{\"cvv\":\"[REDACTED]\"}`},
		{`'cvc': '999'`, `'cvc': '[REDACTED]'`},
		{"cvc=123&x=1", "cvc=[REDACTED]&x=1"},
		{"bad cvv 123 given", "bad cvv [REDACTED] given"},
		{"Bearer xyz", "Bearer [REDACTED]"},
		{"invalid token xyz", "invalid token [REDACTED]"},
		{"token tok_live_abc.def", "token [REDACTED]"},
		{"the token 'tok_live_abc' is expired", "the token '[REDACTED]' is expired"},
		{`refresh token "rt-123" revoked`, `refresh token "[REDACTED]" revoked`},
		{"access_token=at-1&scope=x", "access_token=[REDACTED]&scope=x"},
		{`"client_secret": "s3cr3t with spaces"`, `"client_secret": "[REDACTED]"`},
		{"client_secret=abc", "client_secret=[REDACTED]"},
		{"api_key: ak_live_1", "api_key: [REDACTED]"},
		{"X-Api-Key=ak_1", "X-Api-Key=[REDACTED]"},
		{"secret=hunter2", "secret=[REDACTED]"},
		{"my_token=abc", "my_token=[REDACTED]"},
		{"password: pw", "password: [REDACTED]"},
		{"Authorization: Basic dXNlcjpwdw==", "Authorization: [REDACTED]"},
		{"see /charge/?charge_uuid=1&t=2 now", "see /charge/?[REDACTED] now"},
		{"?a=b", "?[REDACTED]"},
		{"https://x.test/p?q=1", "https://x.test/p?[REDACTED]"},
		{"is it ok? yes", "is it ok? yes"},
		{"the token endpoint refused the request", "the token endpoint refused the request"},
		{"send the client secret in clear text", "send the client secret in clear text"},
		{"Japan: 1", "Japan: 1"},
		{"API Key 无效", "API Key 无效"},
		{"signature rejected (openapi_signature_invalid)", "signature rejected (openapi_signature_invalid)"},
		{"key 11111111-2222-4333-8444-555555555555", "key 11111111-2222-4333-8444-555555555555"}, // no card number in it
		{"key 41111111-1111-1111-8444-555555555555", "key ********-****-****-****-************"},
		{"[idempotency key 550e8400-e29b-41d4-a716-446655440000, 2 attempt(s)]", "[idempotency key 550e8400-e29b-41d4-a716-446655440000, 2 attempt(s)]"},
	}
	for _, c := range cases {
		got := String(c.in)
		assert.Equal(t, c.want, got, c.in)
		assert.Equal(t, got, String(got), "idempotent: %s", c.in)
	}
}

// Whatever the input, no card number survives in clear (no run of 13 to
// 19 ASCII digits that passes the Luhn check, no run of 20 or more) and
// redacting the output again changes nothing.
func FuzzRedactString(f *testing.F) {
	for _, s := range []string{"card 4111 1111 1111 1111 cvv 123", `{"cvv":"123","token":"a b"}`, "Bearer x?y=1",
		"4111-1111-1111-1111-1111", "a716-446655440000", "token token token x", "cvv: cvv: 1",
		"%34%31%31%31%31%31%31%31%31%31%31%31%31%31%31%31", "NDExMTExMTExMTExMTExMQ==", "&#52;&#x31;\\061\\u{31}",
		"[4,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]", "2026-11-29 18:49:12.123456789 +0000 UTC", "192.168.100.200:8080",
		"34313131313131313131313131313131", "%2534%2531", "\\ud835\\udfce", "\u2074\u00b9\u00b9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := String(s)
		for i := 0; i < len(out); {
			j := i
			for j < len(out) && out[j] >= '0' && out[j] <= '9' {
				j++
			}
			if n := j - i; n >= 20 || n >= 13 && luhn.Valid(strings.TrimLeft(out[i:j], "0")) && len(strings.TrimLeft(out[i:j], "0")) >= 13 {
				t.Fatalf("a card number survives in %q -> %q", s, out)
			}
			i = j + 1
		}
		if again := String(out); again != out {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, out, again)
		}
	})
}

// A secret's name followed by a plain word of prose keeps the word, as in
// the spoken form; a value is still masked.
func TestRedactKeepsProseAfterASecretName(t *testing.T) {
	for in, want := range map[string]string{
		"client_secret: required":      "client_secret: required",
		"cvv: must be 3 or 4 digits":   "cvv: must be 3 or 4 digits",
		"cvv: 123":                     "cvv: [REDACTED]",
		"client_secret=s3cr3t-value":   "client_secret=[REDACTED]",
		`{"cvv":"must"}`:               `{"cvv":"[REDACTED]"}`,
		"password: hunter2 is invalid": "password: [REDACTED] is invalid",
	} {
		assert.Equal(t, want, String(in), in)
	}
}

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
