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
