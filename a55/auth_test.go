package a55

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payonce/payonce/internal/corekit"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/testsupport/keytest"
)

// tokenRig is an httptest server with a token endpoint whose answers the
// test scripts (answer is called under no lock, once per token request)
// and an API mux, plus a client for both.
type tokenRig struct {
	mux    *http.ServeMux
	srv    *httptest.Server
	client *Client
	tokens atomic.Int32 // token requests received
}

func newTokenRig(t *testing.T, answer func(n int32, w http.ResponseWriter), opts ...payonce.Option) *tokenRig {
	t.Helper()
	g := &tokenRig{mux: http.NewServeMux()}
	g.mux.HandleFunc("POST /oauth2/token", func(w http.ResponseWriter, r *http.Request) {
		answer(g.tokens.Add(1), w)
	})
	g.srv = httptest.NewServer(g.mux)
	t.Cleanup(g.srv.Close)
	auth := ClientCredentials(testID, testSecret)
	auth.TokenURL = g.srv.URL + "/oauth2/token"
	base := []payonce.Option{payonce.WithBaseURL(g.srv.URL), payonce.WithRetryPolicy(fastPolicy())}
	c, err := NewClient(auth, append(base, opts...)...)
	require.NoError(t, err)
	g.client = c
	return g
}

func issue(n int32, w http.ResponseWriter, expiresIn int) {
	writeJSON(w, 200, fmt.Sprintf(`{"access_token":"tok-%d","expires_in":%d,"token_type":"Bearer"}`, n, expiresIn))
}

// tokenThief is a server that counts the token requests redirected to it
// and answers them with a token.
func tokenThief(t *testing.T) (*httptest.Server, *atomic.Int32) {
	var stolen atomic.Int32
	thief := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		stolen.Add(1)
		issue(1, w, 3600)
	}))
	t.Cleanup(thief.Close)
	return thief, &stolen
}

// A 307 from the token endpoint to plain http:// would re-post the client
// secret in clear text: token requests follow no redirect, and the
// redirect is a final, typed error.
func TestTokenRedirectNotFollowed(t *testing.T) {
	thief, stolen := tokenThief(t)
	g := newTokenRig(t, func(_ int32, w http.ResponseWriter) {
		w.Header().Set("Location", thief.URL+"/steal")
		w.WriteHeader(http.StatusTemporaryRedirect)
	})
	var api atomic.Int32
	g.mux.HandleFunc("POST "+PathCharges, func(w http.ResponseWriter, r *http.Request) { api.Add(1) })

	_, err := g.client.Token(t.Context())
	require.ErrorIs(t, err, ErrTokenRedirect)
	require.ErrorIs(t, err, payonce.ErrInvalidConfig)

	_, err = g.client.Charges.Create(t.Context(), refCharge())
	require.ErrorIs(t, err, ErrTokenRedirect)
	assert.ErrorIs(t, err, payonce.ErrInvalidConfig)
	assert.False(t, payonce.IsTemporary(err), "a redirecting token endpoint is a configuration error")
	assert.NotEmpty(t, payonce.KeyOf(err).String())
	assert.Zero(t, stolen.Load(), "the redirect target never saw the client secret")
	assert.Zero(t, api.Load())
	assert.EqualValues(t, 2, g.tokens.Load(), "one token request per call, none retried")
}

// A late 401 for a token already replaced must not drop the replacement:
// two fetches suffice when two calls are rejected for the same old token.
func TestLate401KeepsFreshToken(t *testing.T) {
	g := newTokenRig(t, func(n int32, w http.ResponseWriter) { issue(n, w, 3600) })
	release := make(chan struct{})
	free := sync.OnceFunc(func() { close(release) })
	arrived := make(chan struct{})
	var firstOld atomic.Bool
	g.mux.HandleFunc("GET "+PathCharges, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "Bearer tok-1" {
			if firstOld.CompareAndSwap(false, true) {
				close(arrived)
				<-release // the late one: answered after the token was replaced
			}
			writeJSON(w, 401, `{"error":{"code":"INVALID_TOKEN","message":"expired"}}`)
			return
		}
		writeJSON(w, 200, `{"charge_uuid":"c1","status":"paid","amount":"1.00"}`)
	})
	t.Cleanup(free)
	_, err := g.client.Token(t.Context())
	require.NoError(t, err)

	late := make(chan error, 1)
	go func() {
		_, err := g.client.Charges.Get(context.Background(), "c1", "w1")
		late <- err
	}()
	<-arrived
	_, err = g.client.Charges.Get(t.Context(), "c1", "w1")
	require.NoError(t, err, "the prompt 401 refreshes the token")
	assert.EqualValues(t, 2, g.tokens.Load())
	free()
	require.NoError(t, <-late, "the late 401 repeats the call under the new token")
	assert.EqualValues(t, 2, g.tokens.Load(), "the late 401 for tok-1 did not drop tok-2")
	tok, err := g.client.Token(t.Context())
	require.NoError(t, err)
	assert.Equal(t, "tok-2", tok)
}

// Callers share one slow token fetch; each leaves on its own context, and
// the fetch survives the caller that started it.
func TestSlowTokenFetchSharedAndCancelable(t *testing.T) {
	gate := make(chan struct{})
	open := sync.OnceFunc(func() { close(gate) })
	g := newTokenRig(t, func(n int32, w http.ResponseWriter) {
		<-gate
		issue(n, w, 3600)
	})
	t.Cleanup(open) // before the server closes, even when the test fails
	starter, cancel := context.WithCancel(context.Background())
	first := make(chan error, 1)
	go func() {
		_, err := g.client.Token(starter)
		first <- err
	}()
	require.Eventually(t, func() bool { return g.tokens.Load() == 1 }, 5*time.Second, time.Millisecond)

	short, cancelShort := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancelShort()
	select {
	case <-func() chan struct{} {
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, err := g.client.Token(short)
			assert.ErrorIs(t, err, context.DeadlineExceeded)
		}()
		return done
	}():
	case <-time.After(5 * time.Second):
		t.Fatal("a waiter with a short deadline stayed behind the slow fetch")
	}

	cancel()
	require.ErrorIs(t, <-first, context.Canceled, "the starter leaves on its own context")

	var wg sync.WaitGroup
	toks := make([]string, 3)
	for i := range toks {
		wg.Go(func() {
			tok, err := g.client.Token(context.Background())
			assert.NoError(t, err)
			toks[i] = tok
		})
	}
	open()
	wg.Wait()
	assert.Equal(t, []string{"tok-1", "tok-1", "tok-1"}, toks, "the fetch outlived its starter's context")
	assert.EqualValues(t, 1, g.tokens.Load(), "one shared fetch")
}

// A token living 60 s or less is reused for half its life, not fetched
// anew on every call.
func TestShortLivedTokenReused(t *testing.T) {
	g := newTokenRig(t, func(n int32, w http.ResponseWriter) { issue(n, w, 30) })
	now := time.Now()
	g.client.auth.now = func() time.Time { return now }
	for range 3 {
		tok, err := g.client.Token(t.Context())
		require.NoError(t, err)
		assert.Equal(t, "tok-1", tok)
	}
	now = now.Add(14 * time.Second)
	tok, err := g.client.Token(t.Context())
	require.NoError(t, err)
	assert.Equal(t, "tok-1", tok)
	now = now.Add(2 * time.Second) // past half of 30 s
	tok, err = g.client.Token(t.Context())
	require.NoError(t, err)
	assert.Equal(t, "tok-2", tok)
	assert.Equal(t, time.Minute, refreshMargin(time.Hour))
	assert.Equal(t, 15*time.Second, refreshMargin(30*time.Second))
	assert.Equal(t, 30*time.Second, refreshMargin(time.Minute))
	assert.Zero(t, refreshMargin(0))
}

// A 5xx from the token endpoint is retried inside the operation (nothing
// was sent yet): same key, and the failed signing is no attempt sent.
func TestToken5xxRetriedWithinPolicy(t *testing.T) {
	g := newTokenRig(t, func(n int32, w http.ResponseWriter) {
		if n <= 2 {
			writeJSON(w, 503, `{"error":"temporarily_unavailable"}`)
			return
		}
		issue(n, w, 3600)
	})
	var keys []string
	g.mux.HandleFunc("POST "+PathCharges, func(w http.ResponseWriter, r *http.Request) {
		keys = append(keys, r.Header.Get(corekit.HeaderIdempotencyKey))
		assert.Equal(t, "Bearer tok-3", r.Header.Get("Authorization"))
		writeJSON(w, 200, `{"charge_uuid":"c1","status":"confirmed","amount":"100.00"}`)
	})
	ch, err := g.client.Charges.Create(t.Context(), refCharge(), payonce.WithKey(keytest.Now(t, "token-5xx-key-0123456789")))
	require.NoError(t, err)
	assert.Equal(t, []string{"token-5xx-key-0123456789"}, keys)
	assert.Equal(t, 1, ch.Meta.Attempts, "failed signings are not attempts sent")
	assert.EqualValues(t, 3, g.tokens.Load())
}

// A token endpoint that keeps failing uses up the retry schedule and no
// more: the error is temporary, keeps the key, and nothing reached the API.
func TestToken5xxBoundedByPolicy(t *testing.T) {
	g := newTokenRig(t, func(_ int32, w http.ResponseWriter) {
		writeJSON(w, 502, `<html>bad gateway</html>`)
	})
	var api atomic.Int32
	g.mux.HandleFunc("POST "+PathCharges, func(w http.ResponseWriter, r *http.Request) { api.Add(1) })
	_, err := g.client.Charges.Create(t.Context(), refCharge(), payonce.WithKey(keytest.Now(t, "token-down-key-0123456789")))
	require.Error(t, err)
	assert.ErrorIs(t, err, payonce.ErrRetriesExhausted)
	assert.ErrorIs(t, err, payonce.ErrSignerTemporary)
	assert.True(t, payonce.IsTemporary(err))
	assert.Equal(t, "token-down-key-0123456789", payonce.KeyOf(err).String())
	var ae *payonce.APIError
	require.ErrorAs(t, err, &ae)
	assert.Zero(t, ae.Attempts)
	assert.Zero(t, api.Load())
	assert.EqualValues(t, fastPolicy().MaxAttempts, g.tokens.Load(), "one token request per place in the schedule")
}

// Refused credentials from the token endpoint stay final.
func TestToken401Final(t *testing.T) {
	g := newTokenRig(t, func(_ int32, w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, `{"error":"invalid_client"}`)
	})
	_, err := g.client.Charges.Create(t.Context(), refCharge())
	require.ErrorIs(t, err, payonce.ErrUnauthorized)
	assert.NotErrorIs(t, err, payonce.ErrSignerTemporary)
	assert.False(t, payonce.IsTemporary(err))
	assert.EqualValues(t, 1, g.tokens.Load())
}

// A token endpoint that echoes the client secret, bare, as its error code
// or in an answer that is not a token: no error text holds it.
func TestTokenErrorNeverEchoesTheClientSecret(t *testing.T) {
	for _, answer := range []struct {
		status int
		body   string
	}{
		{http.StatusUnauthorized, `{"error":"` + testSecret + `"}`},
		{http.StatusBadGateway, `{"error":"bad ` + testSecret + `"}`},
		{http.StatusOK, `{"token_type":"` + testSecret + `"}`},
		{http.StatusOK, `not json ` + testSecret},
	} {
		g := newTokenRig(t, func(_ int32, w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(answer.status)
			_, _ = io.WriteString(w, answer.body)
		})
		_, err := g.client.Charges.Create(t.Context(), refCharge())
		require.Error(t, err, answer.body)
		assert.NotContains(t, err.Error(), testSecret, answer.body)
		assert.NotContains(t, fmt.Sprintf("%+v", err), testSecret, answer.body)
	}
}

func TestUnauthorizedRefreshesOnceSameKey(t *testing.T) {
	u := setup(t)
	var keys []string
	var auths []string
	u.mux.HandleFunc("POST "+PathCharges, func(w http.ResponseWriter, r *http.Request) {
		keys = append(keys, r.Header.Get(corekit.HeaderIdempotencyKey))
		auths = append(auths, r.Header.Get("Authorization"))
		if len(keys) == 1 {
			writeJSON(w, 401, `{"error":{"code":"INVALID_TOKEN","message":"expired"}}`)
			return
		}
		writeJSON(w, 200, `{"charge_uuid":"c6","status":"confirmed","amount":"100.00"}`)
	})
	ch, err := u.client.Charges.Create(context.Background(), refCharge())
	require.NoError(t, err)
	require.Len(t, keys, 2)
	assert.Equal(t, keys[0], keys[1])
	assert.Equal(t, []string{"Bearer tok-1", "Bearer tok-2"}, auths)
	assert.Equal(t, 2, ch.Meta.Attempts)
}

func TestFixedTokenNoRefresh(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		assert.Equal(t, "Bearer fixed-token-value", r.Header.Get("Authorization"))
		writeJSON(w, 401, `{"error":{"code":"INVALID_TOKEN","message":"expired"}}`)
	}))
	defer srv.Close()
	c, err := NewClient(AccessToken("fixed-token-value"), payonce.WithBaseURL(srv.URL), payonce.WithRetryPolicy(fastPolicy()))
	require.NoError(t, err)
	_, err = c.Charges.Get(context.Background(), "c1", "w1")
	assert.ErrorIs(t, err, payonce.ErrUnauthorized)
	var ae *payonce.APIError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, 1, ae.Attempts)
	assert.NotContains(t, err.Error(), "fixed-token-value")
}

func TestTokenViaClientHTTPClientAndCached(t *testing.T) {
	var viaClient atomic.Int32
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		viaClient.Add(1)
		return http.DefaultTransport.RoundTrip(r)
	})}
	u := setup(t, payonce.WithHTTPClient(hc))
	u.mux.HandleFunc("GET "+PathCharges, func(w http.ResponseWriter, r *http.Request) {
		assert.Equal(t, "c1", r.URL.Query().Get("charge_uuid"))
		assert.Equal(t, "w1", r.URL.Query().Get("wallet_uuid"))
		assert.Empty(t, r.Header.Get(corekit.HeaderIdempotencyKey))
		writeJSON(w, 200, `{"charge_uuid":"c1","wallet_uuid":"w1","status":"paid","amount":"1.00"}`)
	})
	for range 3 {
		ch, err := u.client.Charges.Get(context.Background(), "c1", "w1")
		require.NoError(t, err)
		assert.Equal(t, StatusPaid, ch.Status)
		assert.Empty(t, ch.Meta.Key)
	}
	assert.EqualValues(t, 1, u.tokens.Load(), "token cached")
	assert.EqualValues(t, 4, viaClient.Load(), "1 token request + 3 API calls through the same http.Client")
}

func TestTokenRefreshedBeforeExpiry(t *testing.T) {
	u := setup(t)
	now := time.Now()
	u.client.auth.now = func() time.Time { return now }
	_, err := u.client.Token(context.Background())
	require.NoError(t, err)
	now = now.Add(3600*time.Second - 2*time.Minute)
	tok, err := u.client.Token(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "tok-1", tok)
	now = now.Add(90 * time.Second) // within a minute of expiry
	tok, err = u.client.Token(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "tok-2", tok)
}

func TestBadCredentialsNotLeaked(t *testing.T) {
	u := setup(t)
	auth := ClientCredentials(testID, "wrong-secret-value")
	auth.TokenURL = u.srv.URL + "/oauth2/token"
	c, err := NewClient(auth, payonce.WithBaseURL(u.srv.URL), payonce.WithRetryPolicy(fastPolicy()))
	require.NoError(t, err)
	_, err = c.Charges.Create(context.Background(), refCharge())
	require.Error(t, err)
	assert.ErrorIs(t, err, payonce.ErrUnauthorized)
	assert.False(t, payonce.IsTemporary(err), "bad credentials are final: a job queue must not retry them")
	assert.NotEmpty(t, payonce.KeyOf(err).String())
	for _, s := range []string{"wrong-secret-value", "4111111111111111", "123\"", u.srv.URL + "/oauth2"} {
		assert.NotContains(t, err.Error(), s)
	}
}

func TestAuthFromEnv(t *testing.T) {
	t.Setenv(EnvAccessToken, "")
	t.Setenv(EnvClientID, "")
	t.Setenv(EnvClientSecret, "")
	_, err := AuthFromEnv()
	assert.ErrorIs(t, err, payonce.ErrInvalidConfig)
	t.Setenv(EnvClientID, "id")
	t.Setenv(EnvClientSecret, "sec")
	t.Setenv(EnvTokenURL, "https://auth.example/t")
	a, err := AuthFromEnv()
	require.NoError(t, err)
	assert.Equal(t, Auth{ClientID: "id", ClientSecret: "sec", TokenURL: "https://auth.example/t"}, a)
	t.Setenv(EnvAccessToken, "tkn")
	a, err = AuthFromEnv()
	require.NoError(t, err)
	assert.Equal(t, "tkn", a.AccessToken)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestPlainHTTPTokenURLRefused(t *testing.T) {
	a := ClientCredentials("id", "secret")
	a.TokenURL = "http://auth.example/oauth2/token"
	_, err := NewClient(a)
	require.ErrorIs(t, err, payonce.ErrInvalidConfig, "the client secret must not cross the network in clear text")
	assert.NotContains(t, err.Error(), "secret\"")
	a.TokenURL = "http://127.0.0.1:8080/oauth2/token"
	_, err = NewClient(a, payonce.WithBaseURL("http://127.0.0.1:8080"))
	require.NoError(t, err, "loopback is fine")
	a.TokenURL = "http://auth.internal/oauth2/token"
	_, err = NewClient(a, payonce.WithBaseURL("http://api.internal"), payonce.WithInsecureHTTP())
	require.NoError(t, err, "an explicit WithInsecureHTTP covers the token URL too")
	a.TokenURL = "ftp://auth.example/token"
	_, err = NewClient(a)
	require.ErrorIs(t, err, payonce.ErrInvalidConfig)
}

// The authorizer's SecretValues are its client secret and its last
// keptTokens tokens: bounded however often tokens rotate, newest kept.
func TestAuthorizerSecretValuesBounded(t *testing.T) {
	z := newAuthorizer(ClientCredentials("id", "client-secret-bound"))
	for i := range 10 {
		z.secrets(fmt.Sprintf("token-%02d-opaque", i))
	}
	vals := z.SecretValues()
	require.Len(t, vals, keptTokens+1)
	assert.Equal(t, "client-secret-bound", vals[0])
	assert.Equal(t, []string{"token-06-opaque", "token-07-opaque", "token-08-opaque", "token-09-opaque"}, vals[1:])
	assert.Equal(t, []string{"fixed-token-bound"}, newAuthorizer(AccessToken("fixed-token-bound")).SecretValues())
}

// No redirect kind, to another host or to the token endpoint's own
// origin, makes a token request go anywhere else: the answer is a final
// ErrTokenRedirect and the target never sees the client secret.
func TestTokenRedirectEveryKind(t *testing.T) {
	thief, stolen := tokenThief(t)
	for _, status := range []int{301, 302, 303, 307, 308} {
		for _, sameOrigin := range []bool{false, true} {
			t.Run(fmt.Sprintf("%d same=%v", status, sameOrigin), func(t *testing.T) {
				var g *tokenRig
				var hop atomic.Int32
				g = newTokenRig(t, func(_ int32, w http.ResponseWriter) {
					target := thief.URL + "/steal"
					if sameOrigin {
						target = g.srv.URL + "/oauth2/other"
					}
					w.Header().Set("Location", target)
					w.WriteHeader(status)
				})
				g.mux.HandleFunc("/oauth2/other", func(w http.ResponseWriter, r *http.Request) {
					hop.Add(1)
					issue(1, w, 3600)
				})
				_, err := g.client.Charges.Create(t.Context(), refCharge())
				require.ErrorIs(t, err, ErrTokenRedirect)
				assert.False(t, payonce.IsTemporary(err))
				assert.NotContains(t, err.Error(), testSecret)
				assert.Zero(t, hop.Load())
			})
		}
	}
	assert.Zero(t, stolen.Load())
}

// Odd token lifetimes neither panic nor make every call (or one call)
// fetch tokens: a lifetime that is not above zero is unknown.
func TestTokenOddLifetimes(t *testing.T) {
	for _, c := range []struct {
		name, expires string
		maxFetches    int32 // for three calls
	}{
		{"zero", "0", 1},
		{"absent", "null", 1},
		{"huge", "99999999999999999", 1},
		{"string number", `"3600"`, 1},
		{"negative", "-30", 1}, // a non-positive lifetime is unknown: the token is kept until a 401
		{"minus one", "-1", 1},
		{"huge negative", "-99999999999999999", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := newTokenRig(t, func(n int32, w http.ResponseWriter) {
				writeJSON(w, 200, fmt.Sprintf(`{"access_token":"tok-%d","expires_in":%s,"token_type":"Bearer"}`, n, c.expires))
			})
			g.mux.HandleFunc("GET "+PathCharges, func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, 200, `{"charge_uuid":"c1","status":"paid","amount":"1.00"}`)
			})
			for range 3 {
				_, err := g.client.Charges.Get(t.Context(), "c1", "w1")
				require.NoError(t, err)
			}
			assert.LessOrEqual(t, g.tokens.Load(), c.maxFetches)
		})
	}
	t.Run("not a number", func(t *testing.T) {
		g := newTokenRig(t, func(n int32, w http.ResponseWriter) {
			writeJSON(w, 200, `{"access_token":"tok_secret_value_42","expires_in":"soon","token_type":"Bearer"}`)
		})
		_, err := g.client.Charges.Create(t.Context(), refCharge())
		require.Error(t, err)
		assert.ErrorIs(t, err, payonce.ErrInvalidConfig)
		assert.NotContains(t, err.Error(), "tok_secret_value_42")
		assert.EqualValues(t, 1, g.tokens.Load(), "a broken answer is not retried")
	})
}

// A token endpoint answering a huge body costs a bounded read, and the
// error holds none of it.
func TestTokenHugeBody(t *testing.T) {
	g := newTokenRig(t, func(n int32, w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"access_token":"tok_huge_42","pad":"`))
		pad := []byte(strings.Repeat("4111 1111 1111 1111 ", 1000))
		for range 300 { // 6 MB
			if _, err := w.Write(pad); err != nil {
				return
			}
		}
		_, _ = w.Write([]byte(`"}`))
	})
	_, err := g.client.Charges.Create(t.Context(), refCharge())
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "tok_huge_42")
	assert.NotContains(t, err.Error(), "4111 1111")
	assert.Less(t, len(err.Error()), 1000)
}

// An API that answers 401 to every token does not make one call fetch
// tokens (or repeat itself) without bound.
func TestUnauthorizedStormBounded(t *testing.T) {
	g := newTokenRig(t, func(n int32, w http.ResponseWriter) { issue(n, w, 3600) })
	var api atomic.Int32
	g.mux.HandleFunc("POST "+PathCharges, func(w http.ResponseWriter, r *http.Request) {
		api.Add(1)
		writeJSON(w, 401, `{"error":{"code":"INVALID_TOKEN","message":"expired"}}`)
	})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			_, err := g.client.Charges.Create(context.Background(), refCharge())
			assert.ErrorIs(t, err, payonce.ErrUnauthorized)
			assert.False(t, payonce.IsResumable(err))
		})
	}
	wg.Wait()
	assert.LessOrEqual(t, api.Load(), int32(16), "each call sends at most two attempts")
	assert.LessOrEqual(t, g.tokens.Load(), int32(16), "each call fetches at most two tokens")
}

// Callers that leave a hanging token fetch (their contexts end) leave no
// goroutine behind but the one shared fetch, which ends with the answer.
func TestTokenWaitersLeaveNoGoroutines(t *testing.T) {
	gate := make(chan struct{})
	open := sync.OnceFunc(func() { close(gate) })
	g := newTokenRig(t, func(n int32, w http.ResponseWriter) {
		<-gate
		issue(n, w, 3600)
	})
	t.Cleanup(open)
	g.mux.HandleFunc("GET "+PathCharges, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, `{"charge_uuid":"c1","status":"paid","amount":"1.00"}`)
	})
	base := runtime.NumGoroutine()
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
			defer cancel()
			_, err := g.client.Charges.Get(ctx, "c1", "w1")
			assert.Error(t, err)
		})
	}
	wg.Wait()
	// The shared fetch may not have reached the server yet on a loaded
	// machine; it must never be more than one.
	assert.LessOrEqual(t, g.tokens.Load(), int32(1), "one shared fetch")
	open()
	// Polled in this goroutine: assert.Eventually would add its own.
	n := runtime.NumGoroutine()
	for deadline := time.Now().Add(10 * time.Second); n > base && time.Now().Before(deadline); n = runtime.NumGoroutine() {
		g.srv.CloseClientConnections() // the fetch's keep-alive connection
		time.Sleep(10 * time.Millisecond)
	}
	require.LessOrEqual(t, n, base, "the fetch and every waiter are gone")
	_, err := g.client.Charges.Get(t.Context(), "c1", "w1")
	require.NoError(t, err)
}
