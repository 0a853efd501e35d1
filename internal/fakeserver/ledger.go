package fakeserver

import (
	"sync"
	"time"
)

// Operation is one business operation a fake executed and committed: a
// wallet or charge created, captured, refunded or canceled, a card issued
// or recharged. Answers that were replays, conflicts or errors add none.
// It never holds a card number, CVV, secret or token.
type Operation struct {
	Provider       string    `json:"provider"` // "a55" or "coinepay"
	Kind           string    `json:"kind"`     // e.g. "charge.create", "card.apply"
	IdempotencyKey string    `json:"idempotency_key"`
	ID             string    `json:"id"`                   // the resource: charge_uuid, card_id, ...
	Credential     string    `json:"credential,omitempty"` // A55 client_id or Coinepay API key id
	Amount         string    `json:"amount,omitempty"`
	Time           time.Time `json:"time"`
}

// Ledger is the list of executed operations, in commit order. A merchant
// test asserts "charged exactly once" with Ledger().Count(key) == 1 or
// ExecutedOnce(key). Safe for concurrent use.
type Ledger struct {
	mu  sync.Mutex
	ops []Operation
}

// Record appends an operation.
func (l *Ledger) Record(op Operation) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ops = append(l.ops, op)
}

// Operations returns a copy of every operation.
func (l *Ledger) Operations() []Operation {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Operation(nil), l.ops...)
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

// Reset empties the ledger.
func (l *Ledger) Reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ops = nil
}

// Attempt is one request a fake received, whatever became of it.
type Attempt struct {
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
}

// NewAttemptLog returns a log keeping the last max attempts
// (DefaultAttemptLogSize when max <= 0).
func NewAttemptLog(max int) *AttemptLog {
	if max <= 0 {
		max = DefaultAttemptLogSize
	}
	return &AttemptLog{max: max}
}

// Add appends an attempt, dropping the oldest when full.
func (l *AttemptLog) Add(a Attempt) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.buf) < l.max {
		l.buf = append(l.buf, a)
		return
	}
	l.buf[l.start] = a
	l.start = (l.start + 1) % l.max
}

// All returns the attempts, oldest first.
func (l *AttemptLog) All() []Attempt {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Attempt, 0, len(l.buf))
	out = append(out, l.buf[l.start:]...)
	return append(out, l.buf[:l.start]...)
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
