package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/payonce/payonce/reconcile"
)

// The output formats of reconcile.
const (
	formatTable = "table"
	formatJSON  = "json"
	formatCSV   = "csv"
)

// writeReport prints rep in format: everything reconcile prints goes
// through here, and then through the command's escaping writer
// (output.go), which escapes every character a terminal would obey. A
// table cell holding such a character is printed quoted (cell), so it
// can neither split the table nor forge a line, and a CSV field never
// starts a formula (csvCell).
func writeReport(w io.Writer, rep *reconcile.Report, format string) error {
	switch format {
	case formatJSON:
		return writeJSON(w, rep)
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
	fmt.Fprintf(w, "reconcile %s %s %s, %s to %s: %d resources, %d entries, %s\n", cell(rep.Provider),
		cell(rep.Scope), cell(rep.Operation), rep.From.Format(time.RFC3339), rep.To.Format(time.RFC3339),
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
			cells[i] = cell(cells[i])
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

// csvCell is a CSV field: cell's, with a leading ' before a text a
// spreadsheet would read as a formula (=, +, -, @).
func csvCell(s string) string {
	s = cell(s)
	if s != "" && strings.ContainsRune("=+-@", rune(s[0])) {
		return "'" + s
	}
	return s
}
