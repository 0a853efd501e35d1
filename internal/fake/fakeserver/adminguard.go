package fakeserver

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// Headers and names of the admin API's access rules.
const (
	// HeaderCSRF carries the per-page token a console page was served
	// with; a state-changing admin call made from a browser needs it.
	HeaderCSRF = "X-Fakepay-Csrf"
	// AdminTokenEnv is the environment variable cmd/fakepay reads the
	// admin token from when -admin-token is not given.
	AdminTokenEnv = "FAKEPAY_ADMIN_TOKEN"
)

// adminGuard enforces who may use the admin API and the console:
//
//   - Host: unless remote access is allowed, the Host header must name a
//     loopback address or localhost, so a page on another site that
//     rebinds its DNS name to 127.0.0.1 reaches nothing.
//   - Token: when set, every admin request carries it, as
//     "Authorization: Bearer <token>" or as the password of HTTP Basic
//     authentication (what a browser prompts for), compared in constant
//     time.
//   - Cross-site requests: a state-changing call (any method but GET, HEAD
//     and OPTIONS) that a browser marks as coming from another origin
//     (Sec-Fetch-Site, Origin) is refused, and one a browser sends from
//     this origin must carry a console page's CSRF token. Clients that
//     are no browser (curl, test code) send neither header and need none.
type adminGuard struct {
	tokenSum    [32]byte // sha256 of the token, when hasToken
	hasToken    bool
	allowRemote bool
	csrfKey     []byte
	origin      *http.CrossOriginProtection
	next        http.Handler
}

func newAdminGuard(token string, allowRemote bool, next http.Handler) *adminGuard {
	g := &adminGuard{allowRemote: allowRemote, csrfKey: make([]byte, 32), origin: http.NewCrossOriginProtection(), next: next}
	_, _ = rand.Read(g.csrfKey) // crypto/rand.Read never fails
	if token != "" {
		g.hasToken, g.tokenSum = true, sha256.Sum256([]byte(token))
	}
	return g
}

func (g *adminGuard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Every answer under the admin prefix, a refusal or JSON too, carries
	// the console's browser policy: nothing there is ever rendered or
	// embedded by another origin.
	securityHeaders(w.Header())
	if !g.allowRemote && !loopbackHost(r.Host) {
		writeAdmin(w, adminError(http.StatusForbidden, "forbidden_host",
			"the admin API answers only requests addressed to localhost or a loopback address"))
		return
	}
	if g.hasToken && !g.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Basic realm="fakepay admin", charset="UTF-8"`)
		writeAdmin(w, adminError(http.StatusUnauthorized, "unauthorized",
			"admin token required: Authorization: Bearer <token> (or as the Basic password)"))
		return
	}
	if !safeMethod(r.Method) {
		if err := g.origin.Check(r); err != nil {
			writeAdmin(w, adminError(http.StatusForbidden, "cross_origin", "cross-origin admin requests are refused"))
			return
		}
		if fromBrowser(r) && !g.validCSRF(r.Header.Get(HeaderCSRF)) {
			writeAdmin(w, adminError(http.StatusForbidden, "csrf_token",
				"a browser's admin call needs the console page's "+HeaderCSRF+" header"))
			return
		}
	}
	g.next.ServeHTTP(w, withGuard(r, g))
}

// loopbackHost reports whether a Host header names this machine only:
// localhost or a name under .localhost (any case, with or without a final
// dot), or a loopback IP (an IPv4-mapped one too), with or without a
// port. An empty Host (HTTP/1.0) is accepted: browsers always send one.
// The fake keeps its own check rather than the SDK's, as it keeps its own
// everything.
func loopbackHost(hostport string) bool {
	if hostport == "" {
		return true
	}
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// authorized reports whether r carries the admin token.
func (g *adminGuard) authorized(r *http.Request) bool {
	var got string
	if bearer, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		got = bearer
	} else if _, pass, ok := r.BasicAuth(); ok {
		got = pass
	} else {
		return false
	}
	// Comparing digests keeps the time independent of the token's length.
	sum := sha256.Sum256([]byte(got))
	return subtle.ConstantTimeCompare(sum[:], g.tokenSum[:]) == 1
}

// csrfToken returns a fresh token for one console page: a random nonce
// and its HMAC under the guard's key, so no table of tokens grows.
func (g *adminGuard) csrfToken() string {
	nonce := make([]byte, 16)
	_, _ = rand.Read(nonce)
	m := hmac.New(sha256.New, g.csrfKey)
	m.Write(nonce)
	return base64.RawURLEncoding.EncodeToString(append(nonce, m.Sum(nil)...))
}

func (g *adminGuard) validCSRF(tok string) bool {
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil || len(b) != 16+sha256.Size {
		return false
	}
	m := hmac.New(sha256.New, g.csrfKey)
	m.Write(b[:16])
	return hmac.Equal(m.Sum(nil), b[16:])
}

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// fromBrowser reports whether a browser sent r: browsers add Origin to
// every state-changing request and Sec-Fetch-Site to every request.
func fromBrowser(r *http.Request) bool {
	return r.Header.Get("Sec-Fetch-Site") != "" || r.Header.Get("Origin") != ""
}

// writeAdmin sends an admin answer built outside adminHandler.
func writeAdmin(w http.ResponseWriter, resp Response) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(resp.Status)
	_, _ = w.Write(resp.Body)
}
