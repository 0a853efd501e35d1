package a55fake

import (
	"crypto/subtle"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/payonce/payonce/internal/fake/fakeserver"
)

type token struct {
	clientID string
	expires  time.Time
}

// oauthError answers in the RFC 6749 token-endpoint shape, which OAuth2
// client libraries (golang.org/x/oauth2) parse.
func (f *Fake) oauthError(status int, code, desc string) fakeserver.Response {
	return fakeserver.JSON(status, map[string]string{"error": code, "error_description": desc})
}

// token serves POST /oauth2/token (client credentials; client id and
// secret in the form body or in HTTP Basic auth).
func (f *Fake) token(r *fakeserver.Request) fakeserver.Response {
	form, err := url.ParseQuery(string(r.Body))
	if err != nil {
		return f.oauthError(http.StatusBadRequest, "invalid_request", "malformed form body")
	}
	if gt := form.Get("grant_type"); gt != "client_credentials" {
		return f.oauthError(http.StatusBadRequest, "unsupported_grant_type", "grant_type must be client_credentials")
	}
	id, secret := form.Get("client_id"), form.Get("client_secret")
	if u, p, ok := r.HTTP.BasicAuth(); ok {
		// RFC 6749 §2.3.1: both are form-urlencoded before Basic encoding.
		if v, err := url.QueryUnescape(u); err == nil {
			u = v
		}
		if v, err := url.QueryUnescape(p); err == nil {
			p = v
		}
		id, secret = u, p
	}
	want, known := f.cfg.Clients[id]
	principal := id
	if !known {
		// A wallet's credentials (create_credentials): tokens of the
		// client that created the wallet.
		f.tokMu.RLock()
		wc, ok := f.walletCreds[id]
		f.tokMu.RUnlock()
		want, known, principal = wc.secret, ok, wc.owner
	}
	if id == "" || !known || subtle.ConstantTimeCompare([]byte(want), []byte(secret)) != 1 {
		return f.oauthError(http.StatusUnauthorized, "invalid_client", "unknown client or wrong secret")
	}
	r.Credential = principal
	r.Attempt.Credential = fakeserver.Clip(principal)
	tok := f.IssueToken(principal)
	// The authentication page's three names, and no other: a scope
	// asked for is taken, not echoed.
	return fakeserver.JSON(http.StatusOK, map[string]any{
		"access_token": tok,
		"expires_in":   int(math.Round(f.cfg.TokenLifetime.Seconds())),
		"token_type":   "Bearer",
	})
}

// IssueToken returns a new access token for clientID, valid for the token
// lifetime on the fake clock.
func (f *Fake) IssueToken(clientID string) string {
	tok := f.e.NewID("a55tok_")
	now := f.e.Clock().Now()
	f.tokMu.Lock()
	defer f.tokMu.Unlock()
	if now.Sub(f.lastSweep) > f.cfg.TokenLifetime/10 || now.Before(f.lastSweep) {
		for k, t := range f.tokens {
			if !now.Before(t.expires) {
				delete(f.tokens, k)
			}
		}
		f.lastSweep = now
	}
	f.tokens[tok] = token{clientID: clientID, expires: now.Add(f.cfg.TokenLifetime)}
	return tok
}

// TokenCount returns how many tokens the fake remembers (for sweep tests).
func (f *Fake) TokenCount() int {
	f.tokMu.RLock()
	defer f.tokMu.RUnlock()
	return len(f.tokens)
}

// SetRateLimit sets the per-client limit: n requests per rolling window;
// n <= 0 turns rate limiting off.
func (f *Fake) SetRateLimit(n int, window time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if window <= 0 {
		window = time.Minute
	}
	f.rateLimit, f.rateWindow = n, window
	f.rateOn.Store(n > 0)
	f.hits = make(map[string][]time.Time)
}

// Authenticate implements fakeserver.Backend: a valid bearer token, then
// the rate limit of its client.
func (f *Fake) Authenticate(r *fakeserver.Request) *fakeserver.Response {
	auth := r.HTTP.Header.Get("Authorization")
	scheme, tok, _ := strings.Cut(auth, " ")
	if auth == "" {
		resp := f.generalError(http.StatusUnauthorized, "UNAUTHORIZED", "missing bearer token", nil)
		resp.Header.Set("WWW-Authenticate", `Bearer realm="a55"`)
		return &resp
	}
	now := f.e.Clock().Now()
	f.tokMu.RLock()
	t, ok := f.tokens[strings.TrimSpace(tok)]
	f.tokMu.RUnlock()
	if !strings.EqualFold(scheme, "Bearer") || !ok || !now.Before(t.expires) {
		resp := f.generalError(http.StatusUnauthorized, "INVALID_TOKEN", "invalid or expired bearer token", nil)
		resp.Header.Set("WWW-Authenticate", `Bearer realm="a55", error="invalid_token"`)
		return &resp
	}
	r.Credential = t.clientID
	if wait, limited := f.hit(t.clientID, now); limited {
		resp := f.generalError(http.StatusTooManyRequests, "RATE_LIMIT_EXCEEDED",
			"rate limit of "+strconv.Itoa(f.limit())+" requests exceeded", nil)
		resp.Header.Set("Retry-After", strconv.Itoa(wait))
		return &resp
	}
	return nil
}

func (f *Fake) limit() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.rateLimit
}

// hit counts a request of client at now; when over the limit it returns
// the seconds until a slot frees.
func (f *Fake) hit(client string, now time.Time) (retryAfter int, limited bool) {
	if !f.rateOn.Load() {
		return 0, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.rateLimit <= 0 {
		return 0, false
	}
	hs := prune(f.hits[client], now, f.rateWindow)
	if len(hs) >= f.rateLimit {
		f.hits[client] = hs
		wait := hs[0].Add(f.rateWindow).Sub(now)
		secs := int(math.Ceil(wait.Seconds()))
		if secs < 1 {
			secs = 1
		}
		return secs, true
	}
	f.hits[client] = append(hs, now)
	return 0, false
}

// prune keeps the hits within the window before now; hits after now (the
// clock was moved back) are dropped, or they would hold the limit for as
// long as the clock was moved.
func prune(hs []time.Time, now time.Time, window time.Duration) []time.Time {
	i := 0
	for i < len(hs) && !hs[i].After(now.Add(-window)) {
		i++
	}
	j := len(hs)
	for j > i && hs[j-1].After(now) {
		j--
	}
	return hs[i:j]
}

// rateState returns the X-RateLimit-* values of client.
func (f *Fake) rateState(client string) (limit, remaining int, reset time.Time, on bool) {
	if !f.rateOn.Load() {
		return 0, 0, time.Time{}, false
	}
	now := f.e.Clock().Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.rateLimit <= 0 {
		return 0, 0, time.Time{}, false
	}
	hs := prune(f.hits[client], now, f.rateWindow)
	remaining = f.rateLimit - len(hs)
	if remaining < 0 {
		remaining = 0
	}
	reset = now.Add(f.rateWindow)
	if len(hs) > 0 {
		reset = hs[0].Add(f.rateWindow)
	}
	return f.rateLimit, remaining, reset, true
}

// TokenLifetime returns how long issued tokens live.
func (f *Fake) TokenLifetime() time.Duration { return f.cfg.TokenLifetime }
