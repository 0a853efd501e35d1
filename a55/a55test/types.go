package a55test

import (
	"fmt"
	"time"

	"github.com/payonce/payonce/internal/fakeserver"
)

// FaultKind names a failure the fake injects on demand (Rule.Fault).
type FaultKind string

// The fault kinds.
const (
	// FaultDropAfterCommit executes and stores the operation, then closes
	// the connection without answering: "charge succeeded, response lost".
	FaultDropAfterCommit FaultKind = "drop_after_commit"
	// FaultErrorBeforeCommit answers Rule.Status (500, 502 or 503; default
	// 503) in A55's error shape without executing anything.
	FaultErrorBeforeCommit FaultKind = "error_before_commit"
	// FaultRateLimit answers 429 with Retry-After: Rule.RetryAfter seconds.
	FaultRateLimit FaultKind = "rate_limit"
	// FaultDelay waits Rule.Delay before (Rule.When "before", the default)
	// or after ("after") the operation commits.
	FaultDelay FaultKind = "delay"
	// FaultResetBeforeRead resets the connection (TCP RST) before the
	// request body is read: nothing executes.
	FaultResetBeforeRead FaultKind = "reset_before_read"
	// FaultHang holds the request until the client gives up or the server
	// closes.
	FaultHang FaultKind = "hang"
)

// Rule is one fault injection rule for Server.AddFault. It matches a
// request on every field set among Path and IdempotencyKey; Nth then fires
// only on the nth matching request, Probability fires at random (under
// WithSeed), and Count caps how many times the rule fires.
//
//	srv.AddFault(a55test.Rule{Fault: a55test.FaultDropAfterCommit, Path: a55test.ChargePath, Count: 1})
type Rule struct {
	// Fault is what happens to a matching request (required).
	Fault FaultKind
	// Path matches the request path exactly; a trailing "*" matches a
	// prefix ("/api/*"); "" matches every path.
	Path string
	// IdempotencyKey matches requests carrying this key; "" matches all.
	IdempotencyKey string
	// Nth fires only on the nth matching request (1-based); 0 on every one.
	Nth int
	// Probability (0 < p < 1) fires on that share of matching requests;
	// 0 always fires.
	Probability float64
	// Count is how many times the rule fires at most; 0 is unlimited.
	Count int
	// Status is the answer of FaultErrorBeforeCommit: 500..599, default 503.
	Status int
	// RetryAfter is the Retry-After of FaultRateLimit in seconds, default 1.
	RetryAfter int
	// Delay is how long FaultDelay waits (required for it).
	Delay time.Duration
	// When is "before" (the default) or "after" the commit, for FaultDelay.
	When string
}

func (r Rule) engine() fakeserver.Rule {
	return fakeserver.Rule{Fault: fakeserver.FaultKind(r.Fault), Path: r.Path,
		IdempotencyKey: r.IdempotencyKey, Nth: r.Nth, Probability: r.Probability, Count: r.Count,
		Status: r.Status, RetryAfter: r.RetryAfter, Delay: r.Delay, When: r.When}
}

// Operation is one business operation the fake executed and committed: a
// wallet or a charge created, a charge captured, refunded or canceled.
// Replays, conflicts and errors add none. It never holds a card number,
// CVV, secret or token.
type Operation struct {
	Provider       string    `json:"provider"`             // "a55"
	Kind           string    `json:"kind"`                 // "wallet.create", "charge.create", "charge.capture", "charge.refund", "charge.cancel"
	IdempotencyKey string    `json:"idempotency_key"`      // the key it ran under ("" when none was sent)
	ID             string    `json:"id"`                   // the resource: wallet_uuid or charge_uuid
	Credential     string    `json:"credential,omitempty"` // the OAuth2 client_id that sent it
	Amount         string    `json:"amount,omitempty"`     // the amount, when the operation has one
	Time           time.Time `json:"time"`                 // when it committed, on the fake's clock
}

func operations(in []fakeserver.Operation) []Operation {
	out := make([]Operation, len(in))
	for i, op := range in {
		out[i] = Operation{Provider: op.Provider, Kind: op.Kind, IdempotencyKey: op.IdempotencyKey, ID: op.ID,
			Credential: op.Credential, Amount: op.Amount, Time: op.Time}
	}
	return out
}

// Ledger is the fake's list of executed operations, in commit order: what
// really ran on the server, whatever the client was told. Safe for
// concurrent use; every method reads the live ledger.
type Ledger struct {
	l *fakeserver.Ledger
}

// Operations returns every executed operation, oldest first.
func (l *Ledger) Operations() []Operation { return operations(l.l.Operations()) }

// ByKey returns the operations executed under an idempotency key.
func (l *Ledger) ByKey(key string) []Operation { return operations(l.l.ByKey(key)) }

// Count returns how many operations ran under an idempotency key.
func (l *Ledger) Count(key string) int { return l.l.Count(key) }

// ExecutedOnce reports whether exactly one operation ran under key: the
// "charged exactly once" assertion.
func (l *Ledger) ExecutedOnce(key string) bool { return l.l.ExecutedOnce(key) }

// CountKind returns how many operations of a kind ran ("charge.create").
func (l *Ledger) CountKind(kind string) int { return l.l.CountKind(kind) }

// Len returns how many operations ran in all.
func (l *Ledger) Len() int { return l.l.Len() }

// String says how many operations the ledger holds, so that %v and %+v
// print the ledger, not an address.
func (l *Ledger) String() string {
	n := l.l.Len()
	if n == 1 {
		return "a55test.Ledger{1 operation}"
	}
	return fmt.Sprintf("a55test.Ledger{%d operations}", n)
}

// Attempt is one request the fake received, whatever became of it.
type Attempt struct {
	Time           time.Time `json:"time"`     // when it arrived, on the fake's clock
	Provider       string    `json:"provider"` // "a55"
	Method         string    `json:"method"`
	Path           string    `json:"path"`
	IdempotencyKey string    `json:"idempotency_key,omitempty"` // "" when none was sent
	Credential     string    `json:"credential,omitempty"`      // the client_id of the bearer token
	Replayed       bool      `json:"replayed"`                  // answered from the store or a shared in-flight result
	Conflict       bool      `json:"conflict,omitempty"`        // 409 for a key reused with another payload
	Executed       bool      `json:"executed"`                  // the operation ran on this request
	Fault          FaultKind `json:"fault,omitempty"`           // the fault injected, "" for none
	Status         int       `json:"status"`                    // the HTTP status answered, 0 when none was sent
}

func attempts(in []fakeserver.Attempt) []Attempt {
	out := make([]Attempt, len(in))
	for i, a := range in {
		out[i] = Attempt{Time: a.Time, Provider: a.Provider, Method: a.Method, Path: a.Path, IdempotencyKey: a.IdempotencyKey,
			Credential: a.Credential, Replayed: a.Replayed, Conflict: a.Conflict, Executed: a.Executed,
			Fault: FaultKind(a.Fault), Status: a.Status}
	}
	return out
}

// Stats are the fake's running totals since it started or was Reset.
type Stats struct {
	Requests  int `json:"requests"`  // requests received
	Executed  int `json:"executed"`  // operations run
	Replayed  int `json:"replayed"`  // answers copied from the store or a shared in-flight result
	Conflicts int `json:"conflicts"` // 409s for a key reused with another payload
	Faults    int `json:"faults"`    // faults injected
}

func stats(s fakeserver.Stats) Stats {
	return Stats{Requests: s.Requests, Executed: s.Executed, Replayed: s.Replayed, Conflicts: s.Conflicts, Faults: s.Faults}
}

// Clock is the fake's clock: key windows, token lifetimes and the rate
// limit read it, and so do the clients Server.Client returns. Moving it
// (Advance, Set) moves what both sides see. Make one with NewClock or
// NewFixedClock. Safe for concurrent use.
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
func (c *Clock) String() string { return "a55test.Clock{" + c.c.Now().Format(time.RFC3339Nano) + "}" }

// Advance moves the clock forward by d (backward when d is negative).
func (c *Clock) Advance(d time.Duration) { c.c.Advance(d) }

// Set moves the clock to t; a real-time clock keeps running from t.
func (c *Clock) Set(t time.Time) { c.c.Set(t) }

// EngineClock returns the engine clock behind c. It is what lets one
// Clock drive several fakes (SharedClock); tests do not call it.
func (c *Clock) EngineClock() *fakeserver.Clock { return c.c }

// SharedClock is what WithClock accepts: a *Clock of this package or of
// another provider's test package (coinepaytest.NewFixedClock), so that one
// clock drives both fakes and the clients of both.
type SharedClock interface {
	Now() time.Time
	Advance(d time.Duration)
	Set(t time.Time)
	EngineClock() *fakeserver.Clock
}
