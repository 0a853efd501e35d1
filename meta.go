package payonce

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/payonce/payonce/redact"
)

// Meta describes how an operation went. Printed with fmt under any verb,
// logged with slog or written as JSON, its Header shows only what may reach a log: the
// values of secret-bearing headers (cookies, tokens, keys, signatures)
// are [REDACTED] and every other value passes through redact.String, so a
// card number or a query string a server echoed in a header stays out of
// the line. Header itself keeps the server's values for code that reads
// them on purpose.
type Meta struct {
	Key        Key           // the key sent and its creation time (the zero Key for unkeyed calls)
	Replayed   bool          // the server answered with a stored response
	Attempts   int           // attempts sent
	StatusCode int           // final HTTP status
	RequestID  string        // provider request ID
	Header     http.Header   // final answer's headers
	Duration   time.Duration // wall time of the operation
	// FromJournal: nothing was sent, the result is the one the journal
	// recorded for Reference.
	FromJournal bool
	Reference   string // the journal reference (WithReference), "" without one
	// LeaseOwner is the owner under which the call held its journal entry
	// (WithLeaseOwner, else the client's own): a lookup that settles the
	// entry within the call passes it on (Settlement.LeaseOwner).
	LeaseOwner string
}

// metaFields is Meta without its methods, so that printing it uses fmt's
// struct form.
type metaFields Meta

// printable is m with its header and free-text fields redacted.
func (m Meta) printable() metaFields {
	p := metaFields(m)
	p.Header = redact.Header(m.Header)
	p.RequestID = redact.String(m.RequestID)
	p.Reference = redact.String(m.Reference)
	return p
}

// text is the %v form, with the header redacted.
func (m Meta) text() string { return fmt.Sprintf("%v", m.printable()) }

// goString is the %#v form, with the header redacted.
func (m Meta) goString() string {
	s := fmt.Sprintf("%#v", m.printable())
	return "payonce.Meta" + strings.TrimPrefix(s, "payonce.metaFields")
}

// Format prints m as fmt prints a struct (%v, %+v, %#v), with the header
// redacted; %s is %v, %q quotes it, and any other verb prints %v's text
// rather than spelling out bytes.
func (m Meta) Format(f fmt.State, verb rune) {
	switch {
	case verb == 'v' && f.Flag('#'):
		_, _ = io.WriteString(f, m.goString())
	case verb == 'v' && f.Flag('+'):
		fmt.Fprintf(f, "%+v", m.printable())
	case verb == 'q':
		fmt.Fprintf(f, "%q", m.text())
	default:
		_, _ = io.WriteString(f, m.text())
	}
}

// MarshalJSON is the JSON form (a result stored whole, a job payload):
// Meta's fields as encoding/json writes a struct, redacted as they are
// printed, the Key in its text form (ParseKey reads it back).
func (m Meta) MarshalJSON() ([]byte, error) { return json.Marshal(m.printable()) }

// LogValue is the slog form: every field but the header's secrets.
func (m Meta) LogValue() slog.Value {
	attrs := []slog.Attr{
		slog.String("key", m.Key.String()),
		slog.Time("key_created", m.Key.Created()),
		slog.Bool("replayed", m.Replayed),
		slog.Int("attempts", m.Attempts),
		slog.Int("status", m.StatusCode),
		slog.String("request_id", redact.String(m.RequestID)),
		slog.Duration("duration", m.Duration),
	}
	if m.FromJournal || m.Reference != "" {
		attrs = append(attrs, slog.Bool("from_journal", m.FromJournal), slog.String("reference", redact.String(m.Reference)))
	}
	if len(m.Header) > 0 {
		h := redact.Header(m.Header)
		ha := make([]slog.Attr, 0, len(h))
		for _, k := range slices.Sorted(maps.Keys(h)) {
			ha = append(ha, slog.String(k, strings.Join(h[k], ", ")))
		}
		attrs = append(attrs, slog.Attr{Key: "header", Value: slog.GroupValue(ha...)})
	}
	return slog.GroupValue(attrs...)
}
