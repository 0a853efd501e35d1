// Package a55test runs a fake A55 wallet/charge API for tests, shaped like
// net/http/httptest: NewServer starts it on 127.0.0.1, New does the same and
// registers Close with a testing.TB.
//
// The fake speaks A55's API reference and shares no code with the client
// it verifies: the OAuth2 client-credentials token endpoint, bearer
// tokens on its own clock, the per-client rate limit (100 requests per
// rolling minute by default, X-RateLimit-* headers), wallets, and
// charges in the reference's flat body (every required member checked:
// 422 naming the member, 400 for a wrong JSON type) by card, PIX (also on
// /charge/pix/) and boleto, with pre-authorisation and capture, 3DS,
// refunds, cancels, list and get in both forms; the idempotency guide's
// nested body is taken too, by the guide's rules. Each client starts
// with an account (WalletUUID, MerchantID). The sandbox's test cards
// answer by last digit (TestCard). Charges live on asynchronously: a PIX
// is paid or expires, a boleto is paid or canceled at its due date, a 3DS
// challenge is passed, failed or abandoned, a chargeback is opened and
// settled, by the fake's clock or when told (PayPix, Complete3DS,
// Chargeback, ...), each change sending the signed webhook A55 sends.
// AddAnswer makes it answer, on demand, the codes of A55's code-response
// page no test card gives (TIMEOUT after the charge was made or not,
// DUPLICATE_REQUEST, 3DS_REQUIRED, 3DS_UNAVAILABLE, PROCESSING_ERROR) and
// a capture's pre_captured or a refund's refund_error. The
// Idempotency-Key semantics are the A55 guide's: optional key of 16..128
// characters, 409 on a reused key with another payload, in-flight
// waiting, only 2xx stored, a 24 h window. docs/testing.md has it all.
//
// What every fake shares comes from package payoncetest: its options
// (payoncetest.WithSeed, WithClock, ...) go to New and NewServer with this
// package's own, and the embedded *payoncetest.Fake injects faults
// (AddFault) and tells what really ran (Ledger, Requests, Stats).
// Server.Client returns a ready SDK client that reads the fake's clock (so
// Clock().Advance ages the client's keys as it ages the server's) and
// retries after milliseconds (payoncetest.FastRetryPolicy); options passed to
// it come last and win.
package a55test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/internal/fake/a55fake"
	"github.com/payonce/payonce/internal/fake/fakeserver"
	"github.com/payonce/payonce/payoncetest"
)

// Default credentials and sandbox test cards.
const (
	DefaultClientID     = "demo-client"
	DefaultClientSecret = "demo-secret"

	CardConfirms  = a55fake.CardConfirms  // 4111111111111111: confirmed
	CardDeclined  = a55fake.CardDeclined  // 4000000000000002: 400, status declined, CARD_DECLINED
	CardProcError = a55fake.CardProcError // 4000000000000069: 400, status error, PROCESSING_ERROR
)

// Paths of the API (fault rules match on them; a trailing * matches a
// prefix, e.g. ChargePath + "*" for the refund and cancel path forms).
const (
	TokenPath     = a55fake.TokenPath
	WalletPath    = "/api/v1/bank/wallet/"
	ChargePath    = "/api/v1/bank/wallet/charge/"         // create (POST), get (GET ?charge_uuid=&wallet_uuid=)
	PixChargePath = "/api/v1/bank/wallet/charge/pix/"     // create-pix-charge
	CapturePath   = "/api/v1/bank/wallet/charge/capture/" // capture
	ChargesPath   = "/api/v1/bank/wallet/charges/"        // list
	RefundPath    = "/api/v1/bank/wallet/charge/refund/"  // the guide's body form; the reference's is ChargePath + "{charge_uuid}/refund/{wallet_uuid}/"
	CancelPath    = "/api/v1/bank/wallet/charge/cancel/"  // the guide's body form; the reference's is ChargePath + "{charge_uuid}/cancel/{wallet_uuid}/"
)

type config struct {
	clientID, secret string
	extra            [][2]string // further client_id, secret pairs
	fake             a55fake.Config
}

// option makes an Option of this package.
func option(set func(*config) error) payoncetest.Option {
	return payoncetest.ProviderOption("a55test", set)
}

// refuse is the error of an invalid option of this package.
func refuse(option, reason string) error {
	return fmt.Errorf("%w: a55test.%s: %s", payonce.ErrInvalidConfig, option, reason)
}

// WithCredentials sets the OAuth2 client id and secret (default
// demo-client / demo-secret).
func WithCredentials(clientID, secret string) payoncetest.Option {
	return option(func(c *config) error { c.clientID, c.secret = clientID, secret; return nil })
}

// WithExtraCredentials makes the fake accept one more OAuth2 client besides
// the primary one (WithCredentials); give it once per extra client. Each
// client gets its own tokens, rate-limit counter and idempotency-key
// scope. HTTPClient, Client and IssueToken keep using the primary client;
// get an SDK client for an extra one with a55.ClientCredentials against
// TokenURL, or a token with IssueTokenFor.
func WithExtraCredentials(clientID, secret string) payoncetest.Option {
	return option(func(c *config) error { c.extra = append(c.extra, [2]string{clientID, secret}); return nil })
}

// WithTokenLifetime sets how long access tokens live (default 1 h). A
// lifetime of 0 or less is refused.
func WithTokenLifetime(d time.Duration) payoncetest.Option {
	return option(func(c *config) error {
		c.fake.TokenLifetime = d
		if d <= 0 {
			return refuse(fmt.Sprintf("WithTokenLifetime(%v)", d), "want a lifetime above 0")
		}
		return nil
	})
}

// WithRateLimit sets the per-client limit: n requests per rolling window
// (default 100 per minute); n <= 0 turns it off. A limit with a window of
// 0 or less is refused.
func WithRateLimit(n int, window time.Duration) payoncetest.Option {
	return option(func(c *config) error {
		if n > 0 && window <= 0 {
			return refuse(fmt.Sprintf("WithRateLimit(%d, %v)", n, window), "want a window above 0")
		}
		if n == 0 {
			n = -1
		}
		c.fake.RateLimit, c.fake.RateWindow = n, window
		return nil
	})
}

// WithReplayHeader marks replays with X-Idempotent-Replay: true (A55 does
// not document the header, so it is off by default).
func WithReplayHeader(on bool) payoncetest.Option {
	return option(func(c *config) error { c.fake.ReplayHeader = on; return nil })
}

// Server is a running fake A55 API. The embedded Fake gives what every
// fake shares: Clock, Seed, AddFault, ClearFaults, Ledger, Stats,
// Requests, Reset, ConsoleURL and Handler.
type Server struct {
	// URL is the base URL, http://127.0.0.1:PORT, with no trailing slash.
	URL string
	*payoncetest.Fake

	fake     *a55fake.Fake
	clientID string
	secret   string
	base     *http.Client // plain, for the fake's listener
	client   *http.Client // adds a bearer token
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
	c := &config{clientID: DefaultClientID, secret: DefaultClientSecret}
	s := &Server{}
	bearer := &bearerTransport{s: s}
	s.Fake = payoncetest.Serve(tb, payoncetest.Provider{Name: "a55test", Settings: c,
		Build: func(e *fakeserver.Engine, admin *fakeserver.AdminConfig, url string, base *http.Client) http.Handler {
			c.fake.Clients = fakeserver.Credentials(c.clientID, c.secret, c.extra)
			s.fake, s.clientID, s.secret = a55fake.New(e, c.fake), c.clientID, c.secret
			s.URL, s.base, bearer.base = url, base, base.Transport
			s.client = &http.Client{Transport: bearer}
			admin.Provider = s.fake.AdminHandler
			admin.Webhooks = func(chargeUUID string) any { return s.fake.WebhookDeliveries(chargeUUID) }
			e.OnReset(bearer.forget)
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

// HTTPClient returns a client for the fake that adds a valid bearer token
// to every request without an Authorization header.
func (s *Server) HTTPClient() *http.Client { return s.client }

// ClientID returns the OAuth2 client id.
func (s *Server) ClientID() string { return s.clientID }

// ClientSecret returns the OAuth2 client secret.
func (s *Server) ClientSecret() string { return s.secret }

// TokenURL returns the token endpoint, URL + "/oauth2/token".
func (s *Server) TokenURL() string { return s.URL + TokenPath }

// WalletUUID returns the wallet the fake gives the server's client: a
// charge's wallet_uuid (its merchant is MerchantID).
func (s *Server) WalletUUID() string { return s.account().WalletUUID }

// MerchantID returns the merchant of the client's wallet: a charge's
// merchant_id, a wallet's merchant_uuid.
func (s *Server) MerchantID() string { return s.account().MerchantUUID }

// EntityUUID returns the client's entity: a new wallet's entity_uuid.
func (s *Server) EntityUUID() string { return s.account().EntityUUID }

// Account returns the account the fake gave the server's client, as the
// a55 client takes it (WithAccount): Server.Client's clients act for it,
// and a request built by CardCharge, PixCharge or Complete names no
// merchant or wallet of its own.
func (s *Server) Account() a55.Account {
	a := s.account()
	return a55.Account{MerchantID: a.MerchantUUID, WalletUUID: a.WalletUUID}
}

func (s *Server) account() a55fake.Account {
	a, _ := s.fake.AccountOf(s.clientID)
	return a
}

// AccountOf returns the wallet and merchant of a client the fake knows
// (the primary one or one added with WithExtraCredentials).
func (s *Server) AccountOf(clientID string) (walletUUID, merchantID string, ok bool) {
	a, ok := s.fake.AccountOf(clientID)
	return a.WalletUUID, a.MerchantUUID, ok
}

// IssueToken returns a new valid access token for the server's client.
func (s *Server) IssueToken() string { return s.fake.IssueToken(s.clientID) }

// IssueTokenFor returns a new valid access token for clientID, the primary
// client or one added with WithExtraCredentials (the fake does not check
// that it knows clientID).
func (s *Server) IssueTokenFor(clientID string) string { return s.fake.IssueToken(clientID) }

// SetRateLimit sets the per-client limit: n requests per rolling window;
// n <= 0 turns it off. Counters restart.
func (s *Server) SetRateLimit(n int, window time.Duration) { s.fake.SetRateLimit(n, window) }

// bearerTransport adds a cached token, renewed when the fake clock nears
// its expiry.
type bearerTransport struct {
	base http.RoundTripper
	s    *Server

	mu      sync.Mutex
	token   string
	expires time.Time
}

// forget drops the cached token (the fake's Reset forgot it).
func (t *bearerTransport) forget() {
	t.mu.Lock()
	t.token = ""
	t.mu.Unlock()
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
