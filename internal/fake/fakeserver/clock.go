package fakeserver

import (
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// Clock is the fakes' injectable clock. A real-time clock follows time.Now
// shifted by whatever Advance and Set added; a fixed clock only moves when
// told to. Every fake reads the time from its Clock: idempotency windows,
// token lifetimes, rate-limit windows, signature timestamps and the Date
// response header. Safe for concurrent use.
type Clock struct {
	fixed bool
	start time.Time // the fixed clock's first time, for Reset

	mu    sync.Mutex                 // serializes the moves
	state atomic.Pointer[clockState] // nil: the start (real time, or start when fixed)
}

// clockState is where a Clock stands. A move publishes a new one, so that
// Now, which every request calls several times, takes no lock.
type clockState struct {
	at     time.Time     // the fixed time, when fixed
	offset time.Duration // added to time.Now, when not fixed
}

// The range a Clock may be moved within: the times whose Unix nanoseconds
// fit an int64 (1970 to 2262), so that every duration the fakes compute
// from the clock is exact.
var (
	MinClockTime = time.Unix(0, 0).UTC()
	MaxClockTime = time.Unix(0, math.MaxInt64).UTC()
)

// ErrClockRange is returned when a move would take a Clock outside
// MinClockTime..MaxClockTime; the clock is left where it was.
var ErrClockRange = errors.New("clock out of range: want a time from 1970-01-01 to 2262-04-11")

// NewClock returns a clock that follows real time.
func NewClock() *Clock { return &Clock{} }

// NewFixedClock returns a clock frozen at t; only Advance and Set move it.
func NewFixedClock(t time.Time) *Clock { return &Clock{fixed: true, start: t} }

// Now returns the clock's current time.
func (c *Clock) Now() time.Time {
	st := c.state.Load()
	switch {
	case st == nil && c.fixed:
		return c.start
	case st == nil:
		return time.Now()
	case c.fixed:
		return st.at
	}
	return time.Now().Add(st.offset)
}

// Advance moves the clock forward by d (backward when d is negative). A
// move out of range is ignored; TryAdvance reports it.
func (c *Clock) Advance(d time.Duration) { _ = c.TryAdvance(d) }

// TryAdvance moves the clock by d, or returns ErrClockRange and leaves it
// when the result would be out of range.
func (c *Clock) TryAdvance(d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.setLocked(c.Now().Add(d))
}

// Set moves the clock to t. A real-time clock keeps running from t. A time
// out of range is ignored; TrySet reports it.
func (c *Clock) Set(t time.Time) { _ = c.TrySet(t) }

// TrySet moves the clock to t, or returns ErrClockRange and leaves it.
func (c *Clock) TrySet(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.setLocked(t)
}

func (c *Clock) setLocked(t time.Time) error {
	if t.Before(MinClockTime) || t.After(MaxClockTime) {
		return ErrClockRange
	}
	if c.fixed {
		c.state.Store(&clockState{at: t})
		return nil
	}
	c.state.Store(&clockState{offset: time.Until(t)}) // exact: both ends are within the int64 nanosecond range
	return nil
}

// Reset puts the clock back: a fixed clock to its first time, a real-time
// clock to real time.
func (c *Clock) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.state.Store(nil)
}
