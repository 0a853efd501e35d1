package a55

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
)

// The environments are A55's three pairs of API and token URL, with the
// scope each page sends.
func TestEnvironmentPresets(t *testing.T) {
	assert.Equal(t, []Environment{Sandbox, Production, ProductionCoreManager}, Environments())
	for _, tc := range []struct {
		env                Environment
		base, token, scope string
	}{
		{Sandbox, "https://sandbox.api.a55.tech", "https://auth.sandbox.a55.tech/oauth2/token", "api/readwrite"},
		{Production, "https://api.a55.tech", "https://auth.a55.tech/oauth2/token", "api/readwrite"},
		{ProductionCoreManager, "https://core-manager.a55.tech", "https://smart-capital.auth.us-east-1.amazoncognito.com/oauth2/token", ""},
	} {
		assert.Equal(t, tc.base, tc.env.BaseURL())
		assert.Equal(t, tc.token, tc.env.TokenURL())
		assert.Equal(t, tc.scope, tc.env.Scope())
		c, err := NewClient(ClientCredentials("id", "secret-0123"), WithEnvironment(tc.env))
		require.NoError(t, err, tc.env)
		env, ok := c.Environment()
		assert.True(t, ok)
		assert.Equal(t, tc.env, env)
		assert.Equal(t, tc.base, c.view.BaseURL)
		assert.Equal(t, tc.token, c.auth.cfg.TokenURL, tc.env)
		if tc.scope == "" {
			assert.Empty(t, c.auth.cfg.Scopes, tc.env)
		} else {
			assert.Equal(t, []string{tc.scope}, c.auth.cfg.Scopes, tc.env)
		}
	}
	_, err := NewClient(ClientCredentials("id", "secret-0123"), WithEnvironment("prod"))
	require.ErrorIs(t, err, payonce.ErrInvalidConfig)
	assert.Contains(t, err.Error(), "a55.Production")
}

// Production is never a default: a client that names no environment is
// the sandbox's, token URL included.
func TestSandboxIsTheDefault(t *testing.T) {
	c, err := NewClient(ClientCredentials("id", "secret-0123"))
	require.NoError(t, err)
	env, _ := c.Environment()
	assert.Equal(t, Sandbox, env)
	assert.Equal(t, SandboxTokenURL, c.auth.cfg.TokenURL)
}

// A base URL is an environment's whatever the case of its scheme and
// host, a trailing slash or a default port; any other origin needs
// Auth.TokenURL: nothing falls back to the sandbox's token endpoint,
// where a production base URL written otherwise than the constant used
// to land.
func TestNothingFallsBackToTheSandbox(t *testing.T) {
	for base, env := range map[string]Environment{
		"https://api.a55.tech/":             Production,
		"HTTPS://API.A55.TECH":              Production,
		"https://api.a55.tech:443":          Production,
		"https://Core-Manager.a55.tech/":    ProductionCoreManager,
		"https://sandbox.api.a55.tech:443/": Sandbox,
	} {
		c, err := NewClient(ClientCredentials("id", "secret-0123"), payonce.WithBaseURL(base))
		require.NoError(t, err, base)
		got, ok := c.Environment()
		assert.True(t, ok, base)
		assert.Equal(t, env, got, base)
		assert.Equal(t, env.TokenURL(), c.auth.cfg.TokenURL, base)
	}
	for _, base := range []string{"https://api.a55.tech.evil.example", "https://a55-proxy.example", "https://api.a55.tech:8443", "http://127.0.0.1:9"} {
		_, err := NewClient(ClientCredentials("id", "secret-0123"), payonce.WithBaseURL(base))
		require.ErrorIs(t, err, payonce.ErrInvalidConfig, base)
		assert.Contains(t, err.Error(), "set Auth.TokenURL", base)
		assert.NotContains(t, err.Error(), "secret-0123")
		a := ClientCredentials("id", "secret-0123")
		a.TokenURL = "https://auth.example/oauth2/token"
		c, err := NewClient(a, payonce.WithBaseURL(base))
		require.NoError(t, err, base)
		assert.Equal(t, "https://auth.example/oauth2/token", c.auth.cfg.TokenURL)
		assert.Equal(t, []string{DefaultScope}, c.auth.cfg.Scopes)
		_, ok := c.Environment()
		assert.False(t, ok)
		_, err = NewClient(AccessToken("fixed"), payonce.WithBaseURL(base))
		assert.NoError(t, err, "a fixed access token needs no token URL")
	}
}

// A base URL written as some pages write the API's address, with /api/v1,
// is refused: the client adds the version itself.
func TestBaseURLWithTheVersionIsRefused(t *testing.T) {
	for _, base := range []string{"https://api.a55.tech/api/v1", "https://core-manager.a55.tech/api/v1/", "https://sandbox.api.a55.tech/API/V1"} {
		_, err := NewClient(AccessToken("fixed"), payonce.WithBaseURL(base))
		require.ErrorIs(t, err, payonce.ErrInvalidConfig, base)
		assert.Contains(t, err.Error(), "give the origin only", base)
	}
}

// The token request asks for the environment's scope: api/readwrite for
// Sandbox and Production, none for ProductionCoreManager; an empty
// Scopes asks for none, a set one for itself.
func TestTokenRequestScopeFollowsTheEnvironment(t *testing.T) {
	forms := make(chan url.Values, 8)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.NoError(t, r.ParseForm())
		forms <- r.PostForm
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"access_token":"tok","expires_in":3600,"token_type":"Bearer"}`)
	}))
	defer srv.Close()
	for _, tc := range []struct {
		env    Environment
		scopes []string
		want   []string
	}{
		{Sandbox, nil, []string{"api/readwrite"}},
		{Production, nil, []string{"api/readwrite"}},
		{ProductionCoreManager, nil, nil},
		{Production, []string{}, nil},
		{ProductionCoreManager, []string{"x/y"}, []string{"x/y"}},
	} {
		a := ClientCredentials("id", "secret-0123")
		a.TokenURL, a.Scopes = srv.URL+"/oauth2/token", tc.scopes
		c, err := NewClient(a, WithEnvironment(tc.env))
		require.NoError(t, err)
		_, err = c.Token(context.Background())
		require.NoError(t, err)
		f := <-forms
		assert.Equal(t, "client_credentials", f.Get("grant_type"))
		assert.Equal(t, tc.want, f["scope"], "%s %v", tc.env, tc.scopes)
	}
}
