// Command chaos proves payonce's promise: it runs a few thousand business
// operations (A55 charges, captures, refunds, cancels; Coinepay card
// applies and recharges) through the SDK under injected faults, resumes the
// ones that ran out of retries with the key their error carried, then
// checks the fake servers' ledgers against what the clients were told. It
// exits non-zero when any operation ran twice or was lost.
//
//	go run ./cmd/chaos                     # in-process fakes, default fault mix
//	go run ./cmd/chaos -n 10000 -faults 0.5 -seed 7 -json
//	go run ./cmd/chaos -a55-url http://127.0.0.1:8080 -coinepay-url http://127.0.0.1:8080
//	go run ./cmd/chaos -crash                          # worker processes SIGKILLed mid-operation
//	go run ./cmd/chaos -crash -journal postgres://postgres@127.0.0.1:5432/test
//	go run ./cmd/chaos -compare-journals -journal-pg postgres://...
//
// The default run ends with a short crash run: worker processes (this
// binary re-executed with PAYONCE_CHAOS_WORKER=1) share a journal while
// the parent kills them at chosen moments and moves the fakes' clock 25 h.
//
// Against external servers (cmd/fakepay), faults are injected on the client
// side by a transport that drops answers after the server has them.
// Credentials come from flags or A55_CLIENT_ID, A55_CLIENT_SECRET,
// COINEPAY_API_KEY, COINEPAY_SECRET.
package main

import (
	"context"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/payonce/payonce/internal/verify/chaos"
)

func main() {
	if os.Getenv(chaos.WorkerEnv) == "1" {
		// A worker keeps the default signal handling: an interrupt ends it
		// at once, as a kill would.
		os.Exit(chaos.WorkerMain(context.Background(), os.Stdin, os.Stdout))
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		// A long run (-n 1000000) holds a few hundred MB of live data at
		// most; the limit makes the collector work before the heap doubles.
		debug.SetMemoryLimit(memoryLimit)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, isTerminal(os.Stderr))
	stop()
	os.Exit(code)
}

// memoryLimit is the run's soft memory limit unless GOMEMLIMIT sets one.
const memoryLimit = 320 << 20

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
