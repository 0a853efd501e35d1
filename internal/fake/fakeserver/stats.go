package fakeserver

import "sync/atomic"

// Stats are running totals of what an engine's providers saw. Unlike the
// attempt log they are never truncated (Reset zeroes them).
type Stats struct {
	Requests  int `json:"requests"`  // requests received
	Executed  int `json:"executed"`  // operation handlers run
	Replayed  int `json:"replayed"`  // answers copied from the store or a shared in-flight result
	Conflicts int `json:"conflicts"` // 409 for a reused key with another payload
	Faults    int `json:"faults"`    // faults injected
}

type statCounters struct {
	requests, executed, replayed, conflicts, faults atomic.Int64
}

func (c *statCounters) add(a *Attempt) {
	c.requests.Add(1)
	if a.Executed {
		c.executed.Add(1)
	}
	if a.Replayed {
		c.replayed.Add(1)
	}
	if a.Conflict {
		c.conflicts.Add(1)
	}
	if a.Fault != "" {
		c.faults.Add(1)
	}
}

func (c *statCounters) snapshot() Stats {
	return Stats{Requests: int(c.requests.Load()), Executed: int(c.executed.Load()), Replayed: int(c.replayed.Load()),
		Conflicts: int(c.conflicts.Load()), Faults: int(c.faults.Load())}
}

func (c *statCounters) reset() {
	c.requests.Store(0)
	c.executed.Store(0)
	c.replayed.Store(0)
	c.conflicts.Store(0)
	c.faults.Store(0)
}

// Stats returns the running totals.
func (e *Engine) Stats() Stats { return e.stats.snapshot() }
