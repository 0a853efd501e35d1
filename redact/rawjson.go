package redact

import (
	"fmt"
	"io"
	"log/slog"
)

// RawJSON is a JSON value exactly as a server sent it (a Coinepay card, an
// A55 webhook body), kept for the fields the SDK does not model. Its bytes
// are the server's: read them on purpose with json.Unmarshal(raw, &v) or
// string(raw). Printed with fmt under any verb, or logged with slog, it
// shows only its redacted text (String), so card data a server
// echoed never reaches a log line through a printed result.
type RawJSON []byte

// MarshalJSON returns the bytes unchanged ("null" when empty), as
// json.RawMessage does.
func (m RawJSON) MarshalJSON() ([]byte, error) {
	if len(m) == 0 {
		return []byte("null"), nil
	}
	return m, nil
}

// UnmarshalJSON keeps a copy of data.
func (m *RawJSON) UnmarshalJSON(data []byte) error {
	*m = append((*m)[:0], data...)
	return nil
}

// String returns the redacted text of the value.
func (m RawJSON) String() string { return String(string(m)) }

// Format writes the redacted text under every verb (%q quotes it), never
// the bytes themselves: %x or %v of the bytes would spell out a card number.
func (m RawJSON) Format(f fmt.State, verb rune) {
	if verb == 'q' {
		fmt.Fprintf(f, "%q", m.String())
		return
	}
	_, _ = io.WriteString(f, m.String())
}

// LogValue is the slog form: the redacted text.
func (m RawJSON) LogValue() slog.Value { return slog.StringValue(m.String()) }
