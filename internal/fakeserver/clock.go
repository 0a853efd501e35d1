package fakeserver

import (
	"sync"
	"time"
)

// Clock is the fakes' injectable clock. A real-time clock follows time.Now
// shifted by whatever Advance and Set added; a fixed clock only moves when
// told to. Every fake reads the time from its Clock: idempotency windows,
// token lifetimes, rate-limit windows, signature timestamps and the Date
// response header. Safe for concurrent use.
type Clock struct {
	mu     sync.Mutex
	fixed  bool
	at     time.Time     // the fixed time, when fixed
	offset time.Duration // added to time.Now, when not fixed
}

// NewClock returns a clock that follows real time.
func NewClock() *Clock { return &Clock{} }

// NewFixedClock returns a clock frozen at t; only Advance and Set move it.
func NewFixedClock(t time.Time) *Clock { return &Clock{fixed: true, at: t} }

// Now returns the clock's current time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fixed {
		return c.at
	}
	return time.Now().Add(c.offset)
}

// Advance moves the clock forward by d (backward when d is negative).
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fixed {
		c.at = c.at.Add(d)
		return
	}
	c.offset += d
}

// Set moves the clock to t. A real-time clock keeps running from t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fixed {
		c.at = t
		return
	}
	c.offset = time.Until(t)
}
