package redact

import (
	"context"
	"log/slog"
)

// Handler wraps a slog.Handler so that no record it passes on holds
// a secret: attributes named like secrets are replaced by [REDACTED], every
// string is passed through String, but for the idempotency_key
// attribute, which the client fills with the operation's own key. Clients wrap any logger they are
// given in one.
type Handler struct {
	next    slog.Handler
	secrets *Secrets // the client's own secrets, cut too; nil for none
}

// NewHandler returns h wrapped in redaction.
func NewHandler(h slog.Handler) *Handler {
	if r, ok := h.(*Handler); ok {
		return r
	}
	return &Handler{next: h}
}

// WithSecrets returns h cutting the secrets of s too.
func (h *Handler) WithSecrets(s *Secrets) *Handler {
	return &Handler{next: h.next, secrets: s}
}

// Enabled implements slog.Handler.
func (h *Handler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.next.Enabled(ctx, l)
}

// Handle implements slog.Handler.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	red := h.secrets.Redactor()
	nr := slog.NewRecord(r.Time, r.Level, red.Redact(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		nr.AddAttrs(red.attr(a))
		return true
	})
	return h.next.Handle(ctx, nr)
}

// WithAttrs implements slog.Handler.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	red := h.secrets.Redactor()
	out := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		out[i] = red.attr(a)
	}
	return &Handler{next: h.next.WithAttrs(out), secrets: h.secrets}
}

// WithGroup implements slog.Handler.
func (h *Handler) WithGroup(name string) slog.Handler {
	return &Handler{next: h.next.WithGroup(name), secrets: h.secrets}
}

// attr is a redacted, its strings redacted by r.
func (r *Redactor) attr(a slog.Attr) slog.Attr {
	a.Value = a.Value.Resolve()
	if sensitiveAttr(a.Key) {
		return slog.String(a.Key, redacted)
	}
	switch a.Value.Kind() {
	case slog.KindString:
		if a.Key == "idempotency_key" {
			return a // the client's own handle on the operation, kept readable
		}
		return slog.String(a.Key, r.Redact(a.Value.String()))
	case slog.KindGroup:
		g := a.Value.Group()
		out := make([]slog.Attr, len(g))
		for i, ga := range g {
			out[i] = r.attr(ga)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(out...)}
	case slog.KindInt64, slog.KindUint64, slog.KindFloat64:
		// A card number logged as a number: masked like its text.
		if t := a.Value.String(); maskDigitRuns(t) != t {
			return slog.String(a.Key, maskDigitRuns(t))
		}
		return a
	case slog.KindAny:
		if b, ok := a.Value.Any().([]byte); ok {
			return slog.String(a.Key, r.Redact(string(b)))
		}
		if err, ok := a.Value.Any().(error); ok {
			return slog.String(a.Key, r.Redact(err.Error()))
		}
		return slog.String(a.Key, r.Redact(slog.AnyValue(a.Value.Any()).String()))
	}
	return a
}
