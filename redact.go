package payonce

import (
	"context"
	"log/slog"
	"regexp"
	"strings"
)

// sensitiveValue matches secrets written as name=value, name: value or
// "name":"value", and bearer tokens.
var sensitiveValue = regexp.MustCompile(`(?i)("?(?:cvv|cvc|client_secret|secret|password|access_token|refresh_token|token|authorization|x-signature|signature|api_secret)"?\s*[:=]\s*"?)((?:bearer\s+)?[^"&,\s}]+)|(?i)(bearer\s+)([A-Za-z0-9._~+/=-]+)`)

// urlQuery matches the query string of a URL.
var urlQuery = regexp.MustCompile(`(https?://[^\s?"]*)\?[^\s"]*`)

// RedactString masks what must never reach a log or an error: digit runs of
// 12 to 19 digits (card numbers) keep only their last four digits; the
// values of secret-looking fields (cvv, secret, token, password,
// authorization, signature) and bearer tokens become [REDACTED]; URL query
// strings are cut.
func RedactString(s string) string {
	if s == "" {
		return s
	}
	s = maskDigitRuns(s)
	s = sensitiveValue.ReplaceAllString(s, "${1}${3}[REDACTED]")
	return urlQuery.ReplaceAllString(s, "${1}?[REDACTED]")
}

func maskDigitRuns(s string) string {
	var b strings.Builder
	changed := false
	for i := 0; i < len(s); {
		if s[i] < '0' || s[i] > '9' {
			b.WriteByte(s[i])
			i++
			continue
		}
		j := i
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if n := j - i; n >= 12 && n <= 19 {
			b.WriteString(strings.Repeat("*", n-4))
			b.WriteString(s[j-4 : j])
			changed = true
		} else {
			b.WriteString(s[i:j])
		}
		i = j
	}
	if !changed {
		return s
	}
	return b.String()
}

// sensitiveAttr reports whether a log attribute's name marks a secret.
func sensitiveAttr(key string) bool {
	switch strings.ToLower(key) {
	case "authorization", "token", "access_token", "refresh_token", "secret", "client_secret",
		"api_secret", "password", "cvv", "cvc", "card_number", "pan", "signature", "x-signature":
		return true
	}
	return false
}

// RedactingHandler wraps a slog.Handler so that no record it passes on holds
// a secret: attributes named like secrets are replaced by [REDACTED], every
// string is passed through RedactString. Clients wrap any logger they are
// given in one.
type RedactingHandler struct {
	next slog.Handler
}

// NewRedactingHandler returns h wrapped in redaction.
func NewRedactingHandler(h slog.Handler) *RedactingHandler {
	if r, ok := h.(*RedactingHandler); ok {
		return r
	}
	return &RedactingHandler{next: h}
}

// Enabled implements slog.Handler.
func (h *RedactingHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.next.Enabled(ctx, l)
}

// Handle implements slog.Handler.
func (h *RedactingHandler) Handle(ctx context.Context, r slog.Record) error {
	nr := slog.NewRecord(r.Time, r.Level, RedactString(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		nr.AddAttrs(redactAttr(a))
		return true
	})
	return h.next.Handle(ctx, nr)
}

// WithAttrs implements slog.Handler.
func (h *RedactingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	out := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		out[i] = redactAttr(a)
	}
	return &RedactingHandler{next: h.next.WithAttrs(out)}
}

// WithGroup implements slog.Handler.
func (h *RedactingHandler) WithGroup(name string) slog.Handler {
	return &RedactingHandler{next: h.next.WithGroup(name)}
}

func redactAttr(a slog.Attr) slog.Attr {
	a.Value = a.Value.Resolve()
	if sensitiveAttr(a.Key) {
		return slog.String(a.Key, "[REDACTED]")
	}
	switch a.Value.Kind() {
	case slog.KindString:
		return slog.String(a.Key, RedactString(a.Value.String()))
	case slog.KindGroup:
		g := a.Value.Group()
		out := make([]slog.Attr, len(g))
		for i, ga := range g {
			out[i] = redactAttr(ga)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(out...)}
	case slog.KindAny:
		if err, ok := a.Value.Any().(error); ok {
			return slog.String(a.Key, RedactString(err.Error()))
		}
		return slog.String(a.Key, RedactString(slog.AnyValue(a.Value.Any()).String()))
	}
	return a
}
