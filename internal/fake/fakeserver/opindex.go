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
}

// opRow is the index's compact form of an OpSummary (a million of them
// are held without a cap).
type opRow struct {
	id                                               uint64
	provider, credential, key, kind, route           string
	first, last                                      int64 // Unix nanoseconds
	attempts, executions, replays, conflicts, faults int32
	status                                           int32
	ledger                                           []uint64 // Seqs of the first maxRowLedger executions
	older                                            *opRow   // the row of the same provider and key under another credential
}

func (r *opRow) summary() OpSummary {
	return OpSummary{ID: r.id, Provider: r.provider, Credential: r.credential, IdempotencyKey: r.key, Kind: r.kind, Route: r.route,
		FirstSeen: time.Unix(0, r.first).UTC(), LastSeen: time.Unix(0, r.last).UTC(),
		Attempts: int(r.attempts), Executions: int(r.executions), Replays: int(r.replays), Conflicts: int(r.conflicts),
		Faults: int(r.faults), Status: int(r.status)}
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
	// maxRowLedger is how many ledger references a row keeps.
	maxRowLedger = 64
	// MaxDetailAttempts is how many attempts an operation's detail lists.
	MaxDetailAttempts = 200
)

// opIndex holds the rows in the order their keys were first seen; the
// oldest go first when the cap is reached. Safe for concurrent use.
type opIndex struct {
	mu      sync.Mutex
	max     int
	rows    []*opRow         // ID ascending, contiguous
	byKey   map[opKey]*opRow // the newest row of a provider and key; older ones chain on
	nextID  uint64
	evicted int
	version atomic.Uint64
	// lastCred is the credential clipCredentialLocked clipped last.
	lastCred string
}

// clipCredentialLocked is Clip(c), without a copy when c is the
// credential it clipped last (a fake's clients are few); x.mu is held.
func (x *opIndex) clipCredentialLocked(c string) string {
	if len(c) <= MaxLogField && c == x.lastCred {
		return x.lastCred
	}
	x.lastCred = Clip(c)
	return x.lastCred
}

func newOpIndex(maxOps int) *opIndex {
	if maxOps <= 0 {
		maxOps = DefaultMaxOpRows
	}
	return &opIndex{max: maxOps, byKey: make(map[opKey]*opRow)}
}

// opKey is a provider and an idempotency key; the row holds the strings.
type opKey struct{ provider, key string }

// row finds the row of (provider, credential, key), creating it when
// create. A request refused before its credential was read (a fault that
// fired first) has credential "": it belongs to the key's latest row, and
// a row first seen that way takes the credential of the next attempt.
func (x *opIndex) row(provider, credential, key string, at time.Time, create bool) *opRow {
	mk := opKey{provider, key}
	newest := x.byKey[mk]
	for r := newest; r != nil; r = r.older {
		if r.credential == credential {
			return r
		}
	}
	if credential == "" && newest != nil {
		return newest
	}
	for r := newest; r != nil; r = r.older {
		if r.credential == "" {
			r.credential = credential
			return r
		}
	}
	if !create {
		return nil
	}
	x.nextID++
	r := &opRow{id: x.nextID, provider: provider, credential: credential, key: key, first: at.UnixNano(), last: at.UnixNano(), older: newest}
	x.byKey[opKey{r.provider, r.key}] = r
	x.rows = append(x.rows, r)
	if len(x.rows) > x.max {
		x.evictOldest()
	}
	return r
}

// evictOldest drops the oldest row: the last of its key's chain.
func (x *opIndex) evictOldest() {
	old := x.rows[0]
	x.rows[0] = nil
	x.rows = x.rows[1:]
	if cap(x.rows) > 2*x.max {
		x.rows = slices.Clone(x.rows)
	}
	x.evicted++
	mk := opKey{old.provider, old.key}
	if x.byKey[mk] == old {
		delete(x.byKey, mk)
		return
	}
	for r := x.byKey[mk]; r != nil; r = r.older {
		if r.older == old {
			r.older = nil
			return
		}
	}
}

// observe folds one logged attempt into its key's row. Requests without
// an Idempotency-Key have no row: they are in the request log only.
func (x *opIndex) observe(a *Attempt) {
	if a.IdempotencyKey == "" {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	r := x.row(a.Provider, a.Credential, a.IdempotencyKey, a.Time, true)
	r.attempts++
	if a.Replayed {
		r.replays++
	}
	if a.Conflict {
		r.conflicts++
	}
	if a.Fault != "" {
		r.faults++
	}
	if r.kind == "" {
		r.kind = a.Kind
	}
	if r.route == "" {
		r.route = a.Route
	}
	r.last = max(r.last, a.Time.UnixNano())
	r.status = int32(a.Status)
	x.version.Add(1)
}

// executed counts a ledger operation (Seq seq) in its key's row.
func (x *opIndex) executed(op *Operation, seq uint64) {
	if op.IdempotencyKey == "" {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	r := x.row(op.Provider, x.clipCredentialLocked(op.Credential), Clip(op.IdempotencyKey), op.Time, true)
	r.executions++
	if r.kind == "" {
		r.kind = op.Kind
	}
	if len(r.ledger) < maxRowLedger {
		r.ledger = append(r.ledger, seq)
	}
	x.version.Add(1)
}

func (x *opIndex) reset() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.rows, x.byKey, x.evicted = nil, make(map[opKey]*opRow), 0
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

func (f *OpFilter) match(r *opRow) bool {
	if (f.Provider != "" && r.provider != f.Provider) || (f.Kind != "" && r.kind != f.Kind) ||
		(f.Key != "" && !strings.Contains(r.key, f.Key)) || (f.Anomalies && r.executions == 1) {
		return false
	}
	switch s := f.Status; {
	case s == "":
		return true
	case s == "none":
		return r.status == 0
	case len(s) == 3 && strings.HasSuffix(s, "xx") && s[0] >= '1' && s[0] <= '5':
		return r.status/100 == int32(s[0]-'0')
	default:
		n, err := strconv.Atoi(s)
		return err == nil && int(r.status) == n
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
	if first := x.rows[0].id; f.Before != 0 {
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
			p.Operations = append(p.Operations, r.summary())
		}
		if scanned++; scanned == MaxOpScan && i > 0 {
			p.Next, p.Partial = strconv.FormatUint(r.id, 10), true
			return p
		}
	}
	return p
}

// get returns row id and its ledger references.
func (x *opIndex) get(id uint64) (row OpSummary, ledger []uint64, ok bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if len(x.rows) == 0 || id < x.rows[0].id || id > x.rows[len(x.rows)-1].id {
		return OpSummary{}, nil, false
	}
	r := x.rows[id-x.rows[0].id]
	return r.summary(), slices.Clone(r.ledger), true
}

// Operation returns the per-key summary numbered id, if it is still held.
func (e *Engine) Operation(id uint64) (OpSummary, bool) {
	row, _, ok := e.ops.get(id)
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

// forKey returns, oldest first, up to limit attempts the log still holds
// for a provider's key under credential (or under none: refused before
// the credential was read), and how many more it left out.
func (l *AttemptLog) forKey(provider, credential, key string, limit int) (atts []Attempt, more int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	atts = []Attempt{}
	for i := range l.buf {
		a := &l.buf[(l.start+i)%len(l.buf)]
		if a.Provider != provider || a.IdempotencyKey != key || (a.Credential != credential && a.Credential != "") {
			continue
		}
		if len(atts) == limit {
			more++
			continue
		}
		atts = append(atts, *a)
	}
	return atts, more
}
