package fakeserver

import (
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// OpSummary is one row of the console's operations view: everything the
// fake saw under one idempotency key of one provider and credential. The
// engine keeps it up to date as attempts arrive, so listing costs the
// page, not the history.
type OpSummary struct {
	ID             uint64    `json:"id"` // from 1, never reused (not even by Reset)
	Provider       string    `json:"provider"`
	Credential     string    `json:"credential,omitempty"`
	IdempotencyKey string    `json:"idempotency_key"`
	Kind           string    `json:"kind,omitempty"`  // e.g. "charge.create"
	Route          string    `json:"route,omitempty"` // path template
	FirstSeen      time.Time `json:"first_seen"`
	LastSeen       time.Time `json:"last_seen"`
	Attempts       int       `json:"attempts"`   // requests that carried the key
	Executions     int       `json:"executions"` // operations the ledger recorded under it
	Replays        int       `json:"replays"`    // answers copied from the store or a concurrent first request
	Conflicts      int       `json:"conflicts"`  // 409 for another payload
	Faults         int       `json:"faults"`     // attempts with an injected fault
	Status         int       `json:"status"`     // the latest attempt's status, 0 when no answer was sent
	Version        uint64    `json:"version"`    // the index's version at this row's latest change

	attemptSeqs []uint64 // the first maxRowAttempts attempts, for the detail view
	ledgerSeqs  []uint64 // the first maxRowAttempts executions
}

// Bounds of the operations index.
const (
	// DefaultMaxOpRows is how many rows the index keeps without
	// Options.MaxOperations; with it, the index keeps that many.
	DefaultMaxOpRows = 1_000_000
	// MaxOpPage is the most rows one page of GET /_fakepay/operations holds.
	MaxOpPage = 200
	// MaxOpScan is the most rows one filtered page looks at; a page that
	// found fewer matches says where to go on (partial, next).
	MaxOpScan = 100_000
	// maxRowAttempts is how many attempt and ledger references a row keeps.
	maxRowAttempts = 64
)

// opIndex holds the rows in the order their keys were first seen; the
// oldest go first when the cap is reached. Safe for concurrent use.
type opIndex struct {
	mu      sync.Mutex
	max     int
	rows    []*OpSummary // ID ascending, contiguous
	byKey   map[string][]*OpSummary
	nextID  uint64
	evicted int
	version atomic.Uint64
}

func newOpIndex(maxOps int) *opIndex {
	if maxOps <= 0 {
		maxOps = DefaultMaxOpRows
	}
	return &opIndex{max: maxOps, byKey: make(map[string][]*OpSummary)}
}

func opMapKey(provider, key string) string { return provider + "\x00" + key }

// row finds the row of (provider, credential, key), creating it when
// create. A request refused before its credential was read (a fault that
// fired first) has credential "": it belongs to the key's latest row, and
// a row first seen that way takes the credential of the next attempt.
func (x *opIndex) row(provider, credential, key string, at time.Time, create bool) *OpSummary {
	mk := opMapKey(provider, key)
	list := x.byKey[mk]
	for i := len(list) - 1; i >= 0; i-- {
		if list[i].Credential == credential {
			return list[i]
		}
	}
	if credential == "" && len(list) > 0 {
		return list[len(list)-1]
	}
	for i := len(list) - 1; i >= 0; i-- {
		if list[i].Credential == "" {
			list[i].Credential = credential
			return list[i]
		}
	}
	if !create {
		return nil
	}
	x.nextID++
	r := &OpSummary{ID: x.nextID, Provider: provider, Credential: credential, IdempotencyKey: key, FirstSeen: at, LastSeen: at}
	x.byKey[mk] = append(list, r)
	x.rows = append(x.rows, r)
	if len(x.rows) > x.max {
		x.evictOldest()
	}
	return r
}

func (x *opIndex) evictOldest() {
	old := x.rows[0]
	x.rows[0] = nil
	x.rows = x.rows[1:]
	if cap(x.rows) > 2*x.max {
		x.rows = slices.Clone(x.rows)
	}
	x.evicted++
	mk := opMapKey(old.Provider, old.IdempotencyKey)
	list := slices.DeleteFunc(x.byKey[mk], func(r *OpSummary) bool { return r == old })
	if len(list) == 0 {
		delete(x.byKey, mk)
	} else {
		x.byKey[mk] = list
	}
}

// observe folds one logged attempt (Seq seq) into its key's row.
// Requests without an Idempotency-Key have no row: they are in the
// request log only.
func (x *opIndex) observe(a *Attempt, seq uint64) {
	if a.IdempotencyKey == "" {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	r := x.row(a.Provider, a.Credential, a.IdempotencyKey, a.Time, true)
	r.Attempts++
	if a.Replayed {
		r.Replays++
	}
	if a.Conflict {
		r.Conflicts++
	}
	if a.Fault != "" {
		r.Faults++
	}
	if r.Kind == "" {
		r.Kind = a.Kind
	}
	if r.Route == "" {
		r.Route = a.Route
	}
	if a.Time.After(r.LastSeen) {
		r.LastSeen = a.Time
	}
	r.Status = a.Status
	if len(r.attemptSeqs) < maxRowAttempts {
		r.attemptSeqs = append(r.attemptSeqs, seq)
	}
	r.Version = x.version.Add(1)
}

// executed counts a ledger operation (Seq seq) in its key's row.
func (x *opIndex) executed(op *Operation, seq uint64) {
	if op.IdempotencyKey == "" {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	r := x.row(op.Provider, op.Credential, Clip(op.IdempotencyKey), op.Time, true)
	r.Executions++
	if r.Kind == "" {
		r.Kind = op.Kind
	}
	if len(r.ledgerSeqs) < maxRowAttempts {
		r.ledgerSeqs = append(r.ledgerSeqs, seq)
	}
	r.Version = x.version.Add(1)
}

func (x *opIndex) reset() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.rows, x.byKey, x.evicted = nil, make(map[string][]*OpSummary), 0
	x.version.Add(1)
}

// OpFilter selects rows for a page. Empty fields match all.
type OpFilter struct {
	Provider string
	Key      string // a substring of the idempotency key
	Kind     string
	// Status: an HTTP status ("409"), a class ("2xx", "4xx", "5xx") or
	// "none" (no answer sent).
	Status string
	// Anomalies: only rows whose executions are not exactly 1.
	Anomalies bool
	Before    uint64 // rows with ID < Before (the cursor); 0: from the newest
	Limit     int    // default and maximum MaxOpPage
}

func (f *OpFilter) match(r *OpSummary) bool {
	if (f.Provider != "" && r.Provider != f.Provider) || (f.Kind != "" && r.Kind != f.Kind) ||
		(f.Key != "" && !strings.Contains(r.IdempotencyKey, f.Key)) || (f.Anomalies && r.Executions == 1) {
		return false
	}
	switch s := f.Status; {
	case s == "":
		return true
	case s == "none":
		return r.Status == 0
	case len(s) == 3 && strings.HasSuffix(s, "xx") && s[0] >= '1' && s[0] <= '5':
		return r.Status/100 == int(s[0]-'0')
	default:
		n, err := strconv.Atoi(s)
		return err == nil && r.Status == n
	}
}

// OpPage is one page of the operations view, newest first.
type OpPage struct {
	Operations []OpSummary `json:"operations"`
	// Next: pass as before= for the following page; "" when there is none.
	Next string `json:"next,omitempty"`
	// Partial: the scan stopped after MaxOpScan rows with fewer matches
	// than asked for; Next goes on from there.
	Partial bool   `json:"partial,omitempty"`
	Total   int    `json:"total"`   // rows held (before filtering)
	Evicted int    `json:"evicted"` // rows dropped by the cap since the last reset
	Version uint64 `json:"version"` // changes whenever any row does
}

// page returns the rows matching f, newest first. It looks at no more than
// MaxOpScan rows.
func (x *opIndex) page(f OpFilter) OpPage {
	if f.Limit <= 0 || f.Limit > MaxOpPage {
		f.Limit = MaxOpPage
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	p := OpPage{Operations: []OpSummary{}, Total: len(x.rows), Evicted: x.evicted, Version: x.version.Load()}
	if len(x.rows) == 0 {
		return p
	}
	i := len(x.rows) - 1
	if first := x.rows[0].ID; f.Before != 0 {
		if f.Before <= first {
			return p
		}
		i = min(i, int(f.Before-first)-1)
	}
	for scanned := 0; i >= 0; i-- {
		r := x.rows[i]
		if f.match(r) {
			if len(p.Operations) == f.Limit {
				p.Next = strconv.FormatUint(p.Operations[len(p.Operations)-1].ID, 10)
				return p
			}
			p.Operations = append(p.Operations, r.public())
		}
		if scanned++; scanned == MaxOpScan && i > 0 {
			p.Next, p.Partial = strconv.FormatUint(r.ID, 10), true
			return p
		}
	}
	return p
}

func (r *OpSummary) public() OpSummary {
	c := *r
	c.attemptSeqs, c.ledgerSeqs = nil, nil
	return c
}

// get returns a copy of row id with its attempt and ledger references.
func (x *opIndex) get(id uint64) (row OpSummary, attempts, ledger []uint64, ok bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if len(x.rows) == 0 || id < x.rows[0].ID || id > x.rows[len(x.rows)-1].ID {
		return OpSummary{}, nil, nil, false
	}
	r := x.rows[id-x.rows[0].ID]
	return r.public(), slices.Clone(r.attemptSeqs), slices.Clone(r.ledgerSeqs), true
}

// Operation returns the per-key summary numbered id, if it is still held.
func (e *Engine) Operation(id uint64) (OpSummary, bool) {
	row, _, _, ok := e.ops.get(id)
	return row, ok
}

// Operations returns one page of the per-key summaries, newest first.
func (e *Engine) Operations(f OpFilter) OpPage { return e.ops.page(f) }

// bySeqs returns the operations with these Seqs that the ledger still holds.
func (l *Ledger) bySeqs(seqs []uint64) []Operation {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := []Operation{}
	for _, s := range seqs {
		i, found := slices.BinarySearchFunc(l.ops, s, func(op Operation, s uint64) int {
			switch {
			case op.Seq < s:
				return -1
			case op.Seq > s:
				return 1
			}
			return 0
		})
		if found {
			out = append(out, l.ops[i])
		}
	}
	return out
}

// bySeqs returns the attempts with these Seqs that the log still holds.
func (l *AttemptLog) bySeqs(seqs []uint64) []Attempt {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := []Attempt{}
	if len(l.buf) == 0 {
		return out
	}
	oldest := l.buf[l.start].Seq
	for _, s := range seqs {
		if s < oldest || s-oldest >= uint64(len(l.buf)) {
			continue
		}
		if a := l.buf[(l.start+int(s-oldest))%len(l.buf)]; a.Seq == s {
			out = append(out, a)
		}
	}
	return out
}
