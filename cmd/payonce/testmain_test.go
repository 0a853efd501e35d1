package main

import (
	"os"
	"testing"

	"github.com/payonce/payonce/internal/raceexit"
)

// runMainEnv makes this test binary the payonce program, for the tests
// that run it as one.
const runMainEnv = "PAYONCE_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		raceexit.Run(runMain)
	}
	raceexit.Main(m)
}
