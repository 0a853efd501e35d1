package main

import (
	"github.com/payonce/payonce/journal"

	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/payonce/payonce/journal/pgjournal"
	"github.com/payonce/payonce/journal/sqlitejournal"
)

// usage is the command's synopsis.
const usage = `usage: payonce journal <list|show|settle|purge|scopes> -journal <file.db|postgres://...> [flags]

  list    pending entries, oldest first (-state in-doubt|pending|all, -scope, -older-than, -limit)
  show    one entry: show -scope S <reference>, or show <scope> <reference>
  settle  one entry: -lookup (at the provider, credentials from the environment)
          or -outcome succeeded|failed|not-executed -reason "..." [-result file.json|-]
  purge   delete settled entries older than -older-than (e.g. 720h); -dry-run counts them
  scopes  the scopes the journal holds, with their entries; -from S -to T moves S's
          entries into T (an earlier payonce's scope into today's), all or none

Every subcommand takes -json for JSON output. See docs/journal.md.`

// errUsage marks an error of the command line (exit status 2).
var errUsage = errors.New("usage")

// deps is what the command takes from its host, replaced in tests.
type deps struct {
	httpClient *http.Client     // for provider lookups; nil: http.DefaultClient
	now        func() time.Time // the operator's clock; nil: the journal's, else time.Now
	stdin      io.Reader        // for -result -
}

// run runs the command with args (without the program name) and returns
// its exit status: 0 on success, 1 when the operation failed, 2 on bad
// usage. getenv reads the environment (provider credentials).
func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	return runWith(ctx, args, stdout, stderr, getenv, deps{})
}

func runWith(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string, d deps) int {
	stdout, stderr, flush := escapeOutput(stdout, stderr) // every byte printed is escaped (output.go)
	defer flush()
	err := dispatch(ctx, args, stdout, getenv, d)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprintln(stderr, usage)
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintln(stderr, "payonce: "+errorText(err))
		fmt.Fprintln(stderr, "run 'payonce journal -h' for usage")
		return 2
	}
	fmt.Fprintln(stderr, "payonce: "+errorText(err))
	return 1
}

func usageErr(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errUsage}, a...)...)
}

func dispatch(ctx context.Context, args []string, stdout io.Writer, getenv func(string) string, d deps) error {
	if len(args) == 0 {
		return usageErr("missing command: want journal")
	}
	if args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help" {
		return flag.ErrHelp
	}
	if args[0] != "journal" {
		return usageErr("unknown command %q: want journal", args[0])
	}
	if len(args) < 2 {
		return usageErr("missing subcommand: want list, show, settle, purge or scopes")
	}
	sub, rest := args[1], args[2:]
	switch sub {
	case "-h", "-help", "--help", "help":
		return flag.ErrHelp
	case "list":
		return cmdList(ctx, rest, stdout, d)
	case "show":
		return cmdShow(ctx, rest, stdout, d)
	case "settle":
		return cmdSettle(ctx, rest, stdout, getenv, d)
	case "purge":
		return cmdPurge(ctx, rest, stdout, d)
	case "scopes":
		return cmdScopes(ctx, rest, stdout, d)
	}
	return usageErr("unknown subcommand %q: want list, show, settle, purge or scopes", sub)
}

// common are the flags every subcommand takes.
type common struct {
	journal, schema string
	json            bool
}

func newFlags(name string, c *common) *flag.FlagSet {
	fs := flag.NewFlagSet("payonce journal "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&c.journal, "journal", "", "SQLite file or postgres:// URL of the journal (required)")
	fs.StringVar(&c.schema, "schema", "", "PostgreSQL schema of the journal's tables (pgjournal.WithSchema)")
	fs.BoolVar(&c.json, "json", false, "print JSON instead of a table")
	return fs
}

// parse parses args, flags and operands in any order.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var operands []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usageErr("%s: %v", fs.Name(), err)
		}
		args = fs.Args()
		if len(args) == 0 {
			return operands, nil
		}
		if args[0] == "--" {
			return append(operands, args[1:]...), nil
		}
		operands = append(operands, args[0])
		args = args[1:]
	}
}

// journalHandle is an open journal and how to close it.
type journalHandle struct {
	journal.Store
	close func()
	// countSettled counts what Purge(before) would delete, deleting
	// nothing: the same predicate, as a COUNT.
	countSettled func(ctx context.Context, before time.Time) (int64, error)
}

// openJournal opens the journal c names: a postgres:// or postgresql://
// URL, else a SQLite file, which must exist (a mistyped path never
// creates an empty journal).
func openJournal(ctx context.Context, c common) (*journalHandle, error) {
	if c.journal == "" {
		return nil, usageErr("-journal is required: a SQLite file or a postgres:// URL")
	}
	if strings.HasPrefix(c.journal, "postgres://") || strings.HasPrefix(c.journal, "postgresql://") {
		var opts []pgjournal.Option
		if c.schema != "" {
			opts = append(opts, pgjournal.WithSchema(c.schema))
		}
		j, err := pgjournal.Open(ctx, c.journal, opts...)
		if err != nil {
			return nil, fmt.Errorf("open journal: %w", err)
		}
		count := func(ctx context.Context, before time.Time) (int64, error) {
			var n int64
			table := pgx.Identifier{j.Schema(), "payonce_journal"}.Sanitize()
			err := j.Pool().QueryRow(ctx, `SELECT count(*) FROM `+table+` WHERE state IN ('succeeded', 'failed') AND updated_at < $1`,
				before.UTC().Truncate(time.Microsecond)).Scan(&n)
			return n, err
		}
		return &journalHandle{Store: j, close: j.Close, countSettled: count}, nil
	}
	if c.schema != "" {
		return nil, usageErr("-schema applies to a PostgreSQL journal only")
	}
	if err := fileExists(c.journal); err != nil {
		return nil, err
	}
	j, err := sqlitejournal.Open(ctx, c.journal)
	if err != nil {
		return nil, fmt.Errorf("open journal: %w", err)
	}
	count := func(ctx context.Context, before time.Time) (int64, error) {
		var n int64
		err := j.DB().QueryRowContext(ctx, `SELECT count(*) FROM payonce_journal WHERE state IN ('succeeded', 'failed') AND updated_at < ?`,
			before.UTC().Truncate(time.Microsecond).UnixMicro()).Scan(&n)
		return n, err
	}
	return &journalHandle{Store: j, close: func() { _ = j.Close() }, countSettled: count}, nil
}

// clock returns the command's present: d.now, else the journal's clock,
// else the machine's.
func clock(ctx context.Context, j journal.Store, d deps) (time.Time, error) {
	if d.now != nil {
		return d.now(), nil
	}
	t, err := j.Now(ctx)
	if err != nil {
		return time.Time{}, fmt.Errorf("journal clock: %w", err)
	}
	if t.IsZero() {
		t = time.Now()
	}
	return t, nil
}

// openAt opens the journal c names and reads the command's present
// (clock); the caller closes the journal it returns.
func openAt(ctx context.Context, c common, d deps) (*journalHandle, time.Time, error) {
	j, err := openJournal(ctx, c)
	if err != nil {
		return nil, time.Time{}, err
	}
	now, err := clock(ctx, j, d)
	if err != nil {
		j.close()
		return nil, time.Time{}, err
	}
	return j, now, nil
}
