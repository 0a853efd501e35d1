// Command payonce is the operator's tool for a payonce journal: list the
// entries in doubt, show one, settle one (looked up at the provider or
// recorded by hand) and purge settled entries. See docs/journal.md.
//
//	go run ./cmd/payonce journal list -journal journal.db
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() { os.Exit(runMain()) }

// runMain runs the command line, stopped by an interrupt or SIGTERM, and
// returns the exit code.
func runMain() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv)
}
