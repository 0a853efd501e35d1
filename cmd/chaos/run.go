package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/payonce/payonce/internal/chaos"
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
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if !*quiet {
		cfg.Progress, cfg.ProgressIsTerminal = stderr, terminal
	}
	rep, err := chaos.Run(ctx, cfg)
	if err != nil {
		fmt.Fprintln(stderr, "chaos:", err)
		return 2
	}
	if *asJSON {
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
