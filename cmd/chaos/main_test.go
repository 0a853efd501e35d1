package main

import (
	"context"
	"os"
	"testing"

	"github.com/payonce/payonce/internal/verify/chaos"
)

// TestMain makes the test binary a crash-run worker when the run
// re-executes it with chaos.WorkerEnv=1, as main does for the real binary.
func TestMain(m *testing.M) {
	if os.Getenv(chaos.WorkerEnv) == "1" {
		os.Exit(chaos.WorkerMain(context.Background(), os.Stdin, os.Stdout))
	}
	os.Exit(m.Run())
}
