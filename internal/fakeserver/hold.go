package fakeserver

import (
	"fmt"
	"sync"
	"time"
)

// HoldEnv names the environment variable that keeps a Go test fake
// (a55test.New, coinepaytest.New) up after its test failed, for as long
// as it says ("10m"), so a developer can open its console.
const HoldEnv = "PAYONCE_FAKE_HOLD"

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
