package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce/internal/fake/fakeserver"
)

// startResult runs fakepay with args and returns its first line of output
// once it listens, or the error run returned before listening.
func startResult(t *testing.T, args ...string) (line string, err error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	_, out, errc, err := startRun(ctx, args...)
	if err != nil {
		return "", err
	}
	t.Cleanup(func() { cancel(); <-errc })
	return out.firstLine(), nil
}

func TestNonLoopbackAddrRefusedWithoutAllowRemote(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0"} {
		line, err := startResult(t, "-addr", addr)
		require.Error(t, err, "%s listened: %s", addr, line)
		assert.Contains(t, err.Error(), "-allow-remote", addr)
	}
	_, err := parseFlags([]string{"-addr", "0.0.0.0:0", "-allow-remote"}, io.Discard)
	require.Error(t, err, "-allow-remote without a token")
	assert.Contains(t, err.Error(), fakeserver.AdminTokenEnv)
	_, err = parseFlags([]string{"-addr", "localhost:0"}, io.Discard)
	assert.NoError(t, err)
}

// loopbackBase turns "http://[::]:PORT" into "http://127.0.0.1:PORT".
func loopbackBase(t *testing.T, line string) string {
	t.Helper()
	u, err := url.Parse(strings.TrimSpace(strings.TrimPrefix(line, "fakepay listening on ")))
	require.NoError(t, err)
	return "http://" + net.JoinHostPort("127.0.0.1", u.Port())
}

func adminCall(t *testing.T, method, url string, hdr map[string]string) (int, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	require.NoError(t, err)
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header
}

func TestAllowRemoteRequiresTheAdminTokenEverywhere(t *testing.T) {
	const tok = "s3cr3t-admin-token"
	t.Setenv(fakeserver.AdminTokenEnv, tok) // the environment variable is the token's other source
	line, err := startResult(t, "-addr", "0.0.0.0:0", "-allow-remote")
	require.NoError(t, err)
	base := loopbackBase(t, line)
	paths := []struct{ method, path string }{
		{"GET", "/_fakepay/ledger"}, {"GET", "/_fakepay/requests"}, {"GET", "/_fakepay/stats"},
		{"GET", "/_fakepay/faults"}, {"DELETE", "/_fakepay/faults"}, {"GET", "/_fakepay/clock"},
		{"POST", "/_fakepay/clock"}, {"POST", "/_fakepay/balance"}, {"POST", "/_fakepay/reset"},
		{"GET", "/_fakepay/a55/webhooks"}, {"POST", "/_fakepay/a55/webhooks/resend"},
		{"GET", "/_fakepay/operations"}, {"GET", "/_fakepay/"}, {"GET", "/_fakepay/console/console.js"},
	}
	for _, p := range paths {
		for _, hdr := range []map[string]string{nil, {"Authorization": "Bearer wrong"}, {"Authorization": "Bearer " + tok + "x"}} {
			status, h := adminCall(t, p.method, base+p.path, hdr)
			assert.Equal(t, http.StatusUnauthorized, status, "%s %s %v", p.method, p.path, hdr)
			assert.Contains(t, h.Get("WWW-Authenticate"), "Basic", p.path)
		}
	}
	status, _ := adminCall(t, "GET", base+"/_fakepay/ledger", map[string]string{"Authorization": "Bearer " + tok})
	assert.Equal(t, http.StatusOK, status)
	status, _ = adminCall(t, "POST", base+"/_fakepay/reset", map[string]string{"Authorization": "Bearer " + tok})
	assert.Equal(t, http.StatusOK, status)
	req, err := http.NewRequest("GET", base+"/_fakepay/", nil)
	require.NoError(t, err)
	req.SetBasicAuth("anyone", tok) // what a browser sends after its prompt
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	// The API itself stays open: only the admin tree is guarded.
	status, _ = adminCall(t, "GET", base+"/api/v1/openapi/card/list", nil)
	assert.Equal(t, http.StatusUnauthorized, status) // the Coinepay signature check, not the admin token
}

func TestCrossSiteRequestCannotResetTheFake(t *testing.T) {
	base := start(t)
	status, _ := adminCall(t, "POST", base+"/_fakepay/faults", nil)
	require.Equal(t, http.StatusBadRequest, status) // no body: a rule is needed
	resp, err := http.Post(base+"/_fakepay/faults", "application/json", strings.NewReader(`{"fault":"hang","path":"/never"}`))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode)

	// What a page on another site makes a browser send: a simple POST
	// (no preflight) with its Origin and Sec-Fetch-Site.
	for _, hdr := range []map[string]string{
		{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site", "Content-Type": "text/plain"},
		{"Origin": "https://evil.example"},
		{"Sec-Fetch-Site": "same-site"},
		{"Origin": "null"},
	} {
		for _, p := range []struct{ method, path string }{{"POST", "/_fakepay/reset"}, {"DELETE", "/_fakepay/faults"}, {"POST", "/_fakepay/clock"}} {
			status, _ := adminCall(t, p.method, base+p.path, hdr)
			assert.Equal(t, http.StatusForbidden, status, "%s %s %v", p.method, p.path, hdr)
		}
	}
	// A same-origin browser request without the console page's token.
	status, _ = adminCall(t, "POST", base+"/_fakepay/reset", map[string]string{"Origin": base, "Sec-Fetch-Site": "same-origin"})
	assert.Equal(t, http.StatusForbidden, status)
	status, _ = adminCall(t, "POST", base+"/_fakepay/reset", map[string]string{"Sec-Fetch-Site": "same-origin", fakeserver.HeaderCSRF: "forged"})
	assert.Equal(t, http.StatusForbidden, status)
	// A page on another site whose name was rebound to 127.0.0.1.
	status, _ = adminCall(t, "GET", base+"/_fakepay/ledger", map[string]string{"Host": "evil.example"})
	assert.Equal(t, http.StatusForbidden, status)

	var faults struct{ Rules []any }
	getJSON(t, base, "/_fakepay/faults", &faults)
	assert.Len(t, faults.Rules, 1, "a refused request changed state")

	// The console's own page token lets its controls through.
	page, err := http.Get(base + "/_fakepay/")
	require.NoError(t, err)
	html, _ := io.ReadAll(page.Body)
	page.Body.Close()
	m := regexp.MustCompile(`name="fakepay-csrf" content="([^"]+)"`).FindSubmatch(html)
	require.NotNil(t, m)
	status, _ = adminCall(t, "DELETE", base+"/_fakepay/faults", map[string]string{"Origin": base, "Sec-Fetch-Site": "same-origin", fakeserver.HeaderCSRF: string(m[1])})
	assert.Equal(t, http.StatusOK, status)
	getJSON(t, base, "/_fakepay/faults", &faults)
	assert.Empty(t, faults.Rules)
}

func TestAddrWithoutPortIsNamedAsSuch(t *testing.T) {
	for _, addr := range []string{"127.0.0.1", "localhost", "[::1]", "::1"} {
		_, err := parseFlags([]string{"-addr", addr}, io.Discard)
		require.Error(t, err, addr)
		assert.Contains(t, err.Error(), "host:port", addr)
		assert.NotContains(t, err.Error(), "other machines", "%s is loopback, only its port is missing", addr)
	}
}
