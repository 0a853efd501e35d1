package main

import (
	"context"
	"os"
	"testing"

	"github.com/payonce/payonce/internal/chaos"
	"github.com/payonce/payonce/internal/raceexit"
)

// TestMain makes the test binary a crash-run worker when the run
// re-executes it with chaos.WorkerEnv=1, as main does for the real binary.
func TestMain(m *testing.M) {
	if os.Getenv(chaos.WorkerEnv) == "1" {
		// Every phase of a crash run waits for its workers to exit: they
		// end through raceexit too.
		raceexit.Run(func() int { return chaos.WorkerMain(context.Background(), os.Stdin, os.Stdout) })
	}
	raceexit.Main(m)
}
