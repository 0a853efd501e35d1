package fakeserver

import (
	"context"
	"sort"
	"sync"
	"time"
)

// Operation is one business operation a fake executed and committed: a
// wallet or charge created, captured, refunded or canceled, a card issued
// or recharged. Answers that were replays, conflicts or errors add none,
// but for an error answered although the operation ran (Code). It never
// holds a card number, CVV, secret or token.
type Operation struct {
	Seq            uint64    `json:"seq"`      // position in the engine's ledger, from 1, never reused (not even by Reset)
	Provider       string    `json:"provider"` // "a55" or "coinepay"
	Kind           string    `json:"kind"`     // e.g. "charge.create", "card.apply"
	IdempotencyKey string    `json:"idempotency_key"`
	ID             string    `json:"id"`                   // the resource: charge_uuid, card_id, ...
	Credential     string    `json:"credential,omitempty"` // A55 client_id or Coinepay API key id
	Amount         string    `json:"amount,omitempty"`
	Time           time.Time `json:"time"`

	// Status is the resource's status the operation left, as the
	// provider kept it then (an A55 charge: "confirmed", "pending",
	// "pre_captured", "refund_error", ...); "" when the provider has none.
	Status string `json:"status,omitempty"`
	// Code is the code of an answer that was not the resource although
	// the operation ran (A55: "TIMEOUT", "3DS_REQUIRED"): such an answer
	// is not kept under the key, so a repeat runs again and shows as a
	// second operation. "" for a plain answer.
	Code string `json:"code,omitempty"`
}

// Ledger is the list of executed operations, in commit order. A merchant
// test asserts "charged exactly once" with Ledger().Count(key) == 1 or
// ExecutedOnce(key). With a cap (Engine option MaxOperations) the oldest
// operations are dropped first. Safe for concurrent use.
type Ledger struct {
	mu      sync.Mutex
	ops     []Operation
	seq     uint64
	max     int
	evicted int
	waiters map[*ledgerWaiter]struct{} // the WaitCount calls asleep
}

// ledgerWaiter is one WaitCount asleep: Record counts each operation
// under key into seen and closes done once seen reaches n, so that what
// ran counts even if the cap or a Reset drops it before the waiter runs.
type ledgerWaiter struct {
	key  string
	seen int
	n    int
	done chan struct{}
}

// Record appends an operation, numbering it (Seq), and returns its Seq.
func (l *Ledger) Record(op Operation) uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	op.Seq = l.seq
	l.ops = append(l.ops, op)
	if l.max > 0 && len(l.ops) > l.max {
		drop := len(l.ops) - l.max
		if cap(l.ops) > 2*l.max {
			l.ops = append(make([]Operation, 0, l.max+l.max/4+1), l.ops[drop:]...)
		} else {
			clear(l.ops[:drop])
			l.ops = l.ops[drop:]
		}
		l.evicted += drop
	}
	l.notify(&op)
	return op.Seq
}

// notify counts op into the waiters on its key and wakes those it
// completes (l.mu held).
func (l *Ledger) notify(op *Operation) {
	for w := range l.waiters {
		if w.key != op.IdempotencyKey {
			continue
		}
		if w.seen++; w.seen >= w.n {
			close(w.done)
			delete(l.waiters, w)
		}
	}
}

// WaitCount waits until at least n operations ran under key, or ctx ends
// (its error is returned): a test waits on the commit itself, never on a
// timer or a poll. It counts the operations under key the ledger holds
// when it is called and every one recorded while it waits, even those the
// cap or a Reset drops before it returns.
func (l *Ledger) WaitCount(ctx context.Context, key string, n int) error {
	l.mu.Lock()
	got := 0
	for i := range l.ops {
		if l.ops[i].IdempotencyKey == key {
			got++
		}
	}
	if got >= n {
		l.mu.Unlock()
		return nil
	}
	w := &ledgerWaiter{key: key, seen: got, n: n, done: make(chan struct{})}
	if l.waiters == nil {
		l.waiters = make(map[*ledgerWaiter]struct{})
	}
	l.waiters[w] = struct{}{}
	l.mu.Unlock()
	select {
	case <-w.done:
		return nil
	case <-ctx.Done():
		l.mu.Lock()
		defer l.mu.Unlock()
		if _, asleep := l.waiters[w]; !asleep {
			return nil // completed as ctx ended
		}
		delete(l.waiters, w)
		return ctx.Err()
	}
}

// Operations returns a copy of every operation.
func (l *Ledger) Operations() []Operation {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Operation(nil), l.ops...)
}

// LedgerFilter selects operations for Ledger.Page. Empty fields match all.
type LedgerFilter struct {
	IdempotencyKey string
	Kind           string
	Provider       string
	Since          time.Time // operations at or after Since
	After          uint64    // operations with Seq > After (the cursor)
	Limit          int       // at most Limit operations (default and maximum MaxLedgerPage)
}

// MaxLedgerPage is the most operations one Ledger.Page (and one GET
// /_fakepay/ledger) returns.
const MaxLedgerPage = 1000

func (f *LedgerFilter) match(op *Operation) bool {
	return (f.IdempotencyKey == "" || op.IdempotencyKey == f.IdempotencyKey) &&
		(f.Kind == "" || op.Kind == f.Kind) &&
		(f.Provider == "" || op.Provider == f.Provider) &&
		(f.Since.IsZero() || !op.Time.Before(f.Since))
}

// Page returns the operations matching f in commit order, and next: the
// Seq to pass as After for the following page, 0 when there is none.
func (l *Ledger) Page(f LedgerFilter) (ops []Operation, next uint64) {
	if f.Limit <= 0 || f.Limit > MaxLedgerPage {
		f.Limit = MaxLedgerPage
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	i := sort.Search(len(l.ops), func(i int) bool { return l.ops[i].Seq > f.After })
	ops = []Operation{}
	for ; i < len(l.ops); i++ {
		op := &l.ops[i]
		if !f.match(op) {
			continue
		}
		if len(ops) == f.Limit {
			return ops, ops[len(ops)-1].Seq
		}
		ops = append(ops, *op)
	}
	return ops, 0
}

// LastSeq returns the Seq of the latest operation recorded (0 for none):
// a run that reads it first and pages with After = LastSeq later sees only
// its own operations.
func (l *Ledger) LastSeq() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.seq
}

// Evicted returns how many operations the cap dropped since the last Reset.
func (l *Ledger) Evicted() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.evicted
}

// ByKey returns the operations executed under an idempotency key.
func (l *Ledger) ByKey(key string) []Operation {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []Operation
	for _, op := range l.ops {
		if op.IdempotencyKey == key {
			out = append(out, op)
		}
	}
	return out
}

// Count returns how many operations ran under an idempotency key.
func (l *Ledger) Count(key string) int { return len(l.ByKey(key)) }

// ExecutedOnce reports whether exactly one operation ran under key.
func (l *Ledger) ExecutedOnce(key string) bool { return l.Count(key) == 1 }

// CountKind returns how many operations of a kind ran ("charge.create").
func (l *Ledger) CountKind(kind string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, op := range l.ops {
		if op.Kind == kind {
			n++
		}
	}
	return n
}

// Len returns the number of operations.
func (l *Ledger) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.ops)
}

// Reset empties the ledger. Seq keeps counting, so a cursor taken before
// a reset never skips an operation recorded after it.
func (l *Ledger) Reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ops, l.evicted = nil, 0
}

// Attempt is one request a fake received, whatever became of it.
type Attempt struct {
	Seq            uint64    `json:"seq"` // position in the log, from 1, never reused
	Time           time.Time `json:"time"`
	Provider       string    `json:"provider"`
	Method         string    `json:"method"`
	Path           string    `json:"path"`
	IdempotencyKey string    `json:"idempotency_key,omitempty"`
	Credential     string    `json:"credential,omitempty"`
	Nonce          string    `json:"nonce,omitempty"`     // Coinepay X-Nonce
	Timestamp      string    `json:"timestamp,omitempty"` // Coinepay X-Timestamp
	SignatureValid *bool     `json:"signature_valid,omitempty"`
	Replayed       bool      `json:"replayed"`           // answered from the store or a shared in-flight result
	Conflict       bool      `json:"conflict,omitempty"` // 409 for a reused key
	Executed       bool      `json:"executed"`           // the operation handler ran
	Fault          FaultKind `json:"fault,omitempty"`
	Status         int       `json:"status"` // 0 when no answer was sent
	// ReplayHeader: the answer carried X-Idempotent-Replay: true.
	ReplayHeader bool   `json:"replay_header,omitempty"`
	RequestID    string `json:"request_id,omitempty"` // the answer's X-Request-Id
	Kind         string `json:"kind,omitempty"`       // the operation the path names, e.g. "charge.create"
	Route        string `json:"route,omitempty"`      // its path template, IDs replaced by {names}
	// Answer is the provider answer a backend injected instead of the
	// operation's own (A55's TIMEOUT, DUPLICATE_REQUEST, 3DS_REQUIRED,
	// 3DS_UNAVAILABLE, PROCESSING_ERROR, or a status such as
	// pre_captured), "" for none.
	Answer string `json:"answer,omitempty"`
}

// DefaultAttemptLogSize is how many attempts an AttemptLog keeps.
const DefaultAttemptLogSize = 10000

// AttemptLog keeps the most recent attempts (a ring of fixed size, so a
// long run stays bounded). Safe for concurrent use.
type AttemptLog struct {
	mu    sync.Mutex
	max   int
	buf   []Attempt
	start int
	seq   uint64
}

// NewAttemptLog returns a log keeping the last max attempts
// (DefaultAttemptLogSize when max <= 0).
func NewAttemptLog(max int) *AttemptLog {
	if max <= 0 {
		max = DefaultAttemptLogSize
	}
	return &AttemptLog{max: max}
}

// Add appends an attempt, numbering it (Seq) and dropping the oldest when
// full, and returns its Seq.
func (l *AttemptLog) Add(a Attempt) uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	a.Seq = l.seq
	if len(l.buf) < l.max {
		l.buf = append(l.buf, a)
		return a.Seq
	}
	l.buf[l.start] = a
	l.start = (l.start + 1) % l.max
	return a.Seq
}

// All returns the attempts, oldest first.
func (l *AttemptLog) All() []Attempt {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Attempt, 0, len(l.buf))
	out = append(out, l.buf[l.start:]...)
	return append(out, l.buf[:l.start]...)
}

// MaxAttemptPage is the most attempts one AttemptLog.Page (and one GET
// /_fakepay/requests) returns.
const MaxAttemptPage = 1000

// Page returns up to limit attempts (default and maximum MaxAttemptPage)
// with Seq > after that match key and provider when those are set, oldest
// first, and next: the Seq to pass as after for the following page, 0 when
// there is none.
func (l *AttemptLog) Page(after uint64, limit int, key, provider string) (atts []Attempt, next uint64) {
	if limit <= 0 || limit > MaxAttemptPage {
		limit = MaxAttemptPage
	}
	atts = []Attempt{}
	for _, a := range l.All() {
		if a.Seq <= after || (key != "" && a.IdempotencyKey != key) || (provider != "" && a.Provider != provider) {
			continue
		}
		if len(atts) == limit {
			return atts, atts[len(atts)-1].Seq
		}
		atts = append(atts, a)
	}
	return atts, 0
}

// ByKey returns the attempts that carried an idempotency key.
func (l *AttemptLog) ByKey(key string) []Attempt {
	var out []Attempt
	for _, a := range l.All() {
		if a.IdempotencyKey == key {
			out = append(out, a)
		}
	}
	return out
}

// Reset empties the log.
func (l *AttemptLog) Reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf, l.start = nil, 0
}
