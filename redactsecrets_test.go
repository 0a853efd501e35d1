package payonce

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
				out := r.redact("rejected " + enc)
				assert.Contains(t, out, redacted, "%d %q", k, enc)
				assert.NotContains(t, out, enc)
			}
		}
	}
	assert.Equal(t, "rejected [REDACTED] as [REDACTED]", r.redact("rejected "+eachByte(secret, "%%%02X")+" as "+secret))
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
	assert.Equal(t, redacted, r.redact(vals[0]))
	assert.Equal(t, vals[maxClientSecrets], r.redact(vals[maxClientSecrets]), "past the bound")
}

// rotatingSigner holds a token it replaces, as a bearer signer does.
type rotatingSigner struct {
	mu  sync.Mutex
	tok string
}

func (s *rotatingSigner) Sign(req *http.Request, _ []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	req.Header.Set("Authorization", "Bearer "+s.tok)
	return nil
}

func (s *rotatingSigner) SecretValues() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return []string{s.tok}
}

// A caller's own signer that is a SecretHolder has its current secret
// cut from the errors and the log records of the client, also after it
// changed.
func TestSignerSecretsCutFromErrorsAndLogs(t *testing.T) {
	s := &rotatingSigner{tok: "first-opaque-token-0001"}
	rec := &recorder{statuses: []int{400}}
	var logs strings.Builder
	var mu sync.Mutex
	h := slog.NewTextHandler(writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return logs.Write(p) }),
		&slog.HandlerOptions{Level: slog.LevelDebug})
	c := setup(t, rec, WithSigner(s), WithLogger(slog.New(h)))
	for _, tok := range []string{"first-opaque-token-0001", "second-opaque-token-0002"} {
		s.mu.Lock()
		s.tok = tok
		s.mu.Unlock()
		rec.mu.Lock()
		rec.body = `{"message":"Token has expired: ` + tok + `"}`
		rec.header = http.Header{"X-Request-Id": {"req " + tok}}
		rec.mu.Unlock()
		_, err := c.Do(t.Context(), postReq(), nil)
		require.Error(t, err)
		var ae *APIError
		require.ErrorAs(t, err, &ae)
		c.Logger().Info("failed", "err", err, "note", "token was "+tok)
		for _, out := range []string{err.Error(), fmt.Sprintf("%+v", *ae), ae.Message, ae.RequestID} {
			assert.NotContains(t, out, tok)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	assert.NotContains(t, logs.String(), "opaque-token")
	assert.Contains(t, logs.String(), "token was [REDACTED]")
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// A token the client replaced is still cut: a server answering late (or
// a log of the last failure) echoes the old one.
func TestRetiredSecretsStillCut(t *testing.T) {
	s := &rotatingSigner{tok: "first-opaque-token-0001"}
	c := &clientSecrets{src: s}
	assert.NotContains(t, c.redactor().redact("old first-opaque-token-0001"), "first-opaque")
	s.mu.Lock()
	s.tok = "second-opaque-token-0002"
	s.mu.Unlock()
	out := c.redactor().redact("tokens first-opaque-token-0001 and second-opaque-token-0002")
	assert.NotContains(t, out, "first-opaque")
	assert.NotContains(t, out, "second-opaque")
}
