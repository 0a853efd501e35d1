package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55/a55reconcile"
	"github.com/payonce/payonce/coinepay/coinepayreconcile"
	"github.com/payonce/payonce/reconcile"
)

// exitAttention is the exit status of a reconcile that found something
// that needs a person (1 is a failure, 2 a bad command line).
const exitAttention = 3

// errAttention marks a reconcile that ran and found something that needs
// a person: its report is printed, the exit status is exitAttention.
var errAttention = errors.New("needs a person")

// The -inbox values of reconcile.
const (
	inboxAuto = "auto"
	inboxOn   = "on"
	inboxOff  = "off"
)

// reconcileFlags are reconcile's flags.
type reconcileFlags struct {
	common
	provider, since, until, orderPattern, inbox, inboxScope string
	wallets                                                 []string
	window, margin                                          time.Duration
	csv                                                     bool
	maxResources                                            int
}

func (f *reconcileFlags) flagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("payonce reconcile", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&f.journal, "journal", "", "SQLite file or postgres:// URL of the journal (required)")
	fs.StringVar(&f.schema, "schema", "", "PostgreSQL schema of the journal's tables")
	fs.BoolVar(&f.json, "json", false, "print the report as JSON")
	fs.BoolVar(&f.csv, "csv", false, "print the findings as CSV")
	fs.StringVar(&f.provider, "provider", "", "a55 or coinepay (required; credentials from the environment)")
	fs.StringVar(&f.since, "since", "", "start of the span: RFC 3339 time or YYYY-MM-DD (UTC)")
	fs.StringVar(&f.until, "until", "", "end of the span: RFC 3339 time or YYYY-MM-DD (UTC); default now")
	fs.DurationVar(&f.window, "window", 0, "length of the span ending at -until (default 24h; not with -since)")
	fs.DurationVar(&f.margin, "margin", 0, "widen the span the provider's list is read over by this much (default 15m)")
	fs.Func("wallet", "a55: a wallet UUID to list (repeat or separate by commas; default: A55_WALLET_UUID)", func(s string) error {
		for w := range strings.SplitSeq(s, ",") {
			if w = strings.TrimSpace(w); w != "" {
				f.wallets = append(f.wallets, w)
			}
		}
		return nil
	})
	fs.StringVar(&f.orderPattern, "order-pattern", reconcile.DefaultOrderPattern, "regular expression whose one group is the order of a reference")
	fs.StringVar(&f.inbox, "inbox", inboxAuto, "check status changes against the webhook inbox: auto (when it holds events), on or off")
	fs.StringVar(&f.inboxScope, "inbox-scope", "", "the scope the webhook receiver records events under (default: the provider's)")
	fs.IntVar(&f.maxResources, "max-resources", reconcile.DefaultMaxResources, "fail rather than read more of the provider's list than this")
	return fs
}

// span reads -since, -until and -window into the span reconciled.
func (f *reconcileFlags) span(now time.Time) (time.Time, time.Time, error) {
	until := now
	if f.until != "" {
		t, err := parseTime(f.until)
		if err != nil {
			return time.Time{}, time.Time{}, usageErr("-until %q: %v", f.until, err)
		}
		until = t
	}
	switch {
	case f.since != "" && f.window != 0:
		return time.Time{}, time.Time{}, usageErr("give -since or -window, not both")
	case f.window < 0:
		return time.Time{}, time.Time{}, usageErr("-window must be above 0")
	case f.since == "":
		w := f.window
		if w == 0 {
			w = 24 * time.Hour
		}
		return until.Add(-w), until, nil
	}
	since, err := parseTime(f.since)
	if err != nil {
		return time.Time{}, time.Time{}, usageErr("-since %q: %v", f.since, err)
	}
	if !since.Before(until) {
		return time.Time{}, time.Time{}, usageErr("-since must be before -until")
	}
	return since, until, nil
}

// parseTime reads an RFC 3339 time or a date (midnight UTC).
func parseTime(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return time.Time{}, errors.New("want an RFC 3339 time (2026-12-01T10:00:00Z) or a date (2026-12-01)")
	}
	return t, nil
}

// check refuses a flag combination before anything is opened.
func (f *reconcileFlags) check() error {
	switch {
	case f.provider != "a55" && f.provider != "coinepay":
		return usageErr("-provider %q: want a55 or coinepay", f.provider)
	case f.json && f.csv:
		return usageErr("-json and -csv exclude each other")
	case f.margin < 0:
		return usageErr("-margin must not be negative")
	case f.maxResources < 1:
		return usageErr("-max-resources must be above 0")
	case f.inbox != inboxAuto && f.inbox != inboxOn && f.inbox != inboxOff:
		return usageErr("-inbox %q: want auto, on or off", f.inbox)
	case len(f.wallets) > 0 && f.provider != "a55":
		return usageErr("-wallet applies to -provider a55 only")
	}
	return nil
}

func cmdReconcile(ctx context.Context, args []string, stdout io.Writer, getenv func(string) string, d deps) error {
	var f reconcileFlags
	fs := f.flagSet()
	ops, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(ops) > 0 {
		return usageErr("reconcile takes no operands, got %q", ops[0])
	}
	if err := f.check(); err != nil {
		return err
	}
	orders, err := reconcile.OrderPattern(f.orderPattern)
	if err != nil {
		return usageErr("-order-pattern: %v", err)
	}
	j, now, err := openAt(ctx, f.common, d)
	if err != nil {
		return err
	}
	defer j.close()
	from, to, err := f.span(now)
	if err != nil {
		return err
	}
	rj, ok := j.Store.(reconcile.Journal)
	if !ok {
		return errors.New("reconcile: the journal cannot list its entries")
	}
	prov, client, err := f.providerOf(j, getenv, d)
	if err != nil {
		return err
	}
	o := reconcile.Options{From: from, To: to, Now: now, Margin: f.margin, Orders: orders,
		InboxScope: f.inboxScope, MaxResources: f.maxResources, Secrets: client}
	if o.Inbox, err = f.inboxOf(ctx, j, prov.Info().Scope); err != nil {
		return err
	}
	rep, err := reconcile.Run(ctx, prov, rj, o)
	if err != nil {
		return err
	}
	if err := writeReport(stdout, rep, f.format()); err != nil {
		return err
	}
	if rep.NeedsAttention() {
		return fmt.Errorf("reconcile: %d findings: %w", len(rep.Findings), errAttention)
	}
	return nil
}

// providerOf builds the provider's client from the environment, as
// settle -lookup does, and returns it with its core client, whose
// secrets the report is cut of.
func (f *reconcileFlags) providerOf(j *journalHandle, getenv func(string) string, d deps) (reconcile.Provider, *payonce.Client, error) {
	if f.provider == "a55" {
		c, err := a55FromEnv(j, getenv, d)
		if err != nil {
			return nil, nil, err
		}
		return a55reconcile.New(c, f.wallets...), c.Core(), nil
	}
	c, err := coinepayFromEnv(j, getenv, d)
	if err != nil {
		return nil, nil, err
	}
	return coinepayreconcile.New(c), c.Core(), nil
}

// inboxOf is the inbox -inbox asks to check: the journal's, when it has
// one and (auto) it holds events of the scope.
func (f *reconcileFlags) inboxOf(ctx context.Context, j *journalHandle, scope string) (payonce.Inbox, error) {
	if f.inbox == inboxOff {
		return nil, nil
	}
	in, ok := j.Store.(payonce.Inbox)
	if !ok {
		if f.inbox == inboxOn {
			return nil, errors.New("reconcile: -inbox on: the journal holds no inbox")
		}
		return nil, nil
	}
	if f.inbox == inboxOn {
		return in, nil
	}
	if f.inboxScope != "" {
		scope = f.inboxScope
	}
	used, err := reconcile.InboxInUse(ctx, in, scope)
	if err != nil || !used {
		return nil, err
	}
	return in, nil
}

// format is the output -json and -csv ask for.
func (f *reconcileFlags) format() string {
	switch {
	case f.json:
		return formatJSON
	case f.csv:
		return formatCSV
	}
	return formatTable
}
