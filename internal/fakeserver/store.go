package fakeserver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"sync"
	"time"
)

// DefaultMaxStoredBody is the largest response body the store keeps (the
// Coinepay document's 256 KB cap); a larger 2xx answer is not stored and
// the same key and body execute again.
const DefaultMaxStoredBody = 256 << 10

// Response is a complete answer of a fake: what the store keeps and replays.
type Response struct {
	Status int
	Header http.Header // extra headers besides Content-Type; may be nil
	Body   []byte
}

// clone returns a deep copy, so a replay never shares a header map.
func (r Response) clone() Response {
	out := Response{Status: r.Status, Body: r.Body}
	if r.Header != nil {
		out.Header = r.Header.Clone()
	}
	return out
}

// Fingerprint identifies a payload: SHA-256 over method, path and the
// canonical JSON of the body (object key order and whitespace do not
// matter). A body that is not JSON is hashed as sent.
type Fingerprint [32]byte

// FingerprintOf returns the fingerprint of a request.
func FingerprintOf(method, path string, body []byte) Fingerprint {
	h := sha256.New()
	h.Write([]byte(method))
	h.Write([]byte{0})
	h.Write([]byte(path))
	h.Write([]byte{0})
	h.Write(canonicalJSON(body))
	var fp Fingerprint
	h.Sum(fp[:0])
	return fp
}

// canonicalJSON re-encodes body with sorted object keys and no
// insignificant whitespace; numbers keep their literal form. A body that is
// not exactly one JSON value is returned unchanged, marked as raw.
func canonicalJSON(body []byte) []byte {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return []byte("empty:")
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return append([]byte("raw:"), body...)
	}
	out, err := json.Marshal(v) // encoding/json sorts map keys
	if err != nil {
		return append([]byte("raw:"), body...)
	}
	return append([]byte("json:"), out...)
}

// Outcome tells how the store answered a keyed request.
type Outcome int

// Outcomes of Store.Do.
const (
	Executed Outcome = iota // this request ran the operation
	Replayed                // a stored answer was copied
	Shared                  // the request waited for the in-flight first one and got its answer
	Conflict                // the key was used with another payload
)

// StoreConfig configures a Store.
type StoreConfig struct {
	Clock   *Clock
	Window  time.Duration // how long a stored answer counts (default 24 h)
	MaxBody int           // largest body stored (default DefaultMaxStoredBody)
}

// Store is the server-side idempotency store: one per provider, keyed by
// credential scope and key. Only 2xx answers up to MaxBody bytes are kept,
// for Window on the injectable clock; expired entries are swept as time
// passes, so memory stays bounded. Safe for concurrent use.
type Store struct {
	clock   *Clock
	window  time.Duration
	maxBody int

	mu        sync.Mutex
	entries   map[string]*entry
	lastSweep time.Time
}

type entry struct {
	fp      Fingerprint
	created time.Time
	done    chan struct{} // closed when the first request finished
	final   *Response     // the first request's answer, set before done closes
	stored  bool          // final is kept for replays
}

// NewStore returns an empty store.
func NewStore(cfg StoreConfig) *Store {
	if cfg.Clock == nil {
		cfg.Clock = NewClock()
	}
	if cfg.Window <= 0 {
		cfg.Window = 24 * time.Hour
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxStoredBody
	}
	return &Store{clock: cfg.Clock, window: cfg.Window, maxBody: cfg.MaxBody, entries: make(map[string]*entry)}
}

// Do runs exec at most once for scope and key within the window:
//
//   - a new key (or one whose window passed) runs exec (Executed);
//   - the same key with another fingerprint answers Conflict, also while
//     the first request is still running;
//   - the same key and fingerprint while the first request runs waits for
//     it and returns its final answer (Shared);
//   - the same key and fingerprint after a stored 2xx answer returns a copy
//     (Replayed).
//
// Only a 2xx answer of at most MaxBody bytes is stored; after any other
// answer the next request with the key runs exec again. A waiting request
// whose ctx ends returns ctx.Err().
func (s *Store) Do(ctx context.Context, scope, key string, fp Fingerprint, exec func() Response) (Response, Outcome, error) {
	id := scope + "\x00" + key
	for {
		s.mu.Lock()
		now := s.clock.Now()
		s.sweepLocked(now)
		e := s.entries[id]
		if e != nil && e.stored && !now.Before(e.created.Add(s.window)) {
			delete(s.entries, id)
			e = nil
		}
		if e == nil {
			e = &entry{fp: fp, created: now, done: make(chan struct{})}
			s.entries[id] = e
			s.mu.Unlock()
			return s.run(id, e, exec), Executed, nil
		}
		if e.fp != fp {
			s.mu.Unlock()
			return Response{}, Conflict, nil
		}
		if e.stored {
			resp := e.final.clone()
			s.mu.Unlock()
			return resp, Replayed, nil
		}
		done := e.done
		s.mu.Unlock()
		select {
		case <-done:
		case <-ctx.Done():
			return Response{}, Shared, ctx.Err()
		}
		if e.final != nil {
			out := Replayed
			if !e.stored {
				out = Shared
			}
			return e.final.clone(), out, nil
		}
		// The first request was aborted before it answered: try again.
	}
}

// run executes exec as the owner of e and publishes its answer.
func (s *Store) run(id string, e *entry, exec func() Response) (resp Response) {
	finished := false
	defer func() {
		s.mu.Lock()
		if !finished || !e.stored {
			if s.entries[id] == e {
				delete(s.entries, id)
			}
		}
		s.mu.Unlock()
		close(e.done)
	}()
	resp = exec()
	final := resp.clone()
	s.mu.Lock()
	e.final = &final
	e.stored = resp.Status >= 200 && resp.Status < 300 && len(resp.Body) <= s.maxBody
	finished = true
	s.mu.Unlock()
	return resp
}

// sweepLocked drops expired stored entries, at most once per window/100.
func (s *Store) sweepLocked(now time.Time) {
	if now.Sub(s.lastSweep) < s.window/100 && now.After(s.lastSweep) {
		return
	}
	s.lastSweep = now
	for id, e := range s.entries {
		if e.stored && !now.Before(e.created.Add(s.window)) {
			delete(s.entries, id)
		}
	}
}

// Len returns how many keys the store holds (stored or in flight).
func (s *Store) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.entries)
}

// Reset forgets every stored answer. Requests in flight finish normally.
func (s *Store) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, e := range s.entries {
		if e.stored {
			delete(s.entries, id)
		}
	}
}
