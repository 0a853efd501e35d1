package a55

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
)

// String is the %v form. ResponseMeta has its own printing methods so that
// it shows its rate limit: the embedded payonce.Meta's, promoted, would
// print the Meta alone. The headers are redacted as payonce.Meta's are.
func (m ResponseMeta) String() string { return fmt.Sprintf("{%v %v}", m.Meta, m.RateLimit) }

// GoString is the %#v form, redacted like String.
func (m ResponseMeta) GoString() string {
	return fmt.Sprintf("a55.ResponseMeta{Meta:%#v, RateLimit:%#v}", m.Meta, m.RateLimit)
}

// Format prints m as fmt prints a struct (%v, %+v, %#v), with the
// headers redacted as payonce.Meta's are; %s is %v, %q quotes it, and any
// other verb prints %v's text.
func (m ResponseMeta) Format(f fmt.State, verb rune) {
	switch {
	case verb == 'v' && f.Flag('#'):
		_, _ = io.WriteString(f, m.GoString())
	case verb == 'v' && f.Flag('+'):
		fmt.Fprintf(f, "{Meta:%+v RateLimit:%+v}", m.Meta, m.RateLimit)
	case verb == 'q':
		fmt.Fprintf(f, "%q", m.String())
	default:
		_, _ = io.WriteString(f, m.String())
	}
}

// MarshalJSON is payonce.Meta's JSON form (redacted as it is printed),
// its fields followed by RateLimit, as encoding/json writes a struct
// embedding a Meta: the Meta's MarshalJSON, promoted, would drop the rate
// limit.
func (m ResponseMeta) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(m.Meta)
	if err != nil {
		return nil, err
	}
	rl, err := json.Marshal(m.RateLimit)
	if err != nil {
		return nil, err
	}
	b = append(b[:len(b)-1], `,"RateLimit":`...) // b is an object: {...}
	return append(append(b, rl...), '}'), nil
}

// LogValue is the slog form: payonce.Meta's, plus the rate limit.
func (m ResponseMeta) LogValue() slog.Value {
	attrs := m.Meta.LogValue().Group()
	if m.RateLimit != (RateLimit{}) {
		attrs = append(attrs, slog.Group("rate_limit",
			slog.Int("limit", m.RateLimit.Limit), slog.Int("remaining", m.RateLimit.Remaining),
			slog.Time("reset", m.RateLimit.Reset)))
	}
	return slog.GroupValue(attrs...)
}
