package a55

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
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
// replaced.
const tokenRefreshMargin = time.Minute

// Auth says how a Client authenticates: OAuth2 client credentials
// (ClientID, ClientSecret, TokenURL, Scopes) or a fixed AccessToken, which
// wins when set. Its printed forms never show the secret or the token.
// https://docs.a55.tech (Authentication)
type Auth struct {
	ClientID     string
	ClientSecret string
	// TokenURL is the OAuth2 token endpoint; "" means SandboxTokenURL,
	// which NewClient refuses together with the production base URL.
	TokenURL string
	// Scopes default to DefaultScope.
	Scopes []string
	// AccessToken is a fixed bearer token (A55_ACCESS_TOKEN). It cannot be
	// refreshed: a 401 is returned as payonce.ErrUnauthorized.
	AccessToken string
}

// ClientCredentials returns an Auth for the OAuth2 client-credentials grant
// against the sandbox token URL; set TokenURL for another environment.
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
		tu = SandboxTokenURL
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
// token, replaces it a minute before it expires and, as a
// payonce.Recoverer, drops it after a 401 so the core repeats the attempt
// once, with the same key, under a fresh token.
type authorizer struct {
	// fixed returns the fixed access token; nil with client credentials.
	// It is a closure because fmt prints a func as an address under every
	// verb: %s or %d of the core client, which holds the authorizer in an
	// unexported field out of reach of String and Format, would otherwise
	// print the token.
	fixed func() string
	cfg   *clientcredentials.Config
	hc    *http.Client // token requests go through the client's own *http.Client
	now   func() time.Time

	mu    sync.Mutex
	token *oauth2.Token
}

func newAuthorizer(a Auth) *authorizer {
	if a.AccessToken != "" {
		tok := a.AccessToken
		return &authorizer{fixed: func() string { return tok }, now: time.Now}
	}
	scopes := a.Scopes
	if len(scopes) == 0 {
		scopes = []string{DefaultScope}
	}
	tu := a.TokenURL
	if tu == "" {
		tu = SandboxTokenURL
	}
	return &authorizer{now: time.Now, cfg: &clientcredentials.Config{
		ClientID: a.ClientID, ClientSecret: a.ClientSecret, TokenURL: tu, Scopes: scopes,
		AuthStyle: oauth2.AuthStyleInParams,
	}}
}

// Sign implements payonce.Signer.
func (z *authorizer) Sign(req *http.Request, _ []byte) error {
	tok, err := z.Token(req.Context())
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	return nil
}

// Token returns a valid access token, fetching one when the cache is empty
// or the cached one expires within a minute.
func (z *authorizer) Token(ctx context.Context) (string, error) {
	if z.fixed != nil {
		return z.fixed(), nil
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.token != nil && z.fresh(z.token) {
		return z.token.AccessToken, nil
	}
	hc := z.hc
	if hc == nil {
		hc = http.DefaultClient
	}
	t, err := z.cfg.Token(context.WithValue(ctx, oauth2.HTTPClient, hc))
	if err != nil {
		return "", tokenError(err)
	}
	if t.AccessToken == "" {
		return "", errors.New("a55: token endpoint answered no access_token")
	}
	z.token = t
	return t.AccessToken, nil
}

func (z *authorizer) fresh(t *oauth2.Token) bool {
	return t.Expiry.IsZero() || z.now().Add(tokenRefreshMargin).Before(t.Expiry)
}

// Recover implements payonce.Recoverer: after a 401 it drops the cached
// token and asks the core to repeat the attempt (same key, same body).
func (z *authorizer) Recover(_ context.Context, _ http.Header, err *payonce.APIError) bool {
	if z.fixed != nil || !errors.Is(err, payonce.ErrUnauthorized) {
		return false
	}
	z.mu.Lock()
	z.token = nil
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
// endpoint's body is not ours to log.
func tokenError(err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		status := 0
		if re.Response != nil {
			status = re.Response.StatusCode
		}
		msg := fmt.Sprintf("a55: token request refused (HTTP %d", status)
		if re.ErrorCode != "" {
			msg += " " + re.ErrorCode
		}
		msg += ")"
		if status == http.StatusUnauthorized || status == http.StatusBadRequest || status == http.StatusForbidden {
			return fmt.Errorf("%s: %w", msg, payonce.ErrUnauthorized)
		}
		return errors.New(msg)
	}
	s := err.Error()
	if i := strings.Index(s, "://"); i >= 0 {
		// "oauth2: cannot fetch token: Post \"https://...\": dial tcp ..."
		if j := strings.LastIndex(s, "\": "); j > i {
			s = s[j+3:]
		}
	}
	return fmt.Errorf("a55: token request failed: %s", payonce.RedactString(s))
}
