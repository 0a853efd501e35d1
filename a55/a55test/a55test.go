// Package a55test runs a fake A55 wallet/charge API for tests, shaped like
// net/http/httptest: NewServer starts it on 127.0.0.1, New does the same and
// registers Close with a testing.TB.
//
// The fake serves the OAuth2 client-credentials token endpoint, checks
// bearer tokens against its own clock, applies the per-client rate limit
// (100 requests per rolling minute by default, X-RateLimit-* headers),
// creates wallets and charges (sandbox test cards 4111111111111111
// confirms, 4000000000000002 is declined, 4000000000000069 errors),
// captures, refunds and cancels them, and implements the Idempotency-Key
// semantics of the A55 guide: optional key of 16..128 characters, 409 on a
// reused key with another payload, in-flight waiting, only 2xx stored, a
// 24 h window. Faults are injected on demand and the ledger tells how many
// times each operation really ran. It also simulates the sandbox's test
// cards by last digit (TestCard) and sends signed charge webhooks (see
// docs/a55.md).
//
// Server.Client returns a ready SDK client that reads the fake's clock (so
// Clock().Advance ages the client's keys as it ages the server's) and
// retries after milliseconds (payonce.FastRetryPolicy); options passed to
// it come last and win. Ledger, Requests and Stats tell what really ran.
package a55test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/internal/fakeserver"
	"github.com/payonce/payonce/internal/fakeserver/a55fake"
)

// Default credentials and sandbox test cards.
const (
	DefaultClientID     = "demo-client"
	DefaultClientSecret = "demo-secret"

	CardConfirms  = a55fake.CardConfirms  // 4111111111111111: confirmed
	CardDeclined  = a55fake.CardDeclined  // 4000000000000002: 400 CARD_DECLINED
	CardProcError = a55fake.CardProcError // 4000000000000069: 400 PROCESSING_ERROR
)

// Paths of the API.
const (
	TokenPath   = a55fake.TokenPath
	WalletPath  = a55.PathWallets
	ChargePath  = a55.PathCharges
	CapturePath = a55.PathChargeCapture
	RefundPath  = a55.PathChargeRefund
	CancelPath  = a55.PathChargeCancel
)

type config struct {
	clientID, secret string
	extra            [][2]string // further client_id, secret pairs
	fake             a55fake.Config
	engine           fakeserver.Options
	clock            SharedClock // nil: a real-time clock
	err              error       // the first option refused
	hold             time.Duration
}

// refuse records the first invalid option: NewServer panics with it and
// New fails the test with it, before anything starts.
func (c *config) refuse(option, reason string) {
	if c.err == nil {
		c.err = fmt.Errorf("%w: a55test.%s: %s", payonce.ErrInvalidConfig, option, reason)
	}
}

// validShare reports whether rate is a share from 0 to 1 (NaN is not).
func validShare(rate float64) bool { return rate >= 0 && rate <= 1 }

// Option configures a Server.
type Option func(*config)

// WithCredentials sets the OAuth2 client id and secret (default
// demo-client / demo-secret).
func WithCredentials(clientID, secret string) Option {
	return func(c *config) { c.clientID, c.secret = clientID, secret }
}

// WithExtraCredentials makes the fake accept one more OAuth2 client besides
// the primary one (WithCredentials); give it once per extra client. Each
// client gets its own tokens, rate-limit counter and idempotency-key
// scope. HTTPClient, Client and IssueToken keep using the primary client;
// get an SDK client for an extra one with a55.ClientCredentials against
// TokenURL, or a token with IssueTokenFor.
func WithExtraCredentials(clientID, secret string) Option {
	return func(c *config) { c.extra = append(c.extra, [2]string{clientID, secret}) }
}

// WithTokenLifetime sets how long access tokens live (default 1 h). A
// lifetime of 0 or less is refused (NewServer panics, New fails the test).
func WithTokenLifetime(d time.Duration) Option {
	return func(c *config) {
		if d <= 0 {
			c.refuse(fmt.Sprintf("WithTokenLifetime(%v)", d), "want a lifetime above 0")
		}
		c.fake.TokenLifetime = d
	}
}

// WithRateLimit sets the per-client limit: n requests per rolling window
// (default 100 per minute); n <= 0 turns it off. A limit with a window of
// 0 or less is refused (NewServer panics, New fails the test).
func WithRateLimit(n int, window time.Duration) Option {
	return func(c *config) {
		if n > 0 && window <= 0 {
			c.refuse(fmt.Sprintf("WithRateLimit(%d, %v)", n, window), "want a window above 0")
		}
		if n == 0 {
			n = -1
		}
		c.fake.RateLimit, c.fake.RateWindow = n, window
	}
}

// WithReplayHeader marks replays with X-Idempotent-Replay: true (A55 does
// not document the header, so it is off by default).
func WithReplayHeader(on bool) Option { return func(c *config) { c.fake.ReplayHeader = on } }

// WithClock sets the fake's clock (default real time): a *Clock from
// NewClock or NewFixedClock, or the clock of another fake, so that one
// clock drives both. A nil clk keeps the default.
func WithClock(clk SharedClock) Option {
	return func(c *config) {
		if clk != nil {
			c.clock = clk
		}
	}
}

// WithSeed seeds fault choices and generated IDs, for a reproducible run:
// two servers with one seed hand out the same IDs to the same requests.
// Without it each server draws a random seed, so that IDs never repeat
// across servers (a test database kept between runs sees no collision).
func WithSeed(seed uint64) Option {
	return func(c *config) { c.engine.Seed, c.engine.Seeded = seed, true }
}

// WithLatency adds d before every API request. A negative d is refused
// (NewServer panics, New fails the test, naming the option).
func WithLatency(d time.Duration) Option {
	return func(c *config) {
		if d < 0 {
			c.refuse(fmt.Sprintf("WithLatency(%v)", d), "want a duration of 0 or more")
		}
		c.engine.Latency = d
	}
}

// WithFaultRate injects a random fault into this share (0..1) of requests.
// A rate outside [0, 1] is refused (NewServer panics, New fails the test,
// naming the option).
func WithFaultRate(rate float64) Option {
	return func(c *config) {
		if !validShare(rate) {
			c.refuse(fmt.Sprintf("WithFaultRate(%v)", rate), "want a share from 0 to 1")
		}
		c.engine.FaultRate = rate
	}
}

// WithHoldOnFailure keeps the fake that New started serving for up to d
// after its test failed, so a developer can open ConsoleURL and look; the
// console's Release button (POST /_fakepay/release) ends the wait
// earlier. The environment variable PAYONCE_FAKE_HOLD ("10m") does the
// same for every fake New starts. No hold outlasts go test's -timeout (it
// ends fakeserver.HoldMargin before the binary's deadline, so the failure
// is still printed), and this option holds nothing where the CI
// environment variable is set (PAYONCE_FAKE_HOLD still does). NewServer
// ignores it.
func WithHoldOnFailure(d time.Duration) Option {
	return func(c *config) {
		if d < 0 {
			c.refuse("WithHoldOnFailure", "a negative duration")
			return
		}
		c.hold = d
	}
}

// Server is a running fake A55 API.
type Server struct {
	// URL is the base URL, http://127.0.0.1:PORT, with no trailing slash.
	URL string

	srv      *httptest.Server
	engine   *fakeserver.Engine
	fake     *a55fake.Fake
	clock    *Clock
	handler  http.Handler
	clientID string
	secret   string
	client   *http.Client

	hold *fakeserver.Hold

	closeOnce sync.Once
}

// NewServer starts a fake on 127.0.0.1. Close it when done.
func NewServer(opts ...Option) *Server { return newServer(opts, false) }

// newServer starts a fake; held, it can be released from its console.
func newServer(opts []Option, held bool) *Server {
	c := config{clientID: DefaultClientID, secret: DefaultClientSecret}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	if c.err != nil {
		panic(c.err.Error())
	}
	c.fake.Clients = fakeserver.Credentials(c.clientID, c.secret, c.extra)
	clk, ok := c.clock.(*Clock)
	if !ok {
		clk = NewClock()
		if c.clock != nil {
			clk = &Clock{c: c.clock.EngineClock()}
		}
	}
	c.engine.Clock = clk.c
	e := fakeserver.New(c.engine)
	f := a55fake.New(e, c.fake)
	s := &Server{engine: e, fake: f, clock: clk, clientID: c.clientID, secret: c.secret}
	cfg := fakeserver.AdminConfig{Provider: f.AdminHandler,
		Webhooks: func(chargeUUID string) any { return f.WebhookDeliveries(chargeUUID) }}
	if held {
		s.hold = fakeserver.NewHold()
		cfg.Release = s.hold.Release
	}
	mux := fakeserver.WithAdmin(e.AdminHandler(cfg), f.Handler())
	s.handler = mux
	s.srv = httptest.NewUnstartedServer(mux)
	fakeserver.Harden(s.srv.Config) // header, read and idle limits of cmd/fakepay
	s.srv.Start()
	e.AddListenAddr(s.srv.Listener.Addr()) // no webhook delivery aims at the fake itself
	s.URL = s.srv.URL
	s.client = &http.Client{Transport: &bearerTransport{base: s.srv.Client().Transport, s: s}}
	return s
}

// New starts a fake and registers its Close with tb.Cleanup. An invalid
// option fails the test (tb.Fatalf) with a message naming it.
func New(tb testing.TB, opts ...Option) *Server {
	tb.Helper()
	var c config
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	if c.err != nil {
		tb.Fatalf("%v", c.err)
		return nil
	}
	hold, byOption, err := fakeserver.HoldAsked(c.hold)
	if err != nil {
		tb.Fatalf("%v", err)
		return nil
	}
	s := newServer(opts, hold > 0)
	tb.Cleanup(func() { s.hold.AfterTest(tb, "a55test", hold, byOption, s.ConsoleURL(), s.Close) })
	return s
}

// ConsoleURL returns the address of the fake's web console: every
// operation by idempotency key with its attempts, faults and replays, and
// controls for the clock, faults and state (docs/testing.md).
func (s *Server) ConsoleURL() string { return s.URL + fakeserver.ConsolePath }

// Close ends hanging requests and shuts the server down. It is idempotent.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		s.engine.Close()
		s.srv.CloseClientConnections()
		s.srv.Close()
		s.client.CloseIdleConnections()
	})
}

// HTTPClient returns a client for the fake that adds a valid bearer token
// to every request without an Authorization header.
func (s *Server) HTTPClient() *http.Client { return s.client }

// ClientID returns the OAuth2 client id.
func (s *Server) ClientID() string { return s.clientID }

// ClientSecret returns the OAuth2 client secret.
func (s *Server) ClientSecret() string { return s.secret }

// TokenURL returns the token endpoint, URL + "/oauth2/token".
func (s *Server) TokenURL() string { return s.URL + TokenPath }

// IssueToken returns a new valid access token for the server's client.
func (s *Server) IssueToken() string { return s.fake.IssueToken(s.clientID) }

// IssueTokenFor returns a new valid access token for clientID, the primary
// client or one added with WithExtraCredentials (the fake does not check
// that it knows clientID).
func (s *Server) IssueTokenFor(clientID string) string { return s.fake.IssueToken(clientID) }

// SetRateLimit sets the per-client limit: n requests per rolling window;
// n <= 0 turns it off. Counters restart.
func (s *Server) SetRateLimit(n int, window time.Duration) { s.fake.SetRateLimit(n, window) }

// Clock returns the fake's clock. The clients Client returns read it too,
// so Clock().Advance(25 * time.Hour) ages their keys as it ages the
// server's.
func (s *Server) Clock() *Clock { return s.clock }

// Seed returns the seed of the server's IDs and fault choices: the one
// WithSeed gave, or the one drawn when none was. Log it when a test fails
// and pass it to WithSeed to replay the run.
func (s *Server) Seed() uint64 { return s.engine.Seed() }

// AddFault adds a fault injection rule; an invalid rule (no Fault, a
// Status outside 5xx, a negative Count) is an error.
func (s *Server) AddFault(r Rule) error { return s.engine.Faults().Add(r.engine()) }

// ClearFaults removes every fault rule.
func (s *Server) ClearFaults() { s.engine.Faults().Clear() }

// Ledger returns the ledger of executed operations.
func (s *Server) Ledger() *Ledger { return &Ledger{l: s.engine.Ledger()} }

// Stats returns running totals of requests, executions, replays,
// conflicts and faults.
func (s *Server) Stats() Stats { return stats(s.engine.Stats()) }

// Requests returns every request received, oldest first.
func (s *Server) Requests() []Attempt { return attempts(s.engine.Attempts().All()) }

// Reset empties all state: stored keys, tokens, wallets, charges, rate
// counters, ledger, request log and faults, and puts the clock back to
// its start.
func (s *Server) Reset() {
	s.engine.Reset()
	if t, ok := s.client.Transport.(*bearerTransport); ok {
		t.mu.Lock()
		t.token = ""
		t.mu.Unlock()
	}
}

// Handler returns the fake's handler (API and /_fakepay/ admin), to mount
// elsewhere.
func (s *Server) Handler() http.Handler { return s.handler }

// bearerTransport adds a cached token, renewed when the fake clock nears
// its expiry.
type bearerTransport struct {
	base http.RoundTripper
	s    *Server

	mu      sync.Mutex
	token   string
	expires time.Time
}

func (t *bearerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Header.Get("Authorization") != "" {
		return t.base.RoundTrip(req)
	}
	now := t.s.Clock().Now()
	t.mu.Lock()
	if t.token == "" || !now.Before(t.expires) {
		t.token = t.s.IssueToken()
		t.expires = now.Add(t.s.fake.TokenLifetime() - time.Second)
	}
	tok := t.token
	t.mu.Unlock()
	out := req.Clone(req.Context())
	out.Header.Set("Authorization", "Bearer "+tok)
	return t.base.RoundTrip(out)
}

// CloseIdleConnections lets http.Client.CloseIdleConnections reach the base.
func (t *bearerTransport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
