// Package settlelookup holds the steps the providers' settle lookups share:
// reading the entry in doubt, naming the window and the candidates, and
// telling a settled entry's outcome.
package settlelookup

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/payonce/payonce"
)

// MaxNamed is how many candidates an ambiguous lookup names in its error.
const MaxNamed = 5

// Entry reads the journal entry of reference for a lookup of operation op.
// stands is true when the entry is returned as it is: a success is final,
// and so is a failure under which nothing was ever sent (a failure that
// was sent gives way to a success the lookup may find under its key).
// kind and err are set when the entry cannot be read (payonce.ErrJournal)
// or records another operation (payonce.ErrInvalidRequest).
func Entry(ctx context.Context, core *payonce.Client, reference, op string) (e payonce.JournalEntry, stands bool, kind, err error) {
	set := core.Settings()
	j := set.Journal
	if j == nil {
		return payonce.JournalEntry{}, false, payonce.ErrInvalidConfig, fmt.Errorf("settle %q: the client has no journal", reference)
	}
	if kind, err := core.CheckScopes(ctx); err != nil {
		return payonce.JournalEntry{}, false, kind, err
	}
	e, err = j.Get(ctx, set.Scope, reference)
	if err != nil {
		return payonce.JournalEntry{}, false, payonce.ErrJournal, fmt.Errorf("settle %q: %w", reference, err)
	}
	if e.State == payonce.JournalSucceeded || (e.Settled() && !e.Sent) {
		return e, true, nil, nil
	}
	if e.Operation != op {
		return e, false, payonce.ErrInvalidRequest, fmt.Errorf("reference %q records %q, not %s: settle it with payonce.Client.Settle", reference, e.Operation, op)
	}
	return e, false, nil, nil
}

// Window names the lookup window [from, to] in a reason or an error.
func Window(from, to time.Time) string {
	return fmt.Sprintf("created %s to %s", from.UTC().Format(time.RFC3339), to.UTC().Format(time.RFC3339))
}

// Named lists the ids of the first MaxNamed of found, comma-separated.
func Named[T any](found []T, id func(T) string) string {
	ids := make([]string, 0, MaxNamed)
	for _, f := range found[:min(len(found), MaxNamed)] {
		ids = append(ids, id(f))
	}
	return strings.Join(ids, ", ")
}

// OutcomeOf names the outcome a settled entry holds: "succeeded",
// "not_executed" or "failed" (what the operator command prints).
func OutcomeOf(e payonce.JournalEntry) string {
	switch {
	case e.State == payonce.JournalSucceeded:
		return "succeeded"
	case e.NotExecuted():
		return "not_executed"
	}
	return "failed"
}

// ErrKindOf is the kind of err, a *payonce.APIError's, else
// payonce.ErrTransport.
func ErrKindOf(err error) error {
	var ae *payonce.APIError
	if errors.As(err, &ae) && ae.Kind != nil {
		return ae.Kind
	}
	return payonce.ErrTransport
}
