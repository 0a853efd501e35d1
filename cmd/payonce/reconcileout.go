package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/payonce/payonce/reconcile"
)

// The output formats of reconcile.
const (
	formatTable = "table"
	formatJSON  = "json"
	formatCSV   = "csv"
)

// writeReport prints rep in format: everything reconcile prints goes
// through here. Every text in a report comes from the provider or the
// journal, and a terminal obeys some characters rather than show them
// (ESC sequences, BEL, a carriage return, U+202E), so a table cell or a
// CSV field holding any character that does not show is printed quoted
// with Go's escapes (reconcileCell), and JSON has every such character
// written as a JSON escape (escapeJSON): it reads back the same text.
func writeReport(w io.Writer, rep *reconcile.Report, format string) error {
	switch format {
	case formatJSON:
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		_, err = w.Write(append(escapeJSON(b), '\n'))
		return err
	case formatCSV:
		return writeReportCSV(w, rep)
	}
	return writeReportTable(w, rep)
}

// reportColumns are the columns of a finding, table and CSV.
func reportColumns() []string {
	return []string{"kind", "reference", "order", "entry_state", "resource_id", "status", "known_status",
		"amount", "currency", "account", "created_at", "detail"}
}

// reportRow is f's cells, in reportColumns' order, not yet escaped.
func reportRow(f reconcile.Finding) []string {
	amount, created := "", ""
	if !f.Amount.IsZero() {
		amount = f.Amount.String()
	}
	if !f.CreatedAt.IsZero() {
		created = f.CreatedAt.UTC().Format(time.RFC3339)
	}
	return []string{string(f.Kind), f.Reference, f.Order, f.EntryState, f.ResourceID, f.Status, f.Known,
		amount, string(f.Currency), f.Account, created, f.Detail}
}

func writeReportTable(w io.Writer, rep *reconcile.Report) error {
	inbox := "inbox not checked"
	if rep.Inbox {
		inbox = "inbox checked"
	}
	fmt.Fprintf(w, "reconcile %s %s %s, %s to %s: %d resources, %d entries, %s\n", reconcileCell(rep.Provider),
		reconcileCell(rep.Scope), reconcileCell(rep.Operation), rep.From.Format(time.RFC3339), rep.To.Format(time.RFC3339),
		rep.Resources, rep.Entries, inbox)
	if !rep.NeedsAttention() {
		_, err := fmt.Fprintln(w, "nothing needs a person")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.ToUpper(strings.ReplaceAll(strings.Join(reportColumns(), "\t"), "_", " ")))
	for _, f := range rep.Findings {
		cells := reportRow(f)
		for i := range cells {
			cells[i] = reconcileCell(cells[i])
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%d findings need a person\n", len(rep.Findings))
	return err
}

func writeReportCSV(w io.Writer, rep *reconcile.Report) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(reportColumns()); err != nil {
		return err
	}
	for _, f := range rep.Findings {
		cells := reportRow(f)
		for i := range cells {
			cells[i] = csvCell(cells[i])
		}
		if err := cw.Write(cells); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// reconcileCell is s as a table or CSV prints it: as it is when every
// character shows, else quoted with Go's escapes ("o-1\u202etxt"), so it
// can neither split the table nor forge a line.
func reconcileCell(s string) string {
	for _, r := range s {
		if r == utf8.RuneError || !unicode.IsGraphic(r) {
			return strconv.QuoteToGraphic(s)
		}
	}
	return s
}

// csvCell is a CSV field: reconcileCell's, with a leading ' before a
// text a spreadsheet would read as a formula (=, +, -, @).
func csvCell(s string) string {
	s = reconcileCell(s)
	if s != "" && strings.ContainsRune("=+-@", rune(s[0])) {
		return "'" + s
	}
	return s
}

// escapeJSON writes every character of JSON text b that does not show,
// but a new line, as a JSON escape (\u202e; a surrogate pair past
// U+FFFF): such characters can only stand inside strings, where the
// escape means the same character.
func escapeJSON(b []byte) []byte {
	var out bytes.Buffer
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		switch {
		case r == '\n' || r != utf8.RuneError && unicode.IsGraphic(r):
			out.Write(b[:n])
		case r > 0xffff:
			hi, lo := utf16.EncodeRune(r)
			fmt.Fprintf(&out, `\u%04x\u%04x`, hi, lo)
		default:
			fmt.Fprintf(&out, `\u%04x`, r) // json.Marshal leaves no invalid UTF-8: RuneError is U+FFFD itself
		}
		b = b[n:]
	}
	return out.Bytes()
}
