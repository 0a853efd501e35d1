package fakeserver

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
)

// HoldEnv names the environment variable that keeps a Go test fake
// (a55test.New, coinepaytest.New) up after its test failed, for as long
// as it says ("10m"), so a developer can open its console.
const HoldEnv = "PAYONCE_FAKE_HOLD"

// CIEnv names the environment variable CI services set (GitHub Actions,
// GitLab CI, CircleCI, Travis CI, Buildkite, ...): a hold written in test
// code (WithHoldOnFailure) does not wait there, since no one opens the
// console of a CI runner. HoldEnv, set for one run, still holds.
const CIEnv = "CI"

// HoldMargin is how long before the test binary's deadline (go test
// -timeout) a hold ends. Past the deadline the binary panics, and the
// failed test's own messages are never printed.
const HoldMargin = 10 * time.Second

// OnCI reports whether v, the value of CIEnv, says the run is on a CI
// service: anything but "", "0" and "false".
func OnCI(v string) bool {
	v = strings.ToLower(strings.TrimSpace(v))
	return v != "" && v != "0" && v != "false"
}

// HoldTime returns how long a failed test's fake waits, given the hold
// asked for (by a test option when byOption, else by HoldEnv), whether
// the run is on CI, and the test binary's deadline (zero: none). When it
// is less than asked, why says so, for the test's log.
func HoldTime(asked time.Duration, byOption, onCI bool, now, deadline time.Time) (d time.Duration, why string) {
	switch {
	case asked <= 0:
		return 0, "no hold asked for"
	case byOption && onCI:
		return 0, "not held on CI (" + CIEnv + " is set); " + HoldEnv + " holds there"
	case deadline.IsZero():
		return asked, ""
	}
	left := deadline.Sub(now) - HoldMargin
	switch {
	case left <= 0:
		return 0, fmt.Sprintf("not held: go test's -timeout ends the binary in %s", deadline.Sub(now).Round(time.Second))
	case left < asked:
		return left, fmt.Sprintf("held %s only: go test's -timeout ends the binary at %s", left.Round(time.Second), deadline.Format(time.TimeOnly))
	}
	return asked, ""
}

// TestDeadline returns the deadline of a test's binary (go test
// -timeout) when tb reports one, as *testing.T does; zero otherwise.
func TestDeadline(tb any) time.Time {
	if dl, ok := tb.(interface{ Deadline() (time.Time, bool) }); ok {
		if at, ok := dl.Deadline(); ok {
			return at
		}
	}
	return time.Time{}
}

// ParseHold reads the value of HoldEnv: "" is no hold, otherwise a
// positive duration such as "10m".
func ParseHold(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s: want a positive duration such as 10m, got %q", HoldEnv, s)
	}
	return d, nil
}

// Hold keeps a failed test's fake serving until it is released (POST
// /_fakepay/release, the console's Release button) or its time is up.
type Hold struct {
	once    sync.Once
	release chan struct{}
}

// NewHold returns a hold that nothing has released yet.
func NewHold() *Hold { return &Hold{release: make(chan struct{})} }

// Release ends the wait; it is idempotent.
func (h *Hold) Release() { h.once.Do(func() { close(h.release) }) }

// Wait blocks until Release or until d has passed, and reports whether
// it was released.
func (h *Hold) Wait(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-h.release:
		return true
	case <-t.C:
		return false
	}
}

// HoldAsked returns the hold a test fake was asked for: opt when a test
// option gave one (byOption), else the value of HoldEnv.
func HoldAsked(opt time.Duration) (d time.Duration, byOption bool, err error) {
	if opt > 0 {
		return opt, true, nil
	}
	d, err = ParseHold(os.Getenv(HoldEnv))
	return d, false, err
}

// TestLike is what AfterTest needs of a *testing.T (kept apart so that the
// engine does not link package testing into fakepay).
type TestLike interface {
	Failed() bool
	Name() string
	Log(args ...any)
}

// AfterTest ends a test fake when its test ends: when the test failed and
// a hold was asked, it says on the test's log and on standard error where
// the console is and waits as HoldTime allows, then calls closeFn. pkg
// names the test package in those lines.
func (h *Hold) AfterTest(tb TestLike, pkg string, asked time.Duration, byOption bool, consoleURL string, closeFn func()) {
	defer closeFn()
	if asked <= 0 || !tb.Failed() {
		return
	}
	d, why := HoldTime(asked, byOption, OnCI(os.Getenv(CIEnv)), time.Now(), TestDeadline(tb))
	if d == 0 {
		tb.Log(pkg + ": " + tb.Name() + " failed; its fake closes: " + why)
		return
	}
	msg := fmt.Sprintf("%s: %s failed; its fake stays up for %s: open %s (Release there ends the wait)",
		pkg, tb.Name(), d.Round(time.Second), consoleURL)
	if why != "" {
		msg += "; " + why
	}
	tb.Log(msg)
	fmt.Fprintln(os.Stderr, msg) // shown at once, also without -v
	h.Wait(d)
}
