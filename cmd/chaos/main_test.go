package main

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/payonce/payonce/internal/chaos"
)

// TestMain makes the test binary a crash-run worker when the run
// re-executes it with chaos.WorkerEnv=1, as main does for the real binary.
func TestMain(m *testing.M) {
	if os.Getenv(chaos.WorkerEnv) == "1" {
		os.Exit(chaos.WorkerMain(context.Background(), os.Stdin, os.Stdout))
	}
	// The workers' race runtime must not sleep a second at each exit
	// (GORACE atexit_sleep_ms): every phase of a crash run waits for its
	// workers to exit. This binary read GORACE at its start already.
	_ = os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	os.Exit(m.Run())
}
