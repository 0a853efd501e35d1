package fakeserver

import (
	"context"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// MaxRequestBody is the largest request body the fakes read; a larger one
// answers 413 in the provider's error shape.
const MaxRequestBody = 1 << 20

// Options configure an Engine.
type Options struct {
	Clock *Clock // default: real time
	// Seed seeds fault choices and generated IDs when Seeded is set, for
	// a reproducible run. Without Seeded each engine draws a random seed
	// (Engine.Seed reports it), so that two fakes never hand out the same
	// IDs.
	Seed           uint64
	Seeded         bool
	FaultRate      float64       // probability of a random chaos fault per request
	Latency        time.Duration // added before every provider request
	AttemptLogSize int           // attempts kept (default DefaultAttemptLogSize)
	// MaxOperations caps a long-running sandbox's memory (0: no cap). The
	// ledger keeps the last MaxOperations operations, each provider's
	// idempotency store keeps the last MaxOperations answers in full, and
	// the providers' own tables (A55 charges and wallets, Coinepay cards)
	// keep their newest MaxOperations entries;
	// older keys stay as small markers until their window ends, answering
	// ProblemAnswerNotKept (409) to a repeat instead of executing again.
	MaxOperations int
	// DocumentedAnswers starts the engine in the documented-answers mode
	// (SetDocumentedAnswers): no answer carries the key that made a
	// resource.
	DocumentedAnswers bool
}

// Engine holds the state shared by every provider served from it: clock,
// faults, ledger and attempt log. Safe for concurrent use.
type Engine struct {
	clock    *Clock
	ledger   *Ledger
	attempts *AttemptLog
	faults   *Faults
	ops      *opIndex
	ids      *idGen
	seed     uint64
	stats    statCounters
	date     atomic.Pointer[dateValue] // the latest Date header
	latency  atomic.Int64              // nanoseconds added before every provider request
	// documented: answers leave out the key that made a resource
	// (documented.go).
	documented atomic.Bool

	closing   chan struct{}
	closeOnce sync.Once

	maxOps int

	mu        sync.Mutex
	stores    []*Store
	providers []string // the names of the providers Handler serves
	resets    []func()
	closers   []func()
	listens   []net.Addr // where the engine's handlers are served
}

// New returns an engine.
func New(o Options) *Engine {
	if o.Clock == nil {
		o.Clock = NewClock()
	}
	if !o.Seeded {
		o.Seed = rand.Uint64()
	}
	e := &Engine{
		seed:     o.Seed,
		clock:    o.Clock,
		ledger:   &Ledger{max: max(o.MaxOperations, 0)},
		attempts: NewAttemptLog(o.AttemptLogSize),
		faults:   NewFaults(o.Seed, o.FaultRate),
		ops:      newOpIndex(o.MaxOperations),
		ids:      newIDGen(o.Seed),
		closing:  make(chan struct{}),
		maxOps:   max(o.MaxOperations, 0),
	}
	e.latency.Store(int64(o.Latency))
	e.documented.Store(o.DocumentedAnswers)
	return e
}

// MaxOperations returns the cap of Options.MaxOperations (0: none); a
// backend keeps at most that many of its oldest resources of a kind.
func (e *Engine) MaxOperations() int { return e.maxOps }

// Seed returns the seed of the engine's fault choices and IDs: the one
// given, or the one drawn when none was. Options{Seed: e.Seed(), Seeded:
// true} replays the run's IDs and faults for the same requests.
func (e *Engine) Seed() uint64 { return e.seed }

// AddListenAddr records an address the engine's handlers are served on
// (the listener of a55test, coinepaytest or fakepay), so that a fake
// can tell a request aimed at itself: webhook deliveries never go there
// unless asked.
func (e *Engine) AddListenAddr(a net.Addr) {
	if a == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.listens = append(e.listens, a)
}

// ListenAddrs returns the addresses AddListenAddr recorded.
func (e *Engine) ListenAddrs() []net.Addr {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.listens)
}

// Clock returns the engine's clock.
func (e *Engine) Clock() *Clock { return e.clock }

// Ledger returns the ledger of executed operations.
func (e *Engine) Ledger() *Ledger { return e.ledger }

// Attempts returns the log of received requests.
func (e *Engine) Attempts() *AttemptLog { return e.attempts }

// Faults returns the fault rules.
func (e *Engine) Faults() *Faults { return e.faults }

// SetLatency sets the delay added before every provider request.
func (e *Engine) SetLatency(d time.Duration) { e.latency.Store(int64(d)) }

func (e *Engine) getLatency() time.Duration { return time.Duration(e.latency.Load()) }

// OnReset registers f to run on Reset (a backend empties its own state).
func (e *Engine) OnReset(f func()) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.resets = append(e.resets, f)
}

// Reset empties all state: stored answers, ledger, attempt log, fault
// rules and every backend's state (balances go back to their start), and
// puts the clock back (Clock.Reset), so signed calls work again after an
// earlier test moved it. Ledger sequence numbers keep counting.
func (e *Engine) Reset() {
	e.mu.Lock()
	stores := append([]*Store(nil), e.stores...)
	resets := append([]func(){}, e.resets...)
	e.mu.Unlock()
	for _, s := range stores {
		s.Reset()
	}
	e.ledger.Reset()
	e.attempts.Reset()
	e.ops.reset()
	e.stats.reset()
	e.faults.Clear()
	e.clock.Reset()
	for _, f := range resets {
		f()
	}
}

// OnClose registers f to run once on Close (a backend stops its own
// goroutines, such as webhook deliveries).
func (e *Engine) OnClose(f func()) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closers = append(e.closers, f)
}

// Close ends every hanging or delayed request, so an http.Server or
// httptest.Server holding them can shut down, and runs the OnClose
// functions. It is idempotent.
func (e *Engine) Close() {
	e.closeOnce.Do(func() {
		close(e.closing)
		e.mu.Lock()
		closers := append([]func(){}, e.closers...)
		e.mu.Unlock()
		for _, f := range closers {
			f()
		}
	})
}

// NewUUID returns a UUID v4 string from the engine's seeded generator.
func (e *Engine) NewUUID() string { return e.ids.uuid() }

// NewID returns prefix followed by 24 hex digits from the seeded generator.
func (e *Engine) NewID(prefix string) string { return e.ids.id(prefix) }

// Record appends an operation to the ledger, filling Time from the clock.
func (e *Engine) Record(op Operation) {
	if op.Time.IsZero() {
		op.Time = e.clock.Now()
	}
	e.ops.executed(&op, e.ledger.Record(op))
}

// sleep waits d, or less when ctx ends or the engine closes; it reports
// whether the whole d passed.
func (e *Engine) sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
	case <-e.closing:
	}
	return false
}

// Limits of the fakes' HTTP servers.
const (
	MaxHeaderBytes    = 64 << 10         // request line and headers
	ReadHeaderTimeout = 10 * time.Second // to read the request line and headers
	ReadTimeout       = time.Minute      // to read a whole request, body included
	IdleTimeout       = 2 * time.Minute  // an idle keep-alive connection
)

// Harden sets the fakes' limits on srv (cmd/fakepay, or the Config of an
// httptest server before it starts): a slow body, a slow header or an
// idle keep-alive connection is closed instead of held open forever, and a
// header over MaxHeaderBytes answers 431. ReadTimeout also bounds how long
// a hang or delay fault can hold a request.
func Harden(srv *http.Server) {
	srv.MaxHeaderBytes = MaxHeaderBytes
	srv.ReadHeaderTimeout = ReadHeaderTimeout
	srv.ReadTimeout = ReadTimeout
	srv.IdleTimeout = IdleTimeout
}

// servesProvider reports whether a provider of that name is served, for
// admin filters and fault rules that name one.
func (e *Engine) servesProvider(name string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Contains(e.providers, name)
}
