// Package coinepaytest runs a fake Coinepay card OpenAPI for tests, shaped
// like net/http/httptest: NewServer starts it on 127.0.0.1, New does the
// same and registers Close with a testing.TB.
//
// The fake checks request signatures (X-Api-Key, X-Timestamp, X-Nonce,
// X-Signature) against its own clock, keeps a USD balance per API key,
// issues and recharges cards, and implements the Idempotency-Key semantics
// of the Coinepay document: required key, 409 on a reused key with another
// body, in-flight waiting, only 2xx answers stored (256 KB cap), a 24 h
// window, X-Idempotent-Replay: true on replays.
//
// What every fake shares comes from package payoncetest: its options
// (payoncetest.WithSeed, WithClock, ...) go to New and NewServer with this
// package's own, and the embedded *payoncetest.Fake injects faults (a lost
// response, a 5xx, a 429, a delay, a reset, a hang: AddFault) and tells
// what really ran (Ledger, Requests, Stats).
// Server.Client returns a ready SDK client that reads the fake's clock (so
// Clock().Advance ages the client's keys as it ages the server's) and
// retries after milliseconds (payoncetest.FastRetryPolicy); options passed to
// it come last and win.
package coinepaytest

import (
	"github.com/payonce/payonce/coinepay"

	"bytes"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/fake/coinepayfake"
	"github.com/payonce/payonce/internal/fake/fakeserver"
	"github.com/payonce/payonce/payoncetest"
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
}

// option makes an Option of this package.
func option(set func(*config) error) payoncetest.Option {
	return payoncetest.ProviderOption("coinepaytest", set)
}

// WithCredentials sets the API key and its secret (default demo-key /
// demo-secret).
func WithCredentials(apiKey, secret string) payoncetest.Option {
	return option(func(c *config) error { c.apiKey, c.secret = apiKey, secret; return nil })
}

// WithExtraCredentials makes the fake accept one more API key besides the
// primary one (WithCredentials); give it once per extra key. Each key has
// its own balance (starting at WithBalance), nonces and idempotency-key
// scope. HTTPClient, Signer and Client keep using the primary key; sign for
// an extra one with SignerFor.
func WithExtraCredentials(apiKey, secret string) payoncetest.Option {
	return option(func(c *config) error { c.extra = append(c.extra, [2]string{apiKey, secret}); return nil })
}

// WithBalance sets the starting balance (default 1000.00).
func WithBalance(a payonce.Amount) payoncetest.Option {
	return option(func(c *config) error {
		d, err := fakeAmount(a)
		if err != nil {
			return fmt.Errorf("%w: coinepaytest.WithBalance(%s): %w", payonce.ErrInvalidConfig, a, err)
		}
		c.fake.StartBalance = &d
		return nil
	})
}

// WithFee sets the fee of a card when no catalog is set (default 1.00).
func WithFee(a payonce.Amount) payoncetest.Option {
	return option(func(c *config) error {
		d, err := fakeAmount(a)
		if err != nil {
			return fmt.Errorf("%w: coinepaytest.WithFee(%s): %w", payonce.ErrInvalidConfig, a, err)
		}
		c.fake.Fee = &d
		return nil
	})
}

// WithCatalog restricts card/apply to these packages at their fees
// (default: any non-empty header_id and package_id).
func WithCatalog(pkgs ...Package) payoncetest.Option {
	return option(func(c *config) error {
		cat, err := catalog(pkgs)
		c.fake.Catalog = cat
		return err
	})
}

// WithMaxStoredResponse changes the 256 KB cap of stored answers. A
// negative n is refused.
func WithMaxStoredResponse(n int) payoncetest.Option {
	return option(func(c *config) error {
		c.fake.MaxStoredResponse = n
		if n < 0 {
			return fmt.Errorf("%w: coinepaytest.WithMaxStoredResponse(%d): want a size of 0 or more", payonce.ErrInvalidConfig, n)
		}
		return nil
	})
}

// Server is a running fake Coinepay API. The embedded Fake gives what
// every fake shares: Clock, Seed, AddFault, ClearFaults, Ledger, Stats,
// Requests, Reset (balances go back to their start), ConsoleURL and
// Handler.
type Server struct {
	// URL is the base URL, http://127.0.0.1:PORT, with no trailing slash.
	URL string
	*payoncetest.Fake

	fake   *coinepayfake.Fake
	apiKey string
	secret string
	keys   map[string]string // every known API key -> secret (read only)
	base   *http.Client      // plain, for the fake's listener
	client *http.Client      // signs every request
}

// NewServer starts a fake on 127.0.0.1. Close it when done. An invalid
// option panics, naming it.
func NewServer(opts ...payoncetest.Option) *Server { return start(nil, opts) }

// New starts a fake and registers its Close with tb.Cleanup. An invalid
// option fails the test (tb.Fatalf) with a message naming it.
func New(tb testing.TB, opts ...payoncetest.Option) *Server {
	tb.Helper()
	return start(tb, opts)
}

// start runs the fake through payoncetest.Serve (tb nil: NewServer).
func start(tb testing.TB, opts []payoncetest.Option) *Server {
	c := &config{apiKey: DefaultAPIKey, secret: DefaultSecret}
	s := &Server{}
	s.Fake = payoncetest.Serve(tb, payoncetest.Provider{Name: "coinepaytest", Settings: c,
		Build: func(e *fakeserver.Engine, admin *fakeserver.AdminConfig, url string, base *http.Client) http.Handler {
			c.fake.Keys = fakeserver.Credentials(c.apiKey, c.secret, c.extra)
			s.fake, s.apiKey, s.secret, s.keys = coinepayfake.New(e, c.fake), c.apiKey, c.secret, c.fake.Keys
			s.URL, s.base = url, base
			s.client = &http.Client{Transport: &signingTransport{base: base.Transport, signer: s.Signer()}}
			admin.SetBalance = s.fake.SetBalance
			return s.fake.Handler()
		},
	}, opts)
	if s.Fake == nil {
		return nil
	}
	return s
}

// Close ends hanging requests and shuts the server down. It is idempotent.
func (s *Server) Close() { s.Fake.Close() }

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
	// The clock is read at each signature: s.Fake is set once Serve returns.
	now := func() time.Time { return s.Clock().Now() }
	signer, err := coinepay.NewHMACSigner(apiKey, secret, coinepay.WithSignerClock(now))
	return signer, err == nil
}

// APIKey returns the API key id.
func (s *Server) APIKey() string { return s.apiKey }

// Secret returns the API secret.
func (s *Server) Secret() string { return s.secret }

// SetBalance sets the balance of apiKey (a key the server does not know is
// ignored). An amount the fake cannot hold (over 999999999999999.99, the
// most payonce.ParseAmount reads) panics, naming it.
func (s *Server) SetBalance(apiKey string, a payonce.Amount) {
	d, err := fakeAmount(a)
	if err != nil {
		panic(fmt.Sprintf("coinepaytest: SetBalance(%q, %s): %v", apiKey, a, err))
	}
	_ = s.fake.SetBalance(apiKey, d)
}

// Balance returns the balance of apiKey (zero for an unknown key).
func (s *Server) Balance(apiKey string) payonce.Amount {
	d, _ := s.fake.Balance(apiKey)
	return sdkAmount(d)
}

// SetCardStatus sets the status card/info and card/list report for the
// card cardID, as Coinepay's own side of a card's life would (freezing
// it, closing it): a test plants a card whose status moved without the
// merchant's knowing. It fails for a card the fake does not keep.
func (s *Server) SetCardStatus(cardID, status string) error {
	if !s.fake.SetCardStatus(cardID, status) {
		return fmt.Errorf("coinepaytest: SetCardStatus(%q): no such card", cardID)
	}
	return nil
}

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
