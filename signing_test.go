package payonce

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hmacSigner signs each attempt as the Coinepay HMAC signer does, as far
// as the core can tell: an API key, a timestamp from its clock, a fresh
// random nonce and an HMAC-SHA256 signature over the request and body.
type hmacSigner struct {
	keyID, secret string
	now           func() time.Time
}

func newHMACSigner(keyID, secret string, now func() time.Time) *hmacSigner {
	if now == nil {
		now = time.Now
	}
	return &hmacSigner{keyID: keyID, secret: secret, now: now}
}

func (s *hmacSigner) Sign(req *http.Request, body []byte) error {
	var n [16]byte
	_, _ = rand.Read(n[:])
	nonce := hex.EncodeToString(n[:])
	ts := strconv.FormatInt(s.now().Unix(), 10)
	m := hmac.New(sha256.New, []byte(s.secret))
	m.Write([]byte(req.Method + "\n" + req.URL.EscapedPath() + "\n" + req.URL.RawQuery + "\n" + ts + "\n" + nonce + "\n"))
	m.Write(body)
	req.Header.Set("X-Api-Key", s.keyID)
	req.Header.Set("X-Timestamp", ts)
	req.Header.Set("X-Nonce", nonce)
	req.Header.Set("X-Signature", hex.EncodeToString(m.Sum(nil)))
	return nil
}

// A caller's own signer that is a redact.SecretHolder has its current secret
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
		c.logger.Info("failed", "err", err, "note", "token was "+tok)
		for _, out := range []string{err.Error(), fmt.Sprintf("%+v", *ae), ae.Message, ae.RequestID} {
			assert.NotContains(t, out, tok)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	assert.NotContains(t, logs.String(), "opaque-token")
	assert.Contains(t, logs.String(), "token was [REDACTED]")
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

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
