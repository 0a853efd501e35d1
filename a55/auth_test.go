package a55

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/keytest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

// A 307 from the token endpoint to plain http:// would re-post the client
// secret in clear text: token requests follow no redirect, and the
// redirect is a final, typed error.
func TestTokenRedirectNotFollowed(t *testing.T) {
	var stolen atomic.Int32
	thief := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		stolen.Add(1)
		issue(1, w, 3600)
	}))
	defer thief.Close()
	g := newTokenRig(t, func(_ int32, w http.ResponseWriter) {
		w.Header().Set("Location", thief.URL+"/steal")
		w.WriteHeader(http.StatusTemporaryRedirect)
	})
	var api atomic.Int32
	g.mux.HandleFunc("POST "+PathCharges, func(w http.ResponseWriter, r *http.Request) { api.Add(1) })

	_, err := g.client.Token(t.Context())
	require.ErrorIs(t, err, ErrTokenRedirect)
	require.ErrorIs(t, err, payonce.ErrInvalidConfig)

	_, err = g.client.Charges.Create(t.Context(), seedCharge())
	require.ErrorIs(t, err, ErrTokenRedirect)
	assert.ErrorIs(t, err, payonce.ErrInvalidConfig)
	assert.False(t, payonce.IsTemporary(err), "a redirecting token endpoint is a configuration error")
	assert.NotEmpty(t, payonce.KeyOf(err).ID())
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
		_, err := g.client.Charges.Get(context.Background(), "c1", "")
		late <- err
	}()
	<-arrived
	_, err = g.client.Charges.Get(t.Context(), "c1", "")
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
		keys = append(keys, r.Header.Get(payonce.HeaderIdempotencyKey))
		assert.Equal(t, "Bearer tok-3", r.Header.Get("Authorization"))
		writeJSON(w, 200, `{"charge_uuid":"c1","status":"confirmed","amount":"100.00"}`)
	})
	ch, err := g.client.Charges.Create(t.Context(), seedCharge(), payonce.WithKey(keytest.Now(t, "token-5xx-key-0123456789")))
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
	_, err := g.client.Charges.Create(t.Context(), seedCharge(), payonce.WithKey(keytest.Now(t, "token-down-key-0123456789")))
	require.Error(t, err)
	assert.ErrorIs(t, err, payonce.ErrRetriesExhausted)
	assert.ErrorIs(t, err, payonce.ErrSignerTemporary)
	assert.True(t, payonce.IsTemporary(err))
	assert.Equal(t, "token-down-key-0123456789", payonce.KeyOf(err).ID())
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
	_, err := g.client.Charges.Create(t.Context(), seedCharge())
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
		_, err := g.client.Charges.Create(t.Context(), seedCharge())
		require.Error(t, err, answer.body)
		assert.NotContains(t, err.Error(), testSecret, answer.body)
		assert.NotContains(t, fmt.Sprintf("%+v", err), testSecret, answer.body)
	}
}
