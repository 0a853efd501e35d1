package payoncetest

import (
	"time"

	"github.com/payonce/payonce/internal/fake/fakeserver"
)

// FaultKind names a failure a fake injects on demand (Rule.Fault).
type FaultKind string

// The fault kinds.
const (
	// FaultDropAfterCommit executes and stores the operation, then closes
	// the connection without answering: "charge succeeded (card issued),
	// response lost".
	FaultDropAfterCommit FaultKind = "drop_after_commit"
	// FaultErrorBeforeCommit answers Rule.Status (500, 502 or 503; default
	// 503) in the provider's error shape without executing anything.
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

// Rule is one fault injection rule for AddFault. It matches a request on
// every field set among Path and IdempotencyKey; Nth then fires only on
// the nth matching request, Probability fires at random (under WithSeed),
// and Count caps how many times the rule fires.
//
//	srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: a55test.ChargePath, Count: 1})
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
