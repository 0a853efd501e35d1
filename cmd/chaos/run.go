package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/payonce/payonce/internal/verify/chaos"
)

// run parses args, performs the run and returns the exit code: 0 when no
// operation ran twice or was lost, 1 when one did, 2 for a run that could
// not take place.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, terminal bool) int {
	cfg := chaos.DefaultConfig()
	fs := flag.NewFlagSet("chaos", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&cfg.Operations, "n", cfg.Operations, "business operations to run")
	fs.IntVar(&cfg.Concurrency, "concurrency", cfg.Concurrency, "operations in flight at once")
	fs.Float64Var(&cfg.FaultRate, "faults", cfg.FaultRate, "total share of requests hit by a fault (0..0.9), split 2:2:1:1:1 into answers lost after commit, 503 before commit, connection resets, 429 Retry-After and delays")
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "random seed: same seed, same faults")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	fs.StringVar(&cfg.A55URL, "a55-url", "", "external A55 server (e.g. cmd/fakepay); default: in-process fake")
	fs.StringVar(&cfg.CoinepayURL, "coinepay-url", "", "external Coinepay server; default: in-process fake")
	fs.StringVar(&cfg.A55ClientID, "a55-client-id", env("A55_CLIENT_ID", cfg.A55ClientID), "A55 OAuth2 client id")
	fs.StringVar(&cfg.A55ClientSecret, "a55-client-secret", env("A55_CLIENT_SECRET", cfg.A55ClientSecret), "A55 OAuth2 client secret")
	fs.StringVar(&cfg.CoinepayKey, "coinepay-key", env("COINEPAY_API_KEY", cfg.CoinepayKey), "Coinepay API key id")
	fs.StringVar(&cfg.CoinepaySecret, "coinepay-secret", env("COINEPAY_SECRET", cfg.CoinepaySecret), "Coinepay API secret")
	quiet := fs.Bool("quiet", false, "no progress output")
	crash := fs.Bool("crash", false, "run only the crash run: worker processes SIGKILLed mid-operation, with a shared journal")
	crashPhase := fs.Bool("crash-phase", true, "end the default run with a short crash run (in-process fakes only)")
	ccfg := chaos.DefaultCrashConfig()
	fs.IntVar(&ccfg.References, "crash-n", ccfg.References, "crash run: references (business operations) in the plan; also the default run's crash phase's when given")
	fs.IntVar(&ccfg.Workers, "workers", ccfg.Workers, "crash run: worker processes at once; also the crash phase's when given")
	fs.Float64Var(&ccfg.KillRate, "kill-rate", ccfg.KillRate, "crash run: chance of a SIGKILL at each sync point; also the crash phase's when given")
	fs.StringVar(&ccfg.Journal, "journal", "", "crash run's journal: a SQLite file (default: a new temporary one) or a postgres:// URL (the run uses a schema of its own and drops it)")
	compare := fs.Bool("compare-journals", false, "measure operations per second with no journal, the SQLite journal and (with -journal-pg) the PostgreSQL journal")
	latency := fs.Duration("latency", 0, "-compare-journals: the fakes' answer time, as a provider's")
	journalPG := fs.String("journal-pg", os.Getenv("PAYONCE_POSTGRES_URL"), "-compare-journals: PostgreSQL URL (default $PAYONCE_POSTGRES_URL)")
	fs.BoolVar(&cfg.Telemetry, "otel", false, "also report through otelpayonce and print its metrics (attempts, retries by cause, replays) and a summary of its spans, read from in-memory OpenTelemetry providers")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if !*quiet {
		cfg.Progress, cfg.ProgressIsTerminal = stderr, terminal
		ccfg.Progress = stderr
	}
	ccfg.Seed = cfg.Seed
	ccfg.A55ClientID, ccfg.A55ClientSecret = cfg.A55ClientID, cfg.A55ClientSecret
	ccfg.CoinepayKey, ccfg.CoinepaySecret = cfg.CoinepayKey, cfg.CoinepaySecret
	external := cfg.A55URL != "" || cfg.CoinepayURL != ""
	switch {
	case *compare:
		cmp, err := chaos.CompareJournals(ctx, chaos.CompareConfig{Operations: cfg.Operations, Concurrency: cfg.Concurrency,
			PostgresURL: *journalPG, Seed: cfg.Seed, Latency: *latency})
		return finish(cmp, err, *asJSON, stdout, stderr)
	case *crash && external:
		fmt.Fprintln(stderr, "chaos: -crash runs its own fakes; it takes no -a55-url or -coinepay-url")
		return 2
	case *crash:
		rep, err := chaos.RunCrash(ctx, ccfg)
		return finish(rep, err, *asJSON, stdout, stderr)
	}
	if err := ccfg.Validate(); err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	rep, err := chaos.Run(ctx, cfg)
	if err == nil && *crashPhase && !external {
		short := chaos.ShortCrashConfig()
		short.Seed, short.Journal, short.Progress = ccfg.Seed, ccfg.Journal, ccfg.Progress
		short.A55ClientID, short.A55ClientSecret, short.CoinepayKey, short.CoinepaySecret =
			ccfg.A55ClientID, ccfg.A55ClientSecret, ccfg.CoinepayKey, ccfg.CoinepaySecret
		// The crash run's size flags, when given, size the phase too.
		fs.Visit(func(f *flag.Flag) {
			switch f.Name {
			case "crash-n":
				short.References = ccfg.References
			case "workers":
				short.Workers = ccfg.Workers
			case "kill-rate":
				short.KillRate = ccfg.KillRate
			}
		})
		rep.Crash, err = chaos.RunCrash(ctx, short)
	}
	return finish(rep, err, *asJSON, stdout, stderr)
}

// report is what each kind of run returns.
type report interface {
	WriteText(w io.Writer) error
	ResultLine() string
	Passed() bool
}

// finish prints a run's report as text or JSON (then its result line) and
// returns the exit code: 2 when the run could not take place, 1 when it
// did not pass.
func finish(rep report, err error, asJSON bool, stdout, stderr io.Writer) int {
	if err != nil {
		fmt.Fprintln(stderr, "chaos:", err)
		return 2
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return 2
		}
		fmt.Fprintln(stdout, rep.ResultLine())
	} else if err := rep.WriteText(stdout); err != nil {
		return 2
	}
	if !rep.Passed() {
		return 1
	}
	return 0
}

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
