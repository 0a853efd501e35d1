// Package coinepaytest runs a fake Coinepay card OpenAPI for tests, shaped
// like net/http/httptest: NewServer starts it on 127.0.0.1, New does the
// same and registers Close with a testing.TB.
//
// The fake checks request signatures (X-Api-Key, X-Timestamp, X-Nonce,
// X-Signature) against its own clock, keeps a USD balance per API key,
// issues and recharges cards, and implements the Idempotency-Key semantics
// of the Coinepay document: required key, 409 on a reused key with another
// body, in-flight waiting, only 2xx answers stored (256 KB cap), a 24 h
// window, X-Idempotent-Replay: true on replays. Faults (a lost response, a
// 5xx, a 429, a delay, a reset, a hang) are injected on demand, and the
// ledger tells how many times each operation really ran.
//
// Server.Client returns a ready SDK client that reads the fake's clock (so
// Clock().Advance ages the client's keys as it ages the server's) and
// retries after milliseconds (payonce.FastRetryPolicy); options passed to
// it come last and win. Ledger, Requests and Stats tell what really ran.
package coinepaytest

import (
	"github.com/payonce/payonce/coinepay"

	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/fakeserver"
	"github.com/payonce/payonce/internal/fakeserver/coinepayfake"
)

// Default credentials.
const (
	DefaultAPIKey = "demo-key"
	DefaultSecret = "demo-secret"
)

type config struct {
	apiKey, secret string
	extra          [][2]string // further API key, secret pairs
	fake           coinepayfake.Config
	engine         fakeserver.Options
	clock          SharedClock   // nil: a real-time clock
	err            error         // the first option refused
	hold           time.Duration // WithHoldOnFailure
}

// refuse records the first invalid option: NewServer panics with it and
// New fails the test with it, before anything starts.
func (c *config) refuse(option, reason string) {
	if c.err == nil {
		c.err = fmt.Errorf("%w: coinepaytest.%s: %s", payonce.ErrInvalidConfig, option, reason)
	}
}

// validShare reports whether rate is a share from 0 to 1 (NaN is not).
func validShare(rate float64) bool { return rate >= 0 && rate <= 1 }

// Option configures a Server.
type Option func(*config)

// WithCredentials sets the API key and its secret (default demo-key /
// demo-secret).
func WithCredentials(apiKey, secret string) Option {
	return func(c *config) { c.apiKey, c.secret = apiKey, secret }
}

// WithExtraCredentials makes the fake accept one more API key besides the
// primary one (WithCredentials); give it once per extra key. Each key has
// its own balance (starting at WithBalance), nonces and idempotency-key
// scope. HTTPClient, Signer and Client keep using the primary key; sign for
// an extra one with SignerFor.
func WithExtraCredentials(apiKey, secret string) Option {
	return func(c *config) { c.extra = append(c.extra, [2]string{apiKey, secret}) }
}

// WithBalance sets the starting balance (default 1000.00).
func WithBalance(a payonce.Amount) Option { return func(c *config) { c.fake.StartBalance = &a } }

// WithFee sets the fee of a card when no catalog is set (default 1.00).
func WithFee(a payonce.Amount) Option { return func(c *config) { c.fake.Fee = &a } }

// WithCatalog restricts card/apply to these packages at their fees
// (default: any non-empty header_id and package_id).
func WithCatalog(pkgs ...Package) Option {
	return func(c *config) { c.fake.Catalog = catalog(pkgs) }
}

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

// WithMaxStoredResponse changes the 256 KB cap of stored answers. A
// negative n is refused (NewServer panics, New fails the test).
func WithMaxStoredResponse(n int) Option {
	return func(c *config) {
		if n < 0 {
			c.refuse(fmt.Sprintf("WithMaxStoredResponse(%d)", n), "want a size of 0 or more")
		}
		c.fake.MaxStoredResponse = n
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

// Server is a running fake Coinepay API.
type Server struct {
	// URL is the base URL, http://127.0.0.1:PORT, with no trailing slash.
	URL string

	srv     *httptest.Server
	engine  *fakeserver.Engine
	fake    *coinepayfake.Fake
	clock   *Clock
	handler http.Handler
	apiKey  string
	secret  string
	keys    map[string]string // every known API key -> secret (read only)
	client  *http.Client

	hold *fakeserver.Hold

	closeOnce sync.Once
}

// NewServer starts a fake on 127.0.0.1. Close it when done.
func NewServer(opts ...Option) *Server { return newServer(opts, false) }

// newServer starts a fake; held, it can be released from its console.
func newServer(opts []Option, held bool) *Server {
	c := config{apiKey: DefaultAPIKey, secret: DefaultSecret}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	if c.err != nil {
		panic(c.err.Error())
	}
	c.fake.Keys = fakeserver.Credentials(c.apiKey, c.secret, c.extra)
	clk, ok := c.clock.(*Clock)
	if !ok {
		clk = NewClock()
		if c.clock != nil {
			clk = &Clock{c: c.clock.EngineClock()}
		}
	}
	c.engine.Clock = clk.c
	e := fakeserver.New(c.engine)
	f := coinepayfake.New(e, c.fake)
	s := &Server{engine: e, fake: f, clock: clk, apiKey: c.apiKey, secret: c.secret, keys: c.fake.Keys}
	api := f.Handler()
	cfg := fakeserver.AdminConfig{SetBalance: f.SetBalance}
	if held {
		s.hold = fakeserver.NewHold()
		cfg.Release = s.hold.Release
	}
	admin := e.AdminHandler(cfg)
	mux := fakeserver.WithAdmin(admin, api)
	s.handler = mux
	s.srv = httptest.NewUnstartedServer(mux)
	fakeserver.Harden(s.srv.Config) // header, read and idle limits of cmd/fakepay
	s.srv.Start()
	s.URL = s.srv.URL
	s.client = &http.Client{Transport: &signingTransport{base: s.srv.Client().Transport, signer: s.Signer()}}
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
	tb.Cleanup(func() { s.hold.AfterTest(tb, "coinepaytest", hold, byOption, s.ConsoleURL(), s.Close) })
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

// HTTPClient returns a client for the fake whose requests are signed with
// the server's credentials on the fake's clock (a request that already
// carries X-Signature is sent as is).
func (s *Server) HTTPClient() *http.Client { return s.client }

// Signer returns a fresh signer for the server's credentials that reads the
// fake's clock, for SDK clients under test.
func (s *Server) Signer() *coinepay.HMACSigner {
	signer, _ := s.SignerFor(s.apiKey)
	return signer
}

// SignerFor returns a fresh signer on the fake's clock for apiKey, the
// primary key or one added with WithExtraCredentials; ok is false for a
// key the server does not know.
func (s *Server) SignerFor(apiKey string) (signer *coinepay.HMACSigner, ok bool) {
	secret, ok := s.keys[apiKey]
	if !ok {
		return nil, false
	}
	signer, err := coinepay.NewHMACSigner(apiKey, secret, coinepay.WithSignerClock(s.engine.Clock().Now))
	return signer, err == nil
}

// APIKey returns the API key id.
func (s *Server) APIKey() string { return s.apiKey }

// Secret returns the API secret.
func (s *Server) Secret() string { return s.secret }

// SetBalance sets the balance of apiKey (a key the server does not know is
// ignored).
func (s *Server) SetBalance(apiKey string, a payonce.Amount) { _ = s.fake.SetBalance(apiKey, a) }

// Balance returns the balance of apiKey (zero for an unknown key).
func (s *Server) Balance(apiKey string) payonce.Amount {
	a, _ := s.fake.Balance(apiKey)
	return a
}

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

// Reset empties all state: stored keys, nonces, cards, balances (back to
// the start), ledger, request log and faults, and puts the clock back to
// its start.
func (s *Server) Reset() { s.engine.Reset() }

// Handler returns the fake's handler (API and /_fakepay/ admin), to mount
// elsewhere.
func (s *Server) Handler() http.Handler { return s.handler }

// signingTransport signs each request with a fresh nonce and timestamp.
type signingTransport struct {
	base   http.RoundTripper
	signer *coinepay.HMACSigner
}

func (t *signingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Header.Get(coinepay.HeaderSignature) != "" {
		return t.base.RoundTrip(req)
	}
	var body []byte
	if req.Body != nil && req.Body != http.NoBody {
		b, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
	}
	out := req.Clone(req.Context())
	out.Body, out.GetBody, out.ContentLength = http.NoBody, nil, 0
	if len(body) > 0 {
		// No GetBody: net/http must not re-send a signed request on its own
		// (it would repeat the nonce and be refused as a replay).
		out.Body = io.NopCloser(bytes.NewReader(body))
		out.ContentLength = int64(len(body))
	} else {
		out.Body = io.NopCloser(http.NoBody) // not replayable either
	}
	if err := t.signer.Sign(out, body); err != nil {
		return nil, err
	}
	return t.base.RoundTrip(out)
}

// CloseIdleConnections lets http.Client.CloseIdleConnections reach the base.
func (t *signingTransport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
