package a55

import (
	"github.com/payonce/payonce/internal/corekit"
	"github.com/payonce/payonce/redact"

	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/payonce/payonce"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// DefaultScope is the OAuth2 scope the client asks for.
const DefaultScope = "api/readwrite"

// Environment variables read by AuthFromEnv.
const (
	EnvAccessToken  = "A55_ACCESS_TOKEN"
	EnvClientID     = "A55_CLIENT_ID"
	EnvClientSecret = "A55_CLIENT_SECRET"
	EnvTokenURL     = "A55_TOKEN_URL"
)

// tokenRefreshMargin is how long before its expiry a cached token is
// replaced, at most: a token living less than two margins is replaced
// once half its lifetime has passed (refreshMargin).
const tokenRefreshMargin = time.Minute

// tokenFetchTimeout bounds one shared token fetch when the client's
// *http.Client sets no Timeout of its own.
const tokenFetchTimeout = 30 * time.Second

// ErrTokenRedirect is the cause of a token request answered with a
// redirect: token requests follow none, since a redirect could carry the
// client secret to another host or over plain http://. It comes wrapped in
// payonce.ErrInvalidConfig and is final.
var ErrTokenRedirect = errors.New("a55: token endpoint answered a redirect, which token requests never follow")

// Auth says how a Client authenticates: OAuth2 client credentials
// (ClientID, ClientSecret, TokenURL, Scopes) or a fixed AccessToken, which
// wins when set. Its printed forms never show the secret or the token.
// https://docs.a55.tech (Authentication)
type Auth struct {
	ClientID     string
	ClientSecret string
	// TokenURL is the OAuth2 token endpoint; "" means the environment's
	// (Environment.TokenURL). A base URL that is no environment's origin
	// needs it: NewClient never falls back to another environment's.
	TokenURL string
	// Scopes are the scopes a token request asks for. nil means the
	// environment's (Environment.Scope), or DefaultScope with a TokenURL
	// on a base URL of another origin; an empty non-nil slice asks for
	// none.
	Scopes []string
	// AccessToken is a fixed bearer token (A55_ACCESS_TOKEN). It cannot be
	// refreshed: a 401 is returned as payonce.ErrUnauthorized.
	AccessToken string
}

// ClientCredentials returns an Auth for the OAuth2 client-credentials grant
// against the token URL of the client's environment (WithEnvironment).
func ClientCredentials(clientID, clientSecret string) Auth {
	return Auth{ClientID: clientID, ClientSecret: clientSecret}
}

// AccessToken returns an Auth with a fixed bearer token.
func AccessToken(token string) Auth { return Auth{AccessToken: token} }

// AuthFromEnv reads A55_ACCESS_TOKEN, or else A55_CLIENT_ID,
// A55_CLIENT_SECRET and the optional A55_TOKEN_URL.
func AuthFromEnv() (Auth, error) {
	if t := os.Getenv(EnvAccessToken); t != "" {
		return AccessToken(t), nil
	}
	a := Auth{ClientID: os.Getenv(EnvClientID), ClientSecret: os.Getenv(EnvClientSecret), TokenURL: os.Getenv(EnvTokenURL)}
	if a.ClientID == "" || a.ClientSecret == "" {
		return Auth{}, fmt.Errorf("%w: a55: set %s, or %s and %s", payonce.ErrInvalidConfig, EnvAccessToken, EnvClientID, EnvClientSecret)
	}
	return a, nil
}

func (a Auth) validate() error {
	if a.AccessToken != "" {
		return nil
	}
	if a.ClientID == "" || a.ClientSecret == "" {
		return fmt.Errorf("%w: a55: need a client ID and secret, or an access token", payonce.ErrInvalidConfig)
	}
	return nil
}

// String hides the secret and the token.
func (a Auth) String() string {
	if a.AccessToken != "" {
		return "a55.Auth{AccessToken: [REDACTED]}"
	}
	tu := a.TokenURL
	if tu == "" {
		tu = "(the environment's)"
	}
	return fmt.Sprintf("a55.Auth{ClientID: %s, ClientSecret: [REDACTED], TokenURL: %s}", a.ClientID, tu)
}

// GoString hides the secret and the token.
func (a Auth) GoString() string { return a.String() }

// Format hides the secret and the token for every fmt verb (%d and %x
// would otherwise print the fields).
func (a Auth) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(a.String())) }

// LogValue hides the secret and the token in slog records.
func (a Auth) LogValue() slog.Value { return slog.StringValue(a.String()) }

// authorizer is the client's payonce.Signer: it sets "Authorization:
// Bearer <token>" on every attempt. With client credentials it caches the
// token and replaces it before it expires (refreshMargin). Concurrent
// callers share one fetch, which runs on a context of its own (detached
// from the caller that started it, with its own timeout), while each caller
// waits only as long as its own context allows. As a signer that recovers it
// drops the cached token after a 401, but only when it is the token the
// rejected attempt carried, so the core repeats the attempt once, with the
// same key, under a fresh token.
type authorizer struct {
	// fixed returns the fixed access token; nil with client credentials.
	// It is a closure because fmt prints a func as an address under every
	// verb: %s or %d of the core client, which holds the authorizer in an
	// unexported field out of reach of String and Format, would otherwise
	// print the token.
	fixed func() string
	// secrets adds a token fetched (unless "") to the values SecretValues
	// returns and returns them; a closure for the reason fixed is one.
	secrets func(add string) []string
	cfg     *clientcredentials.Config
	hc      *http.Client // token requests go through the client's own transport, following no redirect
	now     func() time.Time

	mu       sync.Mutex
	token    *oauth2.Token
	expiry   time.Time     // by z.now; zero when the endpoint gave no lifetime
	lifetime time.Duration // expires_in of the cached token
	inflight *tokenFetch   // the shared fetch under way, if any
}

// tokenFetch is one token request shared by every caller that needs a
// token while it runs; done is closed when tok or err is set.
type tokenFetch struct {
	done chan struct{}
	tok  *oauth2.Token
	err  error
}

func newAuthorizer(a Auth) *authorizer {
	if a.AccessToken != "" {
		tok := a.AccessToken
		return &authorizer{fixed: func() string { return tok }, now: time.Now, secrets: secretList(tok)}
	}
	// The token URL and scopes are the environment's unless a names them:
	// NewClient decides (resolveTokenURL) once it knows the base URL.
	z := &authorizer{now: time.Now, secrets: secretList(a.ClientSecret), cfg: &clientcredentials.Config{
		ClientID: a.ClientID, ClientSecret: a.ClientSecret, TokenURL: a.TokenURL, Scopes: a.Scopes,
		AuthStyle: oauth2.AuthStyleInParams,
	}}
	z.useHTTPClient(nil)
	return z
}

// resolveTokenURL sets the token URL and scopes of a client-credentials
// authorizer for a client of baseURL: a's own, else those of env when
// the base URL is env's origin (known). A base URL of another origin
// needs a.TokenURL: nothing falls back to the sandbox's token endpoint,
// where production credentials would be refused, or sandbox ones sent
// to the wrong host.
func (z *authorizer) resolveTokenURL(a Auth, env Environment, known bool, baseURL string) error {
	tu, scopes := a.TokenURL, a.Scopes
	switch {
	case tu == "" && !known:
		return fmt.Errorf("%w: a55: base URL %s is none of A55's environments (a55.Sandbox, a55.Production, a55.ProductionCoreManager): "+
			"set Auth.TokenURL to the token endpoint A55 gave with the credentials", payonce.ErrInvalidConfig, baseOrigin(baseURL))
	case tu == "":
		tu = env.TokenURL()
	}
	if scopes == nil {
		scopes = []string{DefaultScope}
		if known {
			scopes = env.scopes()
		}
	}
	if err := checkTokenURL(tu, baseURL); err != nil {
		return err
	}
	z.cfg.TokenURL, z.cfg.Scopes = tu, scopes
	return nil
}

// baseOrigin is a base URL's scheme, host and path for an error: never
// its user information or query.
func baseOrigin(baseURL string) string {
	u, err := url.Parse(baseURL)
	if err != nil {
		return "(unreadable)"
	}
	return u.Scheme + "://" + u.Host + u.Path
}

// useHTTPClient sends token requests through hc's transport, cookie jar and
// timeout, but never follows a redirect: the answer to a token request
// must come from the token URL itself.
func (z *authorizer) useHTTPClient(hc *http.Client) {
	if hc == nil {
		hc = http.DefaultClient
	}
	nc := *hc
	nc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	z.hc = &nc
}

// Sign implements payonce.Signer. A token fetch that failed for a reason
// that may pass (a 5xx or 429 from the token endpoint, a network failure
// or timeout, or this attempt's context ending while it waited) is marked
// payonce.ErrSignerTemporary: nothing was sent, so the core retries it
// within the operation's retry policy. Refused credentials stay
// payonce.ErrUnauthorized, final.
func (z *authorizer) Sign(req *http.Request, _ []byte) error {
	tok, err := z.Token(req.Context())
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("%w: a55: gave up waiting for an access token: %w", payonce.ErrSignerTemporary, err)
		}
		return err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	return nil
}

// Token returns a valid access token, fetching one when the cache is empty
// or the cached one is due for refresh. Callers arriving while a fetch
// runs share it; each leaves when its own ctx ends, without ending the
// fetch for the others.
func (z *authorizer) Token(ctx context.Context) (string, error) {
	if z.fixed != nil {
		return z.fixed(), nil
	}
	z.mu.Lock()
	if z.token != nil && z.freshLocked() {
		tok := z.token.AccessToken
		z.mu.Unlock()
		return tok, nil
	}
	f := z.inflight
	if f == nil {
		f = &tokenFetch{done: make(chan struct{})}
		z.inflight = f
		go z.fetch(context.WithoutCancel(ctx), f)
	}
	z.mu.Unlock()
	select {
	case <-f.done:
		if f.err != nil {
			return "", f.err
		}
		return f.tok.AccessToken, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// fetch runs one shared token request on a context detached from the
// caller that started it, bounded by the http.Client's Timeout (or
// tokenFetchTimeout), and hands its result to every waiter.
func (z *authorizer) fetch(ctx context.Context, f *tokenFetch) {
	timeout := z.hc.Timeout
	if timeout <= 0 {
		timeout = tokenFetchTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := z.now()
	t, err := z.cfg.Token(context.WithValue(ctx, oauth2.HTTPClient, z.hc))
	if err != nil {
		err = tokenError(err, z.cfg.ClientSecret)
	} else if t.AccessToken == "" {
		err = fmt.Errorf("%w: a55: the token endpoint answered without an access_token", payonce.ErrInvalidConfig)
	}
	z.mu.Lock()
	z.inflight = nil
	f.tok, f.err = t, err
	if err == nil {
		z.secrets(t.AccessToken)
		z.token, z.expiry, z.lifetime = t, time.Time{}, 0
		switch {
		case t.ExpiresIn > 0:
			z.lifetime = time.Duration(t.ExpiresIn) * time.Second
		case !t.Expiry.IsZero():
			z.lifetime = time.Until(t.Expiry)
		}
		if z.lifetime > 0 { // a lifetime not above zero is unknown: the token is used until a 401
			z.expiry = start.Add(z.lifetime)
		} else {
			z.lifetime = 0
		}
	}
	z.mu.Unlock()
	close(f.done) // after the unlock: a waiter may return and read z at once
}

// keptTokens is how many of the tokens it fetched the authorizer keeps
// among its SecretValues: the current one and those it replaced, which a
// server may still echo.
const keptTokens = 4

// secretList returns the closure of an authorizer's secrets: first, then
// the last keptTokens tokens added. Each addition replaces the slice, never
// changes it in place, so a caller may keep the one it got.
func secretList(first string) func(add string) []string {
	var mu sync.Mutex
	vals := []string{first}
	return func(add string) []string {
		mu.Lock()
		defer mu.Unlock()
		if add != "" {
			vals = append(append([]string{first}, vals[max(1, len(vals)-keptTokens+1):]...), add)
		}
		return vals
	}
}

// SecretValues implements redact.SecretHolder: the client secret (or the
// fixed access token) and the last access tokens fetched, which the core
// client cuts from every error text, journal row and log record, however
// a server quotes them.
func (z *authorizer) SecretValues() []string { return z.secrets("") }

// freshLocked reports whether the cached token may still be used: it has
// no known expiry, or more than refreshMargin of its life is left.
func (z *authorizer) freshLocked() bool {
	if z.expiry.IsZero() {
		return true
	}
	return z.now().Add(refreshMargin(z.lifetime)).Before(z.expiry)
}

// refreshMargin is how long before its expiry a token of the given
// lifetime is replaced: a minute, or half the lifetime when that is
// shorter, so a token valid for 60 s or less is not fetched anew on every
// call.
func refreshMargin(lifetime time.Duration) time.Duration {
	return max(min(tokenRefreshMargin, lifetime/2), 0)
}

// Recover mends a rejection (see payonce.Signer): after a 401 it asks the core to
// repeat the attempt (same key, same body) under a fresh token. The cached
// token is dropped only when it is the one the rejected attempt carried
// (or when that is unknown): a late 401 for an old token must not throw
// away the one a concurrent caller has just fetched.
func (z *authorizer) Recover(ctx context.Context, _ http.Header, err *payonce.APIError) bool {
	if z.fixed != nil || !errors.Is(err, payonce.ErrUnauthorized) {
		return false
	}
	sent, known := corekit.RejectedRequest(ctx)
	z.mu.Lock()
	if z.token != nil {
		used := ""
		if known {
			used = strings.TrimPrefix(sent.Header.Get("Authorization"), "Bearer ")
		}
		if !known || subtle.ConstantTimeCompare([]byte(used), []byte(z.token.AccessToken)) == 1 {
			z.token = nil
		}
	}
	z.mu.Unlock()
	return true
}

// String hides the secret and the token.
func (z *authorizer) String() string {
	if z.fixed != nil {
		return "a55.authorizer{token: [REDACTED]}"
	}
	return "a55.authorizer{clientID: " + z.cfg.ClientID + ", secret: [REDACTED], token: [REDACTED]}"
}

// GoString hides the secret and the token.
func (z *authorizer) GoString() string { return z.String() }

// Format hides the secret and the token for every verb.
func (z *authorizer) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(z.String())) }

// LogValue hides the secret and the token in slog records.
func (z *authorizer) LogValue() slog.Value { return slog.StringValue(z.String()) }

// tokenError keeps the token endpoint's status and error code and drops
// everything else: a *url.Error would name the token URL, and the
// endpoint's body is not ours to log; the client secret never stays in
// its text, even echoed bare. Refused credentials (400, 401, 403)
// are payonce.ErrUnauthorized; a redirect is ErrTokenRedirect; a 5xx, a
// 429, a network failure or a timeout may pass and is
// payonce.ErrSignerTemporary; anything else is payonce.ErrInvalidConfig.
func tokenError(err error, secret string) error {
	// What the endpoint sent goes through redact.String, and the client
	// secret is cut wherever it stands, in any letter case: an endpoint
	// may echo it bare.
	redact := func(s string) string { return redact.Without(s, secret) }
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		status := 0
		if re.Response != nil {
			status = re.Response.StatusCode
		}
		msg := fmt.Sprintf("a55: the token endpoint refused the request (HTTP %d", status)
		if re.ErrorCode != "" {
			msg += " " + redact(re.ErrorCode)
		}
		msg += ")"
		switch {
		case status == http.StatusUnauthorized || status == http.StatusBadRequest || status == http.StatusForbidden:
			return fmt.Errorf("%s: %w", msg, payonce.ErrUnauthorized)
		case status >= 300 && status < 400:
			return fmt.Errorf("%w: %w (HTTP %d)", payonce.ErrInvalidConfig, ErrTokenRedirect, status)
		case status == http.StatusTooManyRequests || status >= 500:
			return fmt.Errorf("%w: %s", payonce.ErrSignerTemporary, msg)
		}
		return fmt.Errorf("%w: %s", payonce.ErrInvalidConfig, msg)
	}
	var ue *url.Error
	if errors.As(err, &ue) || errors.Is(err, context.DeadlineExceeded) {
		cause := err
		if ue != nil {
			cause = ue.Err // the *url.Error's text names the token URL
		}
		return fmt.Errorf("%w: a55: the token endpoint could not be reached: %s", payonce.ErrSignerTemporary,
			redact(cause.Error()))
	}
	// The answer could not be read as a token (not JSON, no access_token):
	// the token URL points at something that is not a token endpoint.
	s := err.Error()
	if i := strings.Index(s, "://"); i >= 0 {
		if j := strings.LastIndex(s, "\": "); j > i {
			s = s[j+3:]
		}
	}
	return fmt.Errorf("%w: a55: the token endpoint answered no usable token: %s", payonce.ErrInvalidConfig, redact(s))
}
