package payonce

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/payonce/payonce/redact"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The idempotency key is the merchant's own handle on the operation: the
// error text shows it as it is, whatever digits it holds (dates, epoch
// milliseconds, order numbers), while the server's text around it is
// still redacted.
func TestErrorKeepsKeyReadable(t *testing.T) {
	for _, key := range []string{"order-20261129-0001-000123", "order:1732881234567", "invoice_2026_11_29_000123",
		"charges.create:550e8400-e29b-41d4-a716-446655440000"} {
		e := &APIError{Provider: "a55", Operation: "charges.create", Kind: ErrServer, StatusCode: 500,
			Message: "card 4111 1111 1111 1111 token tok_hostile", Key: testKey(key), Attempts: 3}
		s := e.Error()
		assert.Contains(t, s, "[idempotency key "+key+", 3 attempt(s)]")
		assert.NotContains(t, s, "4111 1111")
		assert.NotContains(t, s, "tok_hostile")
	}
}

func TestRedactingHandler(t *testing.T) {
	var buf bytes.Buffer
	// The time is dropped: its milliseconds could be the CVV or "999".
	dropTime := func(groups []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey && len(groups) == 0 {
			return slog.Attr{}
		}
		return a
	}
	l := slog.New(redact.NewHandler(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug, ReplaceAttr: dropTime})))
	l = l.With("secret", "top").WithGroup("g")
	l.Debug("pan 4000000000000002", "cvv", "999", "note", "password=hunter2", "nested", slog.GroupValue(slog.String("token", "t0k")), "card", testCard())
	out := buf.String()
	for _, bad := range []string{"top", "4000000000000002", "999", "hunter2", "t0k", testPAN, testCVV} {
		assert.NotContains(t, out, bad)
	}
	assert.Contains(t, out, "************0002")
	h := redact.NewHandler(slog.DiscardHandler)
	assert.Same(t, h, redact.NewHandler(h), "wrapping twice is a no-op")
}

// A request ID header is server text like any other: the Meta of a result
// and the APIError of a failure both hold it redacted.
func TestRequestIDHeaderRedacted(t *testing.T) {
	rec := &recorder{header: http.Header{"X-Request-Id": {"req token tok_hostile_42 4111 1111 1111 1111"}}}
	c := setup(t, rec)
	meta, err := c.Do(t.Context(), postReq(), nil)
	require.NoError(t, err)
	assert.Equal(t, "req token [REDACTED] **** **** **** 1111", meta.RequestID)
	rec.statuses = []int{400}
	_, err = c.Do(t.Context(), postReq(), nil)
	var ae *APIError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "req token [REDACTED] **** **** **** 1111", ae.RequestID)
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
