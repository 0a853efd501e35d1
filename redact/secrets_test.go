package redact

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A registered secret is cut as it is, in hex, and in base64 and
// base64url at every alignment inside a longer encoded text.
func TestRegisteredSecretFormsAreCut(t *testing.T) {
	const secret = "opaque-Token_42/xyz+Q"
	r := newRedactor([]string{secret})
	for k := range 6 {
		for _, tail := range []string{"", "z", "zz", " and more text"} {
			data := []byte(strings.Repeat("p", k) + secret + tail)
			for _, enc := range []string{base64.StdEncoding.EncodeToString(data), base64.RawURLEncoding.EncodeToString(data),
				hex.EncodeToString(data), strings.ToUpper(hex.EncodeToString(data)), string(data)} {
				out := r.Redact("rejected " + enc)
				assert.Contains(t, out, redacted, "%d %q", k, enc)
				assert.NotContains(t, out, enc)
			}
		}
	}
	assert.Equal(t, "rejected [REDACTED] as [REDACTED]", r.Redact("rejected "+eachByte(secret, "%%%02X")+" as "+secret))
}

// Values too short to cut safely are ignored, and at most
// maxClientSecrets values are kept.
func TestRegisteredSecretsBounds(t *testing.T) {
	assert.Nil(t, newRedactor([]string{"short", ""}))
	vals := make([]string, maxClientSecrets+4)
	for i := range vals {
		vals[i] = fmt.Sprintf("secret-value-%02d", i)
	}
	r := newRedactor(vals)
	assert.Equal(t, redacted, r.Redact(vals[0]))
	assert.Equal(t, vals[maxClientSecrets], r.Redact(vals[maxClientSecrets]), "past the bound")
}

// rotatingHolder holds a token it replaces, as a bearer signer does.
type rotatingHolder struct {
	mu  sync.Mutex
	tok string
}

func (s *rotatingHolder) SecretValues() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return []string{s.tok}
}

// A token the client replaced is still cut: a server answering late (or
// a log of the last failure) echoes the old one.
func TestRetiredSecretsStillCut(t *testing.T) {
	s := &rotatingHolder{tok: "first-opaque-token-0001"}
	c := NewSecrets(s)
	assert.NotContains(t, c.Redactor().Redact("old first-opaque-token-0001"), "first-opaque")
	s.mu.Lock()
	s.tok = "second-opaque-token-0002"
	s.mu.Unlock()
	out := c.Redactor().Redact("tokens first-opaque-token-0001 and second-opaque-token-0002")
	assert.NotContains(t, out, "first-opaque")
	assert.NotContains(t, out, "second-opaque")
}

// A registered secret is cut in any ASCII letter case, and so is its hex
// in any case and the base64 of the secret in another case (decoded, then
// compared); the base64 of the secret itself only as it is.
func TestRegisteredSecretsCutInAnyCase(t *testing.T) {
	const secret = "opaque-Token_42/xyz+Q"
	r := newRedactor([]string{secret})
	mixed := []byte(hex.EncodeToString([]byte(secret)))
	for i := 0; i < len(mixed); i += 3 {
		mixed[i] = strings.ToUpper(string(mixed[i]))[0]
	}
	for _, in := range []string{
		strings.ToUpper(secret), strings.ToLower(secret), "OPAQUE-token_42/XYZ+q",
		string(mixed), eachByte(strings.ToUpper(secret), "%%%02x"),
		base64.StdEncoding.EncodeToString([]byte(strings.ToUpper(secret))),
		"x" + strings.ToUpper(secret) + "y",
	} {
		out := r.Redact("rejected " + in + " today")
		assert.Contains(t, out, redacted, in)
		assert.NotContains(t, strings.ToLower(out), strings.ToLower(secret), in)
		assert.NotContains(t, out, in)
		assert.Equal(t, out, r.Redact(out), "idempotent")
	}
	assert.Equal(t, "rejected [REDACTED] and é[REDACTED]é", r.Redact("rejected OPAQUE-TOKEN_42/XYZ+Q and é"+secret+"é"), "indexes kept past multi-byte runes")
	assert.Equal(t, "request id 550e8400-e29b-41d4-a716-446655440000", r.ID("request id 550e8400-e29b-41d4-a716-446655440000"))
}

// Without cuts the values it is given, of any length and in any case,
// and redacts the rest as String.
func TestWithout(t *testing.T) {
	assert.Equal(t, "bad secret [REDACTED] for card ************1111", Without("bad secret S3CRET for card 4111111111111111", "s3cret"))
	assert.Equal(t, "nothing to cut", Without("nothing to cut"))
}

// The cost of cutting a client's secrets from an error text.
func BenchmarkRedactWithSecrets(b *testing.B) {
	r := newRedactor([]string{"sk_live_Vb8Nc3Zt6Qp1Ry5K", "ak_live_7Hq2Xw9Lm4"})
	s := "payonce: coinepay cards.apply: unauthorized (HTTP 401 openapi_api_key_invalid): API Key 无效 [idempotency key 550e8400-e29b-41d4-a716-446655440000, 1 attempt(s)]"
	for b.Loop() {
		_ = r.Redact(s)
	}
}
