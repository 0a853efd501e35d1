package payonce

import (
	"bytes"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRedactString(t *testing.T) {
	cases := map[string]string{
		"card 4111111111111111 ok":                     "card ************1111 ok",
		"short 12345 and long 12345678901234567890123": "short 12345 and long 12345678901234567890123",
		`{"cvv":"123","client_secret":"abc"}`:          `{"cvv":"[REDACTED]","client_secret":"[REDACTED]"}`,
		"Authorization: Bearer eyJhbGciOi.x.y":         "Authorization: [REDACTED]",
		"got bearer abc.def":                           "got bearer [REDACTED]",
		"GET https://api.x/charge/?charge_uuid=1&t=2":  "GET https://api.x/charge/?[REDACTED]",
		"token=tok_1&x=1":                              "token=[REDACTED]&x=1",
		"nothing here":                                 "nothing here",
	}
	for in, want := range cases {
		assert.Equal(t, want, RedactString(in), in)
	}
}

func TestRedactingHandler(t *testing.T) {
	var buf bytes.Buffer
	l := slog.New(NewRedactingHandler(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	l = l.With("secret", "top").WithGroup("g")
	l.Debug("pan 4000000000000002", "cvv", "999", "note", "password=hunter2", "nested", slog.GroupValue(slog.String("token", "t0k")), "card", testCard())
	out := buf.String()
	for _, bad := range []string{"top", "4000000000000002", "999", "hunter2", "t0k", testPAN, testCVV} {
		assert.NotContains(t, out, bad)
	}
	assert.Contains(t, out, "************0002")
	h := NewRedactingHandler(slog.DiscardHandler)
	assert.Same(t, h, NewRedactingHandler(h), "wrapping twice is a no-op")
}
