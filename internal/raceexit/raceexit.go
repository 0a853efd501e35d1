// Package raceexit ends test processes without the pause the race
// detector's runtime takes at exit.
//
// A program built with -race sleeps for GORACE's atexit_sleep_ms, a
// second by default, when it exits while another goroutine lives, so
// that a late race can still be reported. Since Go 1.21 the runtime's
// timers always hold one, so every such process pauses: go test -race
// ./... pays a second per test binary, and a test pays one more for
// each helper process it starts and waits for. Nothing is left to
// report by then in a test binary: testing fails a test on every race
// found while it ran, and fails the run on one found between tests.
package raceexit

import (
	"os"
	"strings"
	"syscall"
	"testing"
)

// sleepFlag is the race runtime's GORACE option for the pause.
const sleepFlag = "atexit_sleep_ms"

// Main runs m's tests and ends the process with their exit code. Under
// the race detector, and unless GORACE names atexit_sleep_ms or tests
// measure coverage, it ends the process without the race runtime's
// finalizer and so without its pause; the processes the tests start
// inherit a GORACE with atexit_sleep_ms=0, which spares them the pause
// and keeps their own race reports and exit status. Call it from
// TestMain: func TestMain(m *testing.M) { raceexit.Main(m) }.
func Main(m *testing.M) {
	gorace := os.Getenv("GORACE")
	if v, ok := childGORACE(gorace); ok {
		_ = os.Setenv("GORACE", v)
	}
	code := m.Run()
	if skipFinalizer(raceEnabled, testing.CoverMode(), gorace) {
		syscall.Exit(code)
	}
	os.Exit(code)
}

// skipFinalizer reports whether a test process may end without the race
// runtime's finalizer: only under the race detector, only when GORACE
// (as the process saw it at its start) leaves the pause at its default,
// and never when coverage is measured, whose counters are written by
// exit hooks that os.Exit runs.
func skipFinalizer(race bool, coverMode, gorace string) bool {
	return race && coverMode == "" && !strings.Contains(gorace, sleepFlag)
}

// childGORACE is the GORACE the processes a test starts should see, and
// whether it differs from gorace: the same options with no pause at exit,
// unless gorace chooses the pause itself.
func childGORACE(gorace string) (string, bool) {
	if strings.Contains(gorace, sleepFlag) {
		return gorace, false
	}
	return strings.TrimSpace(gorace + " " + sleepFlag + "=0"), true
}
