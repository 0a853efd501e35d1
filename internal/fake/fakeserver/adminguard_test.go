package fakeserver

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func guardedServer(t *testing.T, cfg AdminConfig) (*Engine, *httptest.Server) {
	t.Helper()
	e := New(Options{})
	srv := httptest.NewServer(WithAdmin(e.AdminHandler(cfg), e.Handler(ProviderConfig{Name: "test"}, testBackend{e})))
	t.Cleanup(srv.Close)
	return e, srv
}

func call(t *testing.T, method, url string, hdr http.Header) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	require.NoError(t, err)
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v[0]
			continue
		}
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestAdminGuardHostTokenAndCrossSite(t *testing.T) {
	const tok = "tok-123"
	e, srv := guardedServer(t, AdminConfig{Token: tok})
	bearer := http.Header{"Authorization": {"Bearer " + tok}}

	// The provider API is not the admin API: no token needed there.
	status, _ := do(t, http.MethodPost, srv.URL+"/op", "k1", "")
	assert.Equal(t, http.StatusOK, status)

	assert.Equal(t, http.StatusUnauthorized, call(t, "GET", srv.URL+"/_fakepay/stats", nil).StatusCode)
	assert.Equal(t, http.StatusUnauthorized, call(t, "GET", srv.URL+"/_fakepay/stats", http.Header{"Authorization": {"Bearer tok-12"}}).StatusCode)
	assert.Equal(t, http.StatusUnauthorized, call(t, "GET", srv.URL+"/_fakepay/stats", http.Header{"Authorization": {"Basic " + tok}}).StatusCode)
	assert.Equal(t, http.StatusOK, call(t, "GET", srv.URL+"/_fakepay/stats", bearer).StatusCode)

	// Even with the token, a browser on another site cannot change state.
	cross := http.Header{"Authorization": {"Bearer " + tok}, "Origin": {"https://evil.example"}, "Sec-Fetch-Site": {"cross-site"}}
	assert.Equal(t, http.StatusForbidden, call(t, "POST", srv.URL+"/_fakepay/reset", cross).StatusCode)
	assert.Equal(t, 1, e.Ledger().Len(), "a refused reset emptied the ledger")
	assert.Equal(t, http.StatusForbidden, call(t, "GET", srv.URL+"/_fakepay/stats",
		http.Header{"Authorization": {"Bearer " + tok}, "Host": {"fakepay.evil.example"}}).StatusCode)
	assert.Equal(t, http.StatusOK, call(t, "GET", srv.URL+"/_fakepay/stats",
		http.Header{"Authorization": {"Bearer " + tok}, "Host": {"localhost:1"}}).StatusCode)
	assert.Equal(t, http.StatusOK, call(t, "POST", srv.URL+"/_fakepay/reset", bearer).StatusCode, "no browser: token only")
	assert.Zero(t, e.Ledger().Len())
}

func TestAdminGuardAllowRemoteAcceptsAnyHost(t *testing.T) {
	_, srv := guardedServer(t, AdminConfig{Token: "t", AllowRemote: true})
	assert.Equal(t, http.StatusOK, call(t, "GET", srv.URL+"/_fakepay/stats",
		http.Header{"Authorization": {"Bearer t"}, "Host": {"fakepay.internal:8080"}}).StatusCode)
}

func TestCSRFTokensAreBoundToTheServer(t *testing.T) {
	g1 := newAdminGuard("", false, nil)
	g2 := newAdminGuard("", false, nil)
	a, b := g1.csrfToken(), g1.csrfToken()
	assert.NotEqual(t, a, b, "one token per page")
	assert.True(t, g1.validCSRF(a))
	assert.True(t, g1.validCSRF(b))
	assert.False(t, g2.validCSRF(a), "another server's token")
	assert.False(t, g1.validCSRF(""))
	assert.False(t, g1.validCSRF(a[:len(a)-2]+"AA"))
	assert.False(t, g1.validCSRF(strings.Repeat("A", 500)))
}

func TestConsolePageHeadersAndEscaping(t *testing.T) {
	_, srv := guardedServer(t, AdminConfig{})
	resp := call(t, "GET", srv.URL+"/_fakepay/", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	csp := resp.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"} {
		assert.Contains(t, csp, want)
	}
	assert.NotContains(t, csp, "unsafe-inline")
	assert.NotContains(t, csp, "unsafe-eval")
	assert.Equal(t, "nosniff", resp.Header.Get("X-Content-Type-Options"))
	assert.Equal(t, "no-store", resp.Header.Get("Cache-Control"))
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	html := string(body)
	assert.Regexp(t, regexp.MustCompile(`<script src="/_fakepay/console/console.js" defer></script>`), html)
	assert.Equal(t, 1, strings.Count(html, "<script"), "no inline script")
	assert.NotContains(t, html, "http://", "no other origin")
	assert.NotContains(t, html, "https://", "no other origin")

	for path, ctype := range map[string]string{"/_fakepay/console/console.js": "text/javascript", "/_fakepay/console/console.css": "text/css"} {
		r := call(t, "GET", srv.URL+path, nil)
		assert.Equal(t, http.StatusOK, r.StatusCode, path)
		assert.Contains(t, r.Header.Get("Content-Type"), ctype, path)
	}
	js, err := consoleAssets.ReadFile("console/console.js")
	require.NoError(t, err)
	for _, banned := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"} {
		assert.NotContains(t, string(js), banned, "the script renders text only")
	}
	assert.Equal(t, http.StatusMethodNotAllowed, call(t, "POST", srv.URL+"/_fakepay/", nil).StatusCode)
}

func TestEveryAdminAnswerCarriesTheConsolePolicy(t *testing.T) {
	_, srv := guardedServer(t, AdminConfig{Token: "tok"})
	bearer := http.Header{"Authorization": {"Bearer tok"}}
	for _, c := range []struct {
		method, path string
		hdr          http.Header
	}{
		{"GET", "/_fakepay/stats", nil},                                                                              // 401
		{"GET", "/_fakepay/stats", http.Header{"Host": {"evil.example"}}},                                            // 403 host
		{"POST", "/_fakepay/reset", http.Header{"Authorization": {"Bearer tok"}, "Sec-Fetch-Site": {"cross-site"}}},  // 403 cross-site
		{"POST", "/_fakepay/reset", http.Header{"Authorization": {"Bearer tok"}, "Sec-Fetch-Site": {"same-origin"}}}, // 403 csrf
		{"GET", "/_fakepay/stats", bearer},
		{"GET", "/_fakepay/operations?limit=x", bearer},
		{"GET", "/_fakepay/operations/1", bearer},
		{"GET", "/_fakepay/nope", bearer},
		{"PUT", "/_fakepay/reset", bearer},
		{"HEAD", "/_fakepay/", bearer},
		{"POST", "/_fakepay/release", bearer},
	} {
		resp := call(t, c.method, srv.URL+c.path, c.hdr)
		what := c.method + " " + c.path + " " + resp.Status
		assert.Equal(t, consoleCSP, resp.Header.Get("Content-Security-Policy"), what)
		assert.Equal(t, "nosniff", resp.Header.Get("X-Content-Type-Options"), what)
		assert.Equal(t, "same-origin", resp.Header.Get("Cross-Origin-Resource-Policy"), what)
	}
}

func TestLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1:8080": true, "127.1.2.3": true, "[::1]:9": true, "[::1]": true, "localhost:80": true, "LOCALHOST.": true,
		"app.localhost:3000": true, "App.LocalHost.:1": true, "": true, "[::ffff:127.0.0.1]:80": true, "127.0.0.1.": true,
		"0.0.0.0:8080": false, "[::]:8080": false, "10.0.0.5:8080": false, "evil.example": false, "evil.example:80": false,
		"localhost.evil.example": false, "127.0.0.1.nip.io": false, "[::ffff:10.0.0.1]:80": false, "localhostx": false,
		"xlocalhost": false, "0x7f.0.0.1": false, "2130706433": false, "[fe80::1]:80": false,
	} {
		assert.Equal(t, want, loopbackHost(host), host)
	}
}
