package a55

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payonce/payonce"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// No redirect kind, to another host or to the token endpoint's own
// origin, makes a token request go anywhere else: the answer is a final
// ErrTokenRedirect and the target never sees the client secret.
func TestTokenRedirectEveryKind(t *testing.T) {
	var stolen atomic.Int32
	thief := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		stolen.Add(1)
		issue(1, w, 3600)
	}))
	defer thief.Close()
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
				_, err := g.client.Charges.Create(t.Context(), seedCharge())
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
// fetch tokens without bound.
func TestTokenOddLifetimes(t *testing.T) {
	for _, c := range []struct {
		name, expires string
		maxFetches    int32 // for three calls
	}{
		{"zero", "0", 1},
		{"absent", "null", 1},
		{"huge", "99999999999999999", 1},
		{"string number", `"3600"`, 1},
		{"negative", "-30", 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := newTokenRig(t, func(n int32, w http.ResponseWriter) {
				writeJSON(w, 200, fmt.Sprintf(`{"access_token":"tok-%d","expires_in":%s,"token_type":"Bearer"}`, n, c.expires))
			})
			g.mux.HandleFunc("GET "+PathCharges, func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, 200, `{"charge_uuid":"c1","status":"paid","amount":"1.00"}`)
			})
			for range 3 {
				_, err := g.client.Charges.Get(t.Context(), "c1", "")
				require.NoError(t, err)
			}
			assert.LessOrEqual(t, g.tokens.Load(), c.maxFetches)
		})
	}
	t.Run("not a number", func(t *testing.T) {
		g := newTokenRig(t, func(n int32, w http.ResponseWriter) {
			writeJSON(w, 200, `{"access_token":"tok_secret_value_42","expires_in":"soon","token_type":"Bearer"}`)
		})
		_, err := g.client.Charges.Create(t.Context(), seedCharge())
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
	_, err := g.client.Charges.Create(t.Context(), seedCharge())
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
			_, err := g.client.Charges.Create(context.Background(), seedCharge())
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
			_, err := g.client.Charges.Get(ctx, "c1", "")
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
	_, err := g.client.Charges.Get(t.Context(), "c1", "")
	require.NoError(t, err)
}
