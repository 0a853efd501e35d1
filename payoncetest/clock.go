package payoncetest

import (
	"time"

	"github.com/payonce/payonce/internal/fake/fakeserver"
)

// Clock is a fake's clock: key windows, token lifetimes, rate limits and
// signature timestamps are checked against it, and the SDK clients a
// fake's Client returns read it (for their key-age guard and to sign).
// Moving it (Advance, Set) moves what both sides see; give one Clock to
// several fakes (WithClock) and it drives them all. Make one with NewClock
// or NewFixedClock. Safe for concurrent use.
type Clock struct {
	c *fakeserver.Clock
}

// NewClock returns a clock that follows real time (Advance and Set shift it).
func NewClock() *Clock { return &Clock{c: fakeserver.NewClock()} }

// NewFixedClock returns a clock frozen at t; only Advance and Set move it.
func NewFixedClock(t time.Time) *Clock { return &Clock{c: fakeserver.NewFixedClock(t)} }

// Now returns the clock's current time.
func (c *Clock) Now() time.Time { return c.c.Now() }

// String is the clock's current time, so that %v and %+v print the time,
// not an address.
func (c *Clock) String() string {
	return "payoncetest.Clock{" + c.c.Now().Format(time.RFC3339Nano) + "}"
}

// Advance moves the clock forward by d (backward when d is negative).
func (c *Clock) Advance(d time.Duration) { c.c.Advance(d) }

// Set moves the clock to t; a real-time clock keeps running from t.
func (c *Clock) Set(t time.Time) { c.c.Set(t) }
