// Package raceexit ends test processes without the pause the race
// detector's runtime takes at exit, where nothing is left that could
// race.
//
// A program built with -race sleeps for GORACE's atexit_sleep_ms, a
// second by default, when it exits while another goroutine lives, so
// that a goroutine still running can commit, and have reported, a late
// race. Since Go 1.21 the runtime's timers always hold one, so every such
// process pauses: go test -race ./... pays a second per test binary, and
// a test pays one more for each helper process it starts and waits for.
//
// Run waits instead for the goroutines started since it began to end,
// for as long as the pause would have lasted and no longer. Once they
// have ended, or the wait is over, and no race was found, it ends the
// process at once; a race found at any time ends it through the race
// runtime, which reports it and exits 66, as it would have.
package raceexit

import (
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// sleepFlag is the race runtime's GORACE option for the pause.
const sleepFlag = "atexit_sleep_ms"

// pause is the race runtime's default atexit_sleep_ms: how long Run
// gives goroutines still running to end (and to race).
const pause = time.Second

// Main runs m's tests and ends the process with their exit code, as Run
// does. Call it from TestMain: func TestMain(m *testing.M) { raceexit.Main(m) }.
func Main(m *testing.M) { Run(m.Run) }

// Run calls f and ends the process with the code f returns. Under the
// race detector, unless GORACE names atexit_sleep_ms or tests measure
// coverage, it first waits, at most the race runtime's pause, until no
// goroutine started since Run began is left; then it ends the process
// without the race runtime's finalizer if no race was found, and through
// it (its report, exit status 66) if one was. A test binary's helper
// process (a worker, a program under test) ends through Run too.
func Run(f func() int) {
	before := runtime.NumGoroutine()
	code := f()
	if !skipFinalizer(raceEnabled, testing.CoverMode(), os.Getenv("GORACE")) {
		os.Exit(code)
	}
	awaitGoroutines(runtime.NumGoroutine, before, pause)
	if raceErrors() > 0 {
		os.Exit(code)
	}
	syscall.Exit(code)
}

// awaitGoroutines waits until count, the goroutines that run, is at
// most n, or for d.
func awaitGoroutines(count func() int, n int, d time.Duration) {
	deadline := time.Now().Add(d)
	for wait := 50 * time.Microsecond; count() > n && time.Now().Before(deadline); wait = min(2*wait, 10*time.Millisecond) {
		time.Sleep(wait)
	}
}

// skipFinalizer reports whether a test process may end without the race
// runtime's finalizer: only under the race detector, only when GORACE
// leaves the pause at its default, and never when coverage is measured,
// whose counters are written by exit hooks that os.Exit runs.
func skipFinalizer(race bool, coverMode, gorace string) bool {
	return race && coverMode == "" && !strings.Contains(gorace, sleepFlag)
}
