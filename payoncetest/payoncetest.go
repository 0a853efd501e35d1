// Package payoncetest is what the fake payment APIs for tests share (a
// merchant's test starts a fake with a55test.New or coinepaytest.New and
// passes this package's options and rules to it): the
// options that mean the same for every fake (WithClock, WithSeed,
// WithLatency, WithFaultRate, WithHoldOnFailure), fault injection (Rule,
// FaultKind), what really ran (Ledger, Operation, Attempt, Stats), the
// fake clock (Clock), and Fake, the running server's shared half: its web
// console, and a failed test's fake held open for a developer to look.
//
// The fakes themselves are in the provider test packages, shaped like
// net/http/httptest: a55test.New and coinepaytest.New start one on
// 127.0.0.1 and close it when the test ends; their Server embeds *Fake.
//
//	srv := a55test.New(t, payoncetest.WithSeed(7))
//	_ = srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: a55test.ChargePath, Count: 1})
//	// ... run the code under test against srv.URL ...
//	require.True(t, srv.Ledger().ExecutedOnce(key))
package payoncetest

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/payonce/payonce/internal/fake/fakeserver"
)

// Provider is what a provider's test package gives Serve to run its fake
// on the shared engine. Its Build takes the module's internal engine, so
// only this module's test packages (a55test, coinepaytest) fill it in.
type Provider struct {
	// Name is the test package ("a55test"), in messages.
	Name string
	// Settings are the package's own settings, the *T of its
	// ProviderOptions; the options have set them when Build runs.
	Settings any
	// Build makes the provider's API on e and sets its hooks in admin.
	// The fake will listen at url (http://127.0.0.1:PORT), and base is an
	// *http.Client for it, whose idle connections Close closes; nothing
	// is served before Build returns.
	Build func(e *fakeserver.Engine, admin *fakeserver.AdminConfig, url string, base *http.Client) http.Handler
}

// Fake is the half of a running fake server that every provider shares:
// its clock, fault rules, ledger, request log, console and handler. A
// provider's Server (a55test.Server, coinepaytest.Server) embeds it.
type Fake struct {
	srv     *httptest.Server
	engine  *fakeserver.Engine
	clock   *Clock
	handler http.Handler
	hold    *fakeserver.Hold
	base    *http.Client // given to Build

	closeOnce sync.Once
}

// Serve starts p's fake on 127.0.0.1 with opts (nil ones are skipped).
// With tb nil (a provider's NewServer) an invalid option panics and no
// hold applies. With a test (a provider's New) an invalid option fails it
// (tb.Fatalf; Serve returns nil), and Close is registered with
// tb.Cleanup, first holding a failed test's fake as WithHoldOnFailure or
// PAYONCE_FAKE_HOLD asks.
func Serve(tb testing.TB, p Provider, opts []Option) *Fake {
	if tb != nil {
		tb.Helper()
	}
	s := settings{pkg: p.Name, provider: p.Settings}
	for _, o := range opts {
		if o != nil {
			o(&s)
		}
	}
	if s.err != nil {
		if tb == nil {
			panic(s.err.Error())
		}
		tb.Fatalf("%v", s.err)
		return nil
	}
	if tb == nil {
		return start(p, s, false)
	}
	hold, byOption, err := fakeserver.HoldAsked(s.hold)
	if err != nil {
		tb.Fatalf("%v", err)
		return nil
	}
	f := start(p, s, hold > 0)
	tb.Cleanup(func() { f.hold.AfterTest(tb, p.Name, hold, byOption, f.ConsoleURL(), f.Close) })
	return f
}

// start runs the fake; held, it can be released from its console.
func start(p Provider, s settings, held bool) *Fake {
	clk := s.clock
	if clk == nil {
		clk = NewClock()
	}
	s.engine.Clock = clk.c
	e := fakeserver.New(s.engine)
	f := &Fake{engine: e, clock: clk, srv: httptest.NewUnstartedServer(nil),
		base: &http.Client{Transport: &http.Transport{}}} // no proxy: the fake is on loopback
	addr := f.srv.Listener.Addr()
	e.AddListenAddr(addr) // no webhook delivery aims at the fake itself
	var admin fakeserver.AdminConfig
	api := p.Build(e, &admin, "http://"+addr.String(), f.base)
	if held {
		f.hold = fakeserver.NewHold()
		admin.Release = f.hold.Release
	}
	f.handler = fakeserver.WithAdmin(e.AdminHandler(admin), api)
	f.srv.Config.Handler = f.handler
	fakeserver.Harden(f.srv.Config) // header, read and idle limits of cmd/fakepay
	f.srv.Start()
	return f
}

// ConsoleURL returns the address of the fake's web console: every
// operation by idempotency key with its attempts, faults and replays, and
// controls for the clock, faults and state (docs/testing.md).
func (f *Fake) ConsoleURL() string { return f.srv.URL + fakeserver.ConsolePath }

// Close ends hanging requests and shuts the server down. It is idempotent.
func (f *Fake) Close() {
	f.closeOnce.Do(func() {
		f.engine.Close()
		f.srv.CloseClientConnections()
		f.srv.Close()
		f.base.CloseIdleConnections()
	})
}

// Handler returns the fake's handler (API and /_fakepay/ admin), to mount
// elsewhere.
func (f *Fake) Handler() http.Handler { return f.handler }

// Clock returns the fake's clock. The clients a fake's Client returns
// read it too, so Clock().Advance(25 * time.Hour) ages their keys as it
// ages the server's.
func (f *Fake) Clock() *Clock { return f.clock }

// Seed returns the seed of the fake's IDs and fault choices: the one
// WithSeed gave, or the one drawn when none was. Log it when a test fails
// and pass it to WithSeed to replay the run.
func (f *Fake) Seed() uint64 { return f.engine.Seed() }

// AddFault adds a fault injection rule; an invalid rule (no Fault, a
// Status outside 5xx, a negative Count) is an error.
func (f *Fake) AddFault(r Rule) error { return f.engine.Faults().Add(r.engine()) }

// ClearFaults removes every fault rule.
func (f *Fake) ClearFaults() { f.engine.Faults().Clear() }

// Ledger returns the ledger of executed operations.
func (f *Fake) Ledger() *Ledger { return &Ledger{l: f.engine.Ledger()} }

// Stats returns running totals of requests, executions, replays,
// conflicts and faults.
func (f *Fake) Stats() Stats { return stats(f.engine.Stats()) }

// Requests returns every request received, oldest first.
func (f *Fake) Requests() []Attempt { return attempts(f.engine.Attempts().All()) }

// Reset empties all state: stored keys, the ledger, the request log, the
// fault rules and the provider's own state (A55 tokens, wallets, charges
// and rate counters; Coinepay nonces, cards and balances, back to their
// start), and puts the clock back to its start.
func (f *Fake) Reset() { f.engine.Reset() }
