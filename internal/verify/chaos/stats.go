package chaos

import (
	"context"
	"log/slog"
	"sort"
	"sync"
)

// retryStats is a slog.Handler that counts the SDK's "payonce retrying"
// debug lines by cause: the run learns why it retried from the same log a
// merchant would read.
type retryStats struct {
	mu      sync.Mutex
	byCause map[string]int
	recover int
}

func newRetryStats() *retryStats { return &retryStats{byCause: map[string]int{}} }

func (s *retryStats) Enabled(context.Context, slog.Level) bool { return true }

func (s *retryStats) Handle(_ context.Context, rec slog.Record) error {
	switch rec.Message {
	case "payonce retrying":
		cause := "other"
		rec.Attrs(func(a slog.Attr) bool {
			if a.Key == "cause" {
				cause = a.Value.String()
				return false
			}
			return true
		})
		s.mu.Lock()
		s.byCause[cause]++
		s.mu.Unlock()
	case "payonce repeating attempt after signer recovery":
		s.mu.Lock()
		s.recover++
		s.mu.Unlock()
	}
	return nil
}

func (s *retryStats) WithAttrs([]slog.Attr) slog.Handler { return s }
func (s *retryStats) WithGroup(string) slog.Handler      { return s }

// snapshot returns the counts, causes sorted by name.
func (s *retryStats) snapshot() ([]CauseCount, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]CauseCount, 0, len(s.byCause))
	for c, n := range s.byCause {
		out = append(out, CauseCount{Cause: c, Count: n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Cause < out[j].Cause })
	return out, s.recover
}

// teeHandler sends every record to two handlers.
type teeHandler struct{ a, b slog.Handler }

func (t teeHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return t.a.Enabled(ctx, l) || t.b.Enabled(ctx, l)
}

func (t teeHandler) Handle(ctx context.Context, r slog.Record) error {
	_ = t.a.Handle(ctx, r.Clone())
	return t.b.Handle(ctx, r)
}

func (t teeHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return teeHandler{t.a.WithAttrs(as), t.b.WithAttrs(as)}
}

func (t teeHandler) WithGroup(n string) slog.Handler {
	return teeHandler{t.a.WithGroup(n), t.b.WithGroup(n)}
}
