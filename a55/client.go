package a55

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/loopback"
	"golang.org/x/time/rate"
)

// Paths of the wallet/charge API, as A55's API reference gives them
// (docs/a55.md). Refund and cancel name the charge and its wallet in the
// path (the templates below are their routes); capture names them in the
// body.
const (
	PathWallets       = "/api/v1/bank/wallet/"
	PathCharges       = "/api/v1/bank/wallet/charge/"
	PathChargeByUUID  = "/api/v1/bank/wallet/charge/{charge_uuid}/"
	PathChargeCapture = "/api/v1/bank/wallet/charge/capture/"
	PathChargeRefund  = "/api/v1/bank/wallet/charge/{charge_uuid}/refund/{wallet_uuid}/"
	PathChargeCancel  = "/api/v1/bank/wallet/charge/{charge_uuid}/cancel/{wallet_uuid}/"
)

// The idempotency guide's refund and cancel paths (identifiers in the
// body), which payonce versions before the reference's wire form sent:
// journal entries recorded under them are told apart (legacy.go).
const (
	guideRefundPath = "/api/v1/bank/wallet/charge/refund/"
	guideCancelPath = "/api/v1/bank/wallet/charge/cancel/"
)

// RequestsPerMinute is A55's documented rate limit per client_id, over a
// rolling 60-second window.
const RequestsPerMinute = 100

// Client is the typed A55 client. Its services share one payonce core, so
// one retry budget, limiter and token cache. Safe for concurrent use.
type Client struct {
	core *payonce.Client
	view payonce.Settings // what core resolved (payonce.Client.Settings)
	auth *authorizer
	// account is the merchant and wallet a request names when it names
	// none itself (WithAccount).
	account Account
	// env is the environment of the base URL, "" for another URL.
	env Environment
	// luhn: card numbers must pass the Luhn check. A55's sandbox test
	// cards fail it, so it is off for the Sandbox environment and for a
	// loopback base URL (the fakes), on everywhere else.
	luhn bool

	// Wallets creates wallets.
	Wallets *WalletsService
	// Charges creates, reads, captures, refunds and cancels charges.
	Charges *ChargesService
}

// NewClient returns an A55 client. The A55 defaults come first (the
// Sandbox environment, A55 key rules, the A55 codec, the bearer
// authorizer for auth) and opts after them, so any payonce option
// overrides them: WithEnvironment(a55.Production), payonce.WithHTTPClient,
// payonce.WithRetryPolicy, payonce.WithLogger, WithRateLimit().
//
// Production is never a default: name the environment A55 gave the
// credentials for (WithEnvironment). The token URL and scope follow the
// environment; a base URL of another origin (payonce.WithBaseURL: a
// proxy, a fake) needs Auth.TokenURL, else NewClient refuses it with
// payonce.ErrInvalidConfig (a fixed access token needs none). Nothing
// falls back to the sandbox's token endpoint. A base URL that ends in
// /api/v1 is refused: give the origin only.
//
// OAuth2 token requests go through the same *http.Client as the API calls.
// A custom payonce.WithSigner replaces the bearer authorizer.
func NewClient(auth Auth, opts ...payonce.Option) (*Client, error) {
	if err := auth.validate(); err != nil {
		return nil, err
	}
	z := newAuthorizer(auth)
	p := provider()
	// Before scopes named the origin, entries were recorded under
	// "a55:<client_id>" ("a55:" with an access token): a client refuses
	// to miss them (payonce.WithLegacyScopes).
	p.LegacyScopes = []string{"a55:" + auth.ClientID}
	if z.cfg != nil {
		// The journal scope: the client ID (never the secret) and, added by
		// the core, the base URL's origin. A fixed access token names no
		// client, so a journal needs payonce.WithScope then.
		p.ScopeIdentity = "a55:" + auth.ClientID
	}
	base := []payonce.Option{
		payonce.WithProvider(p),
		payonce.WithBaseURL(SandboxURL),
		payonce.WithSigner(z),
	}
	if z.cfg != nil {
		// The client secret keys the journal's body fingerprints
		// (payonce.WithFingerprintKey, which the caller's options may
		// replace): no row holds an unkeyed digest of the card.
		base = append(base, payonce.WithFingerprintKey([]byte(auth.ClientSecret)))
	}
	core, err := payonce.NewClient(append(base, opts...)...)
	if err != nil {
		return nil, err
	}
	view := core.Settings()
	// The token's lifetime runs on the client's clock (payoncetest.ClientClock in tests),
	// as the key window does: a fake's Clock().Advance ages both.
	z.now = view.Now
	if scopeHolds(core.Scope(), auth.ClientSecret, auth.AccessToken) {
		return nil, fmt.Errorf("%w: a55: the journal scope holds the client secret or the access token: name the account instead", payonce.ErrInvalidConfig)
	}
	if err := checkBasePath(view.BaseURL); err != nil {
		return nil, err
	}
	env, known := environmentOf(view.BaseURL)
	if z.cfg != nil {
		if err := z.resolveTokenURL(auth, env, known, view.BaseURL); err != nil {
			return nil, err
		}
	}
	z.useHTTPClient(view.HTTPClient)
	c := &Client{core: core, view: view, auth: z, env: env, luhn: luhnChecked(env, view.BaseURL)}
	c.Wallets = &WalletsService{c: c}
	c.Charges = &ChargesService{c: c}
	return c, nil
}

// luhnChecked reports whether card numbers must pass the Luhn check on a
// client of env (or of another base URL): everywhere but the Sandbox
// environment, whose test cards fail it, and a loopback host (a fake).
func luhnChecked(env Environment, baseURL string) bool {
	if env == Sandbox {
		return false
	}
	u, err := url.Parse(baseURL)
	return err != nil || !loopback.Host(u.Hostname())
}

// Environment returns the environment of the client's base URL; ok is
// false for a base URL of another origin.
func (c *Client) Environment() (env Environment, ok bool) { return c.env, c.env != "" }

// scopeHolds reports whether scope holds one of the secrets (those of at
// least 8 bytes: a shorter one would match by chance).
func scopeHolds(scope string, secrets ...string) bool {
	for _, s := range secrets {
		if len(s) >= 8 && strings.Contains(scope, s) {
			return true
		}
	}
	return false
}

// checkTokenURL refuses a token URL that would send the client secret in
// clear text: plain http:// is accepted only to a loopback host, or when
// the API itself is reached over plain http:// to a non-loopback host
// (which payonce.NewClient allows only with payonce.WithInsecureHTTP).
func checkTokenURL(raw, baseURL string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return fmt.Errorf("%w: a55: token URL must be an absolute http(s) URL", payonce.ErrInvalidConfig)
	}
	if !clearTextRefused(u, baseURL) {
		return nil
	}
	return fmt.Errorf("%w: a55: plain http:// token URL to non-loopback host %q would send the client secret in clear text (use https)",
		payonce.ErrInvalidConfig, u.Hostname())
}

// checkWebhookURL refuses a webhook URL the provider would POST the
// charge's signed status changes to in clear text, or that is not an
// absolute http(s) URL: plain http:// is accepted only to a loopback host,
// or when the API itself is reached over plain http:// to a non-loopback
// host (payonce.WithInsecureHTTP). The error never names the URL, whose
// query string is often the merchant's own secret.
func checkWebhookURL(raw, baseURL string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return &payonce.ValidationError{Field: "webhook_url", Reason: "must be an absolute http(s) URL", Err: payonce.ErrInvalidRequest}
	}
	if !clearTextRefused(u, baseURL) {
		return nil
	}
	return &payonce.ValidationError{Field: "webhook_url", Reason: "plain http:// to a non-loopback host would deliver webhooks in clear text (use https)",
		Err: payonce.ErrInvalidRequest}
}

// clearTextRefused reports a URL (its scheme lowercased, as url.Parse
// leaves it) that would carry a secret in clear text where the client
// does not allow it: plain http:// to a non-loopback host, unless the API
// itself is reached over plain http:// to a non-loopback host (the caller
// opted in with payonce.WithInsecureHTTP). The token URL and a charge's
// webhook URL follow this one rule.
func clearTextRefused(u *url.URL, baseURL string) bool {
	if u.Scheme != "http" || loopback.Host(u.Hostname()) {
		return false
	}
	b, err := url.Parse(baseURL)
	return err != nil || b.Scheme != "http" || loopback.Host(b.Hostname())
}

// NewRateLimiter returns a token bucket that never lets more than perMinute
// requests into any rolling 60-second window: burst requests at once, then
// (perMinute-burst) a minute. Share one limiter among every client that
// uses the same client_id, since A55 counts per client_id.
func NewRateLimiter(perMinute, burst int) *rate.Limiter {
	if burst < 1 {
		burst = 1
	}
	if burst >= perMinute {
		burst = max(perMinute/10, 1)
	}
	return rate.NewLimiter(rate.Limit(float64(perMinute-burst)/60), burst)
}

// WithRateLimit paces attempts client-side to A55's documented 100
// requests a minute (bursts of 10), so a busy backend slows down instead of
// collecting 429s. It is payonce.WithLimiter(NewRateLimiter(100, 10)).
func WithRateLimit() payonce.Option {
	return payonce.WithLimiter(NewRateLimiter(RequestsPerMinute, 10))
}

// Core returns the payonce core client.
func (c *Client) Core() *payonce.Client { return c.core }

// Token returns a valid access token (fetching one if needed). It is meant
// for diagnostics and never logged by the client.
func (c *Client) Token(ctx context.Context) (string, error) { return c.auth.Token(ctx) }

// String describes the client without any credential.
func (c *Client) String() string {
	s := "a55.Client{baseURL: " + c.view.BaseURL
	if c.env != "" {
		s += " (" + string(c.env) + ")"
	}
	return s + ", auth: " + c.auth.String() + "}"
}

// RateLimit is the rate-limit state of an answer, from its X-RateLimit-*
// headers; zero values when the answer had none.
type RateLimit struct {
	Limit     int       // X-RateLimit-Limit: requests per window
	Remaining int       // X-RateLimit-Remaining
	Reset     time.Time // X-RateLimit-Reset: when the window frees up
}

// ResponseMeta describes one call: the payonce Meta (the key used, whether
// the answer was a replay, attempts, request ID, status, headers) and the
// rate-limit headers of the final answer.
type ResponseMeta struct {
	payonce.Meta
	RateLimit RateLimit
}

func newResponseMeta(m payonce.Meta) ResponseMeta {
	rm := ResponseMeta{Meta: m}
	rm.RateLimit = ParseRateLimit(m.Header)
	return rm
}

// ParseRateLimit reads the X-RateLimit-* headers (Reset in Unix seconds).
func ParseRateLimit(h http.Header) RateLimit {
	var rl RateLimit
	if h == nil {
		return rl
	}
	// The names in canonical form, read from the map as h.Get reads them
	// but without canonicalizing each name again; an absent header is
	// not parsed (a failed strconv call allocates its error).
	if v := firstValue(h, "X-Ratelimit-Limit"); v != "" {
		rl.Limit, _ = strconv.Atoi(v)
	}
	if v := firstValue(h, "X-Ratelimit-Remaining"); v != "" {
		rl.Remaining, _ = strconv.Atoi(v)
	}
	if v := firstValue(h, "X-Ratelimit-Reset"); v != "" {
		if s, err := strconv.ParseInt(v, 10, 64); err == nil && s > 0 {
			rl.Reset = time.Unix(s, 0)
		}
	}
	return rl
}

// firstValue is h.Get(name) for a name already in canonical form.
func firstValue(h http.Header, name string) string {
	if v := h[name]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// do runs one call through the core and wraps a failed charge in a
// *ChargeError.
func (c *Client) do(ctx context.Context, req *payonce.Request, out any, opts []payonce.CallOption) (ResponseMeta, error) {
	m, err := c.core.Do(ctx, req, out, opts...)
	meta := newResponseMeta(m)
	if err == nil {
		return meta, nil
	}
	var apiErr *payonce.APIError
	var cf *chargeFailure
	if errors.As(err, &apiErr) && errors.As(err, &cf) {
		ch := cf.charge
		ch.Meta = meta
		return meta, &ChargeError{Charge: ch, Err: apiErr}
	}
	return meta, err
}
