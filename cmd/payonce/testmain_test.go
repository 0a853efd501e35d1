package main

import (
	"os"
	"testing"
)

// runMainEnv makes this test binary the payonce program, for the tests
// that run it as one.
const runMainEnv = "PAYONCE_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
	}
	os.Exit(m.Run())
}
