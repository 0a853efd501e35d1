package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/reconcile"
)

// entryView is the printed form of a journal entry: its row, nothing
// more (rows hold nothing secret), plus whether it is in doubt.
type entryView struct {
	Scope        string          `json:"scope"`
	Reference    string          `json:"reference"`
	State        string          `json:"state"`
	InDoubt      bool            `json:"in_doubt"`
	Operation    string          `json:"operation"`
	Method       string          `json:"method"`
	Path         string          `json:"path"`
	Key          string          `json:"key"`
	KeyCreated   time.Time       `json:"key_created"`
	KeyAge       string          `json:"key_age"`
	Sent         bool            `json:"sent"`
	Attempts     int             `json:"attempts"`
	Fence        int64           `json:"fence"`
	StatusCode   int             `json:"status_code,omitempty"`
	RequestID    string          `json:"request_id,omitempty"`
	Replayed     bool            `json:"replayed,omitempty"`
	ErrorKind    string          `json:"error_kind,omitempty"`
	ErrorCode    string          `json:"error_code,omitempty"`
	ErrorMessage string          `json:"error_message,omitempty"`
	LastCause    string          `json:"last_cause,omitempty"`
	SettleReason string          `json:"settle_reason,omitempty"`
	LeaseOwner   string          `json:"lease_owner,omitempty"`
	LeaseUntil   *time.Time      `json:"lease_until,omitempty"`
	CreatedAt    time.Time       `json:"created_at"`
	UpdatedAt    time.Time       `json:"updated_at"`
	Fingerprint  string          `json:"fingerprint,omitempty"`
	Result       json.RawMessage `json:"result,omitempty"`
}

// inDoubt reports whether a pending entry may have been sent and its key
// can no longer be sent again (past the window, or created in the
// future): only a lookup or a settle by hand closes it.
func inDoubt(e payonce.JournalEntry, now time.Time) bool { return reconcile.InDoubt(e, now) }

func view(e payonce.JournalEntry, now time.Time) entryView {
	v := entryView{
		Scope: e.Scope, Reference: e.Reference, State: string(e.State), InDoubt: inDoubt(e, now),
		Operation: e.Operation, Method: e.Method, Path: e.Path, Key: e.Key, KeyCreated: e.KeyCreated.UTC(),
		KeyAge: age(now.Sub(e.KeyCreated)), Sent: e.Sent, Attempts: e.Attempts, Fence: e.Fence,
		StatusCode: e.StatusCode, RequestID: e.RequestID, Replayed: e.Replayed, ErrorKind: e.ErrorKind,
		ErrorCode: e.ErrorCode, ErrorMessage: e.ErrorMessage, LastCause: e.LastCause, SettleReason: e.SettleReason,
		LeaseOwner: e.LeaseOwner, CreatedAt: e.CreatedAt.UTC(), UpdatedAt: e.UpdatedAt.UTC(), Fingerprint: e.Fingerprint,
	}
	if !e.LeaseUntil.IsZero() {
		t := e.LeaseUntil.UTC()
		v.LeaseUntil = &t
	}
	if len(e.Result) > 0 && json.Valid(e.Result) {
		v.Result = json.RawMessage(e.Result)
	}
	return v
}

// status is the short state a table prints.
func (v entryView) status() string {
	if v.InDoubt {
		return "in-doubt"
	}
	if v.State == string(payonce.JournalFailed) && v.ErrorKind == payonce.KindName(payonce.ErrNotExecuted) {
		return "not-executed"
	}
	return v.State
}

// age prints d rounded for a human: 25h3m, 4m10s.
func age(d time.Duration) string {
	switch {
	case d < 0:
		return "-" + age(-d)
	case d >= time.Hour:
		return d.Truncate(time.Minute).String()
	}
	return d.Truncate(time.Second).String()
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func writeList(w io.Writer, vs []entryView) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SCOPE\tREFERENCE\tSTATE\tOPERATION\tKEY AGE\tSENT\tATTEMPTS\tUPDATED")
	for _, v := range vs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%t\t%d\t%s\n", cell(v.Scope), cell(v.Reference), cell(v.status()), cell(v.Operation),
			v.KeyAge, v.Sent, v.Attempts, v.UpdatedAt.Format(time.RFC3339))
	}
	return tw.Flush()
}

func writeEntry(w io.Writer, v entryView) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	row := func(k, val string) {
		if val != "" {
			fmt.Fprintf(tw, "%s\t%s\n", k, cell(val))
		}
	}
	row("scope", v.Scope)
	row("reference", v.Reference)
	row("state", v.status())
	row("operation", v.Operation)
	row("request", v.Method+" "+v.Path)
	row("key", v.Key)
	row("key created", v.KeyCreated.Format(time.RFC3339)+" ("+v.KeyAge+" ago)")
	row("sent", strconv.FormatBool(v.Sent))
	row("attempts", strconv.Itoa(v.Attempts))
	row("fence", strconv.FormatInt(v.Fence, 10))
	if v.StatusCode != 0 {
		row("status code", strconv.Itoa(v.StatusCode))
	}
	row("request id", v.RequestID)
	row("error kind", v.ErrorKind)
	row("error code", v.ErrorCode)
	row("error message", v.ErrorMessage)
	row("last cause", v.LastCause)
	row("settle reason", v.SettleReason)
	row("lease owner", v.LeaseOwner)
	if v.LeaseUntil != nil {
		row("lease until", v.LeaseUntil.Format(time.RFC3339))
	}
	row("created", v.CreatedAt.Format(time.RFC3339))
	row("updated", v.UpdatedAt.Format(time.RFC3339))
	row("fingerprint", v.Fingerprint)
	row("result", string(v.Result))
	return tw.Flush()
}

// fileExists refuses a journal path that is not an existing file.
func fileExists(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return usageErr("journal file %q: %v", path, err)
	}
	if st.IsDir() {
		return usageErr("journal file %q is a directory", path)
	}
	return nil
}

// Escaping. Every text the command prints comes from a journal row, a
// provider or the command line, and a terminal obeys some characters
// rather than showing them (ESC sequences, BEL, a carriage return
// rewriting the line, U+202E reordering it). Two layers keep them out:
// a table cell holding a tab, a new line or any character that does not
// show is printed quoted (cell), so it can neither split the table nor
// forge a line; and everything the command writes, on stdout and stderr,
// whatever subcommand wrote it, passes a terminalWriter.

// cell is s as a table prints it: as it is when every character shows,
// else quoted with Go's escapes ("o-1\u202etxt").
func cell(s string) string {
	for _, r := range s {
		if r == utf8.RuneError || !unicode.IsGraphic(r) {
			return strconv.QuoteToGraphic(s)
		}
	}
	return s
}

// terminalWriter writes to w what it is given with every character a
// terminal would obey or hide escaped: C0 controls but new line and
// tab, DEL, C1 controls and every non-ASCII rune that is not graphic
// (bidirectional controls, zero-width and other format characters, line
// and paragraph separators). A rune is escaped as JSON escapes it
// (\u001b, a pair of surrogates past U+FFFF), so JSON output stays JSON
// and reads back the same text; a byte that is not UTF-8 as \xff. A rune
// cut between two writes is held until the next one (or Flush).
type terminalWriter struct {
	w    io.Writer
	held []byte // the start of a rune the last write cut
}

func newTerminalWriter(w io.Writer) *terminalWriter { return &terminalWriter{w: w} }

// plainByte reports a byte a terminal shows as it is.
func plainByte(c byte) bool { return c >= 0x20 && c < 0x7f || c == '\n' || c == '\t' }

// Write escapes p and writes it; it reports all of p written once its
// escaped form is.
func (t *terminalWriter) Write(p []byte) (int, error) {
	b := p
	if len(t.held) > 0 {
		b = append(t.held, p...)
		t.held = nil
	}
	clean := true
	for _, c := range b {
		if !plainByte(c) {
			clean = false
			break
		}
	}
	if clean {
		if _, err := t.w.Write(b); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	out := make([]byte, 0, len(b)+16)
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			if plainByte(c) {
				out = append(out, c)
			} else {
				out = appendRuneEscape(out, rune(c))
			}
			i++
			continue
		}
		if !utf8.FullRune(b[i:]) {
			t.held = append([]byte(nil), b[i:]...)
			break
		}
		r, size := utf8.DecodeRune(b[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			out = fmt.Appendf(out, `\x%02x`, c)
		case unicode.IsGraphic(r):
			out = append(out, b[i:i+size]...)
		default:
			out = appendRuneEscape(out, r)
		}
		i += size
	}
	if _, err := t.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes a rune the last write left cut, as the bytes it holds.
func (t *terminalWriter) Flush() error {
	if len(t.held) == 0 {
		return nil
	}
	var out []byte
	for _, c := range t.held {
		out = fmt.Appendf(out, `\x%02x`, c)
	}
	t.held = nil
	_, err := t.w.Write(out)
	return err
}

// appendRuneEscape appends r as JSON escapes it: \uXXXX, or a surrogate
// pair past U+FFFF.
func appendRuneEscape(out []byte, r rune) []byte {
	if r > 0xffff {
		hi, lo := utf16.EncodeRune(r)
		return fmt.Appendf(out, `\u%04x\u%04x`, hi, lo)
	}
	return fmt.Appendf(out, `\u%04x`, r)
}

// escapeOutput wraps the command's stdout and stderr in terminalWriters;
// the function it returns flushes them.
func escapeOutput(stdout, stderr io.Writer) (io.Writer, io.Writer, func()) {
	o, e := newTerminalWriter(stdout), newTerminalWriter(stderr)
	return o, e, func() { _ = o.Flush(); _ = e.Flush() }
}
