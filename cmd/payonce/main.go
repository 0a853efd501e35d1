// Command payonce is the operator's tool for a payonce journal: list the
// entries in doubt, show one, settle one (looked up at the provider or
// recorded by hand), purge settled entries, and reconcile the journal
// with a provider's records. See docs/journal.md.
//
//	go run ./cmd/payonce journal list -journal journal.db
//	go run ./cmd/payonce reconcile -provider coinepay -journal journal.db
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}
