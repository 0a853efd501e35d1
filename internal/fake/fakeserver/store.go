package fakeserver

import (
	"context"
	"crypto/sha256"
	"net/http"
	"sync"
	"time"
)

// DefaultMaxStoredBody is the largest response body the store keeps (the
// Coinepay document's 256 KB cap). A larger 2xx answer is not kept, but
// the key is: a repeat answers Unavailable and never executes again.
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
// matter). A body that is not JSON, or not valid UTF-8, is hashed as sent:
// JSON decoding would turn every invalid byte into U+FFFD and make two
// different payloads one.
type Fingerprint [32]byte

// FingerprintOf returns the fingerprint of a request.
func FingerprintOf(method, path string, body []byte) Fingerprint {
	scan := scanBody(body)
	defer scan.release()
	return fingerprintOfScan(method, path, &scan)
}

// fingerprintOfScan is FingerprintOf of a body already scanned.
func fingerprintOfScan(method, path string, scan *bodyScan) Fingerprint {
	var buf []byte
	if scan.sc != nil {
		buf = scan.sc.hash[:0]
	}
	buf = append(buf, method...)
	buf = append(buf, 0)
	buf = append(buf, path...)
	buf = append(buf, 0)
	buf = append(buf, scan.canonical...)
	if scan.sc != nil {
		scan.sc.hash = buf
	}
	return sha256.Sum256(buf)
}

// Outcome tells how the store answered a keyed request.
type Outcome int

// Outcomes of Store.Do.
const (
	Executed Outcome = iota // this request ran the operation
	Replayed                // a stored answer was copied
	Shared                  // the request waited for the in-flight first one and got its answer
	Conflict                // the key was used with another payload
	// Unavailable: the key already executed within its window but its
	// answer was not kept (larger than MaxBody, or dropped by MaxStored);
	// the operation is not run again and the provider answers an error.
	Unavailable
)

// StoreConfig configures a Store.
type StoreConfig struct {
	Clock   *Clock
	Window  time.Duration // how long a stored answer counts (default 24 h)
	MaxBody int           // largest body stored (default DefaultMaxStoredBody; negative: no cap)
	// MaxStored caps the answers kept in full (0: no cap). Over it, the
	// oldest answer's body is dropped and its key becomes a marker that
	// answers Unavailable for the rest of its window: memory is bounded,
	// and a key is still never executed twice.
	MaxStored int
}

// Store is the server-side idempotency store: one per provider, keyed by
// credential scope and key. A 2xx answer means the operation executed: its
// key is remembered for Window on the injectable clock, with the answer
// when it is at most MaxBody bytes, as a marker otherwise. Any other answer
// commits nothing and is forgotten. Expired entries are swept as the clock
// moves, so memory stays bounded. Safe for concurrent use.
//
// The invariant: within the window, exec runs at most once to a 2xx answer
// per scope and key.
type Store struct {
	clock     *Clock
	window    time.Duration
	maxBody   int
	maxStored int

	mu      sync.Mutex
	entries map[storeKey]*entry // requests in flight and kept answers
	// markers are the keys that executed but whose answer is not kept:
	// 40 bytes each (a hash of the id, a prefix of the fingerprint and
	// the time), so that a million of them fit where a few thousand
	// answers would.
	markers   map[markerID]marker
	kept      []storeKey // ids of entries with a kept answer, oldest first (may hold stale ids)
	nkept     int
	lastSweep time.Time
	sweeps    int // full sweeps run (for tests)
}

type entryState int

const (
	inFlight  entryState = iota
	stored               // 2xx answer kept for replays
	committed            // 2xx answer not kept: moves to the markers once done
)

// storeKey is an entry's id: the credential scope and the key.
type storeKey struct{ scope, key string }

// markerID is the first 16 bytes of SHA-256 over an entry's id (scope, a
// zero byte, key): two ids sharing one is as likely as a collision of
// random UUIDs.
type markerID [16]byte

func markerIDOf(id storeKey) markerID {
	var buf [256]byte
	b := append(append(append(buf[:0], id.scope...), 0), id.key...)
	sum := sha256.Sum256(b)
	return markerID(sum[:16])
}

// marker is what the store keeps of a key that executed without a kept
// answer: the first 16 bytes of its fingerprint (a repeat with another
// payload still answers Conflict) and when it was created (Unix ns).
type marker struct {
	fp      [16]byte
	created int64
}

func markerOf(e *entry) marker {
	return marker{fp: [16]byte(e.fp[:16]), created: e.created.UnixNano()}
}

type entry struct {
	fp      Fingerprint
	created time.Time
	done    chan struct{} // closed when the first request finished
	final   *Response     // the first request's answer (&result), set before done closes
	result  Response
	state   entryState
}

// NewStore returns an empty store.
func NewStore(cfg StoreConfig) *Store {
	if cfg.Clock == nil {
		cfg.Clock = NewClock()
	}
	if cfg.Window <= 0 {
		cfg.Window = 24 * time.Hour
	}
	if cfg.MaxBody == 0 {
		cfg.MaxBody = DefaultMaxStoredBody
	}
	return &Store{clock: cfg.Clock, window: cfg.Window, maxBody: cfg.MaxBody, maxStored: cfg.MaxStored,
		entries: make(map[storeKey]*entry), markers: make(map[markerID]marker)}
}

// Do runs exec at most once for scope and key within the window:
//
//   - a new key (or one whose window passed) runs exec (Executed);
//   - the same key with another fingerprint answers Conflict, also while
//     the first request is still running;
//   - the same key and fingerprint while the first request runs waits for
//     it and returns its final answer (Shared);
//   - the same key and fingerprint after a kept 2xx answer returns a copy
//     (Replayed), after a 2xx answer that was not kept returns Unavailable
//     without running exec.
//
// After an answer that is not 2xx the next request with the key runs exec
// again. A waiting request whose ctx ends returns ctx.Err().
func (s *Store) Do(ctx context.Context, scope, key string, fp Fingerprint, exec func() Response) (Response, Outcome, error) {
	id := storeKey{scope, key}
	for {
		s.mu.Lock()
		now := s.clock.Now()
		s.sweepLocked(now)
		e := s.entries[id]
		if e != nil && e.state != inFlight && !now.Before(e.created.Add(s.window)) {
			s.deleteLocked(id, e)
			e = nil
		}
		if e == nil && len(s.markers) > 0 {
			mid := markerIDOf(id)
			if m, ok := s.markers[mid]; ok {
				if now.UnixNano() < m.created+int64(s.window) {
					s.mu.Unlock()
					if m.fp != [16]byte(fp[:16]) {
						return Response{}, Conflict, nil
					}
					return Response{}, Unavailable, nil
				}
				delete(s.markers, mid)
			}
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
		switch e.state {
		case stored:
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
			if e.state != stored {
				out = Shared
			}
			return e.final.clone(), out, nil
		}
		// The first request was aborted before it answered: try again.
	}
}

// run executes exec as the owner of e and publishes its answer.
func (s *Store) run(id storeKey, e *entry, exec func() Response) (resp Response) {
	finished := false
	defer func() {
		s.mu.Lock()
		if s.entries[id] == e {
			switch {
			case !finished || !ok2xx(e.final.Status):
				delete(s.entries, id)
			case e.state == committed:
				// Waiters read e.final once done closes; the store keeps a
				// marker without the body.
				delete(s.entries, id)
				s.markers[markerIDOf(id)] = markerOf(e)
			}
		}
		s.mu.Unlock()
		close(e.done)
	}()
	resp = exec()
	final := resp.clone()
	s.mu.Lock()
	e.result = final
	e.final = &e.result
	if ok2xx(resp.Status) {
		e.state = committed
		if s.maxBody < 0 || len(resp.Body) <= s.maxBody {
			e.state = stored
			s.keepLocked(id)
		}
	}
	finished = true
	s.mu.Unlock()
	return resp
}

func ok2xx(status int) bool { return status >= 200 && status < 300 }

// keepLocked counts a kept answer and, over MaxStored, turns the oldest
// kept answer into a marker.
func (s *Store) keepLocked(id storeKey) {
	s.kept = append(s.kept, id)
	s.nkept++
	for s.maxStored > 0 && s.nkept > s.maxStored && len(s.kept) > 0 {
		old := s.kept[0]
		s.kept = s.kept[1:]
		if e := s.entries[old]; e != nil && e.state == stored {
			delete(s.entries, old)
			s.markers[markerIDOf(old)] = markerOf(e)
			s.nkept--
		}
	}
	if len(s.kept) > 64 && len(s.kept) > 2*s.nkept {
		s.compactLocked()
	}
}

// compactLocked drops the stale ids of kept.
func (s *Store) compactLocked() {
	out := s.kept[:0:0]
	for _, id := range s.kept {
		if e := s.entries[id]; e != nil && e.state == stored {
			out = append(out, id)
		}
	}
	s.kept, s.nkept = out, len(out)
}

func (s *Store) deleteLocked(id storeKey, e *entry) {
	if e.state == stored {
		s.nkept--
	}
	delete(s.entries, id)
}

// sweepLocked drops expired entries once the clock moved by window/100
// since the last sweep. A clock that stands still (a fixed test clock)
// never sweeps again, and one moved back restarts the count from there:
// Do checks the expiry of the entry it reads in any case.
func (s *Store) sweepLocked(now time.Time) {
	if s.sweeps > 0 {
		if now.Before(s.lastSweep) {
			s.lastSweep = now
			return
		}
		if now.Sub(s.lastSweep) < s.window/100 {
			return
		}
	}
	s.lastSweep = now
	s.sweeps++
	for id, e := range s.entries {
		if e.state != inFlight && !now.Before(e.created.Add(s.window)) {
			s.deleteLocked(id, e)
		}
	}
	for mid, m := range s.markers {
		if now.UnixNano() >= m.created+int64(s.window) {
			delete(s.markers, mid)
		}
	}
	if len(s.kept) > 64 && len(s.kept) > 2*s.nkept {
		s.compactLocked()
	}
}

// Holds reports whether scope and key have an entry within its window: a
// request in flight, a kept answer or a marker.
func (s *Store) Holds(scope, key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := storeKey{scope, key}
	now := s.clock.Now()
	if e := s.entries[id]; e != nil {
		return e.state == inFlight || now.Before(e.created.Add(s.window))
	}
	m, ok := s.markers[markerIDOf(id)]
	return ok && now.UnixNano() < m.created+int64(s.window)
}

// Len returns how many keys the store holds (stored, markers or in flight).
func (s *Store) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.entries) + len(s.markers)
}

// Reset forgets every stored answer and marker. Requests in flight finish
// normally.
func (s *Store) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, e := range s.entries {
		if e.state != inFlight {
			delete(s.entries, id)
		}
	}
	clear(s.markers)
	s.kept, s.nkept = nil, 0
}
