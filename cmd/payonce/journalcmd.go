package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/journal"
)

// The -state values of list.
const (
	stateInDoubt = "in-doubt"
	statePending = "pending"
	stateAll     = "all"
)

func cmdList(ctx context.Context, args []string, stdout io.Writer, d deps) error {
	var c common
	var scope, state string
	var olderThan time.Duration
	var limit int
	fs := newFlags("list", &c)
	fs.StringVar(&scope, "scope", "", "only this scope")
	fs.StringVar(&state, "state", stateAll, "in-doubt (sent, key past its window), pending (not in doubt) or all")
	fs.DurationVar(&olderThan, "older-than", 0, "only entries last updated at least this long ago")
	fs.IntVar(&limit, "limit", 100, "at most this many entries (0: no limit)")
	ops, err := parse(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(ops) > 0:
		return usageErr("list takes no operands, got %q", ops[0])
	case state != stateInDoubt && state != statePending && state != stateAll:
		return usageErr("-state %q: want in-doubt, pending or all", state)
	case olderThan < 0:
		return usageErr("-older-than must not be negative")
	case limit < 0:
		return usageErr("-limit must not be negative")
	}
	j, now, err := openAt(ctx, c, d)
	if err != nil {
		return err
	}
	defer j.close()
	q := journal.PendingQuery{Scope: scope}
	if olderThan > 0 {
		q.Before = now.Add(-olderThan)
	}
	if state == stateAll {
		q.Limit = limit
	}
	es, err := j.Pending(ctx, q)
	if err != nil {
		return fmt.Errorf("list: %w", err)
	}
	vs := []entryView{}
	for _, e := range es {
		v := view(e, now)
		if (state == stateInDoubt && !v.InDoubt) || (state == statePending && v.InDoubt) {
			continue
		}
		if limit > 0 && len(vs) == limit {
			break
		}
		vs = append(vs, v)
	}
	if c.json {
		return writeJSON(stdout, vs)
	}
	return writeList(stdout, vs)
}

// entryArgs reads the entry an operand list names: <scope> <reference>,
// or <reference> with -scope.
func entryArgs(scope string, ops []string) (string, string, error) {
	switch {
	case scope != "" && len(ops) == 1:
		return scope, ops[0], nil
	case scope == "" && len(ops) == 2:
		return ops[0], ops[1], nil
	case scope != "" && len(ops) == 2:
		return "", "", usageErr("give the scope once: -scope S <reference>, or <scope> <reference>")
	}
	return "", "", usageErr("name one entry: -scope S <reference>, or <scope> <reference>")
}

// openEntry opens the journal c names, reads the command's present and
// gets the entry of scope and ref, errors prefixed with verb; the caller
// closes the journal it returns.
func openEntry(ctx context.Context, c common, d deps, verb, scope, ref string) (*journalHandle, time.Time, payonce.JournalEntry, error) {
	j, now, err := openAt(ctx, c, d)
	if err != nil {
		return nil, time.Time{}, payonce.JournalEntry{}, err
	}
	e, err := j.Get(ctx, scope, ref)
	if err != nil {
		if errors.Is(err, journal.ErrNotFound) {
			err = fmt.Errorf("%w%s", err, elsewhere(ctx, j.Store, scope, ref))
		}
		j.close()
		return nil, time.Time{}, payonce.JournalEntry{}, fmt.Errorf("%s %q %q: %w", verb, scope, ref, err)
	}
	return j, now, e, nil
}

func cmdShow(ctx context.Context, args []string, stdout io.Writer, d deps) error {
	var c common
	var scope string
	fs := newFlags("show", &c)
	fs.StringVar(&scope, "scope", "", "the entry's scope")
	ops, err := parse(fs, args)
	if err != nil {
		return err
	}
	scope, ref, err := entryArgs(scope, ops)
	if err != nil {
		return err
	}
	j, now, e, err := openEntry(ctx, c, d, "show", scope, ref)
	if err != nil {
		return err
	}
	defer j.close()
	if c.json {
		return writeJSON(stdout, view(e, now))
	}
	return writeEntry(stdout, view(e, now))
}

// purgeResult is what purge prints.
type purgeResult struct {
	SettledBefore time.Time `json:"settled_before"`
	DryRun        bool      `json:"dry_run"`
	Count         int64     `json:"count"`
}

func cmdPurge(ctx context.Context, args []string, stdout io.Writer, d deps) error {
	var c common
	var olderThan time.Duration
	var dry bool
	fs := newFlags("purge", &c)
	fs.DurationVar(&olderThan, "older-than", 0, "delete settled entries last updated at least this long ago (required, e.g. 720h)")
	fs.BoolVar(&dry, "dry-run", false, "count what would be deleted, delete nothing")
	ops, err := parse(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(ops) > 0:
		return usageErr("purge takes no operands, got %q", ops[0])
	case olderThan <= 0:
		return usageErr("-older-than is required and must be above 0 (e.g. 720h)")
	}
	j, now, err := openAt(ctx, c, d)
	if err != nil {
		return err
	}
	defer j.close()
	res := purgeResult{SettledBefore: now.Add(-olderThan).UTC(), DryRun: dry}
	if dry {
		res.Count, err = j.countSettled(ctx, res.SettledBefore)
	} else {
		res.Count, err = j.Purge(ctx, res.SettledBefore)
	}
	if err != nil {
		return fmt.Errorf("purge: %w", err)
	}
	if c.json {
		return writeJSON(stdout, res)
	}
	verb := "deleted"
	if dry {
		verb = "would delete"
	}
	_, err = fmt.Fprintf(stdout, "%s %d settled entries last updated before %s\n", verb, res.Count, res.SettledBefore.Format(time.RFC3339))
	return err
}

// elsewhere says which other scopes hold ref, when any does: an entry an
// earlier payonce recorded under another form of the scope.
func elsewhere(ctx context.Context, j journal.Store, scope, ref string) string {
	u, ok := j.(payonce.JournalUpgrader)
	if !ok {
		return ""
	}
	counts, err := u.Scopes(ctx)
	if err != nil {
		return ""
	}
	var in []string
	for _, n := range counts {
		if n.Scope == scope {
			continue
		}
		if _, err := j.Get(ctx, n.Scope, ref); err == nil {
			in = append(in, strconv.Quote(n.Scope))
		}
	}
	if len(in) == 0 {
		return ""
	}
	return " (the reference is under scope " + strings.Join(in, ", ") + ": `payonce journal scopes` shows the scopes and moves one into another)"
}
