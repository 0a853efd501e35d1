package logtest

import "log/slog"

// Options returns handler options at level that leave out a record's time
// and each top-level attribute named in drop.
func Options(level slog.Leveler, drop ...string) *slog.HandlerOptions {
	return &slog.HandlerOptions{Level: level, ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
		if len(groups) > 0 {
			return a
		}
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		for _, k := range drop {
			if a.Key == k {
				return slog.Attr{}
			}
		}
		return a
	}}
}
