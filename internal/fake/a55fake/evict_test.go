package a55fake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce/internal/fake/fakeserver"
)

// evictHarness calls the fake's handler on an engine with a
// MaxOperations cap.
type evictHarness struct {
	e   *fakeserver.Engine
	f   *Fake
	h   http.Handler
	tok string
}

func newEvictHarness(t *testing.T, maxOps int) *evictHarness {
	e := fakeserver.New(fakeserver.Options{MaxOperations: maxOps})
	f := New(e, Config{RateLimit: -1})
	t.Cleanup(e.Close)
	return &evictHarness{e: e, f: f, h: f.Handler(), tok: f.IssueToken("demo-client")}
}

// do serves one request and decodes its JSON answer.
func (h *evictHarness) do(t *testing.T, method, path, key string, body any) (int, map[string]any) {
	t.Helper()
	b, err := json.Marshal(body)
	require.NoError(t, err)
	r := httptest.NewRequest(method, path, bytes.NewReader(b))
	if body == nil {
		r = httptest.NewRequest(method, path, nil)
	}
	r.Header.Set("Authorization", "Bearer "+h.tok)
	if key != "" {
		r.Header.Set("Idempotency-Key", key)
	}
	w := httptest.NewRecorder()
	h.h.ServeHTTP(w, r)
	var out map[string]any
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &out), w.Body.String())
	return w.Code, out
}

func (h *evictHarness) sizes() (charges, order, wallets int) {
	h.f.mu.Lock()
	defer h.f.mu.Unlock()
	return len(h.f.charges), len(h.f.chargeOrder), len(h.f.wallets)
}

func evictKey(i int) string { return fmt.Sprintf("evict-charge-key-%06d", i) }

// With MaxOperations the charge table keeps the newest charges only: an
// evicted charge answers 404 to get, capture, refund and cancel, leaves
// the list, and a repeat of its key never creates it a second time.
func TestChargesEvictedOverCap(t *testing.T) {
	const maxOps, n = 100, 250
	h := newEvictHarness(t, maxOps)
	pix := map[string]any{"amount": "10.00", "currency": "BRL", "type_charge": "pix"}
	ids := make([]string, n)
	for i := range n {
		st, out := h.do(t, http.MethodPost, walletPrefix+"charge/", evictKey(i), pix)
		require.Equal(t, http.StatusOK, st, out)
		ids[i] = out["charge_uuid"].(string)
	}
	charges, order, _ := h.sizes()
	assert.LessOrEqual(t, charges, maxOps)
	assert.LessOrEqual(t, order, maxOps)
	assert.Equal(t, charges, order)

	old, kept := ids[0], ids[n-1]
	st, _ := h.do(t, http.MethodGet, walletPrefix+"charge/"+old, "", nil)
	assert.Equal(t, http.StatusNotFound, st)
	st, _ = h.do(t, http.MethodGet, walletPrefix+"charge/"+kept, "", nil)
	assert.Equal(t, http.StatusOK, st)
	acct, _ := h.f.AccountOf("demo-client")
	for _, route := range []string{"capture", "refund", "cancel"} {
		st, out := h.do(t, http.MethodPost, walletPrefix+"charge/"+route, "evict-move-key-"+route+"-0001",
			map[string]any{"charge_uuid": old, "wallet_uuid": acct.WalletUUID})
		assert.Equal(t, http.StatusNotFound, st, "%s: %v", route, out)
	}

	st, list := h.do(t, http.MethodGet, walletPrefix+"charges?limit=100&page=1&wallet_uuid="+acct.WalletUUID, "", nil)
	require.Equal(t, http.StatusOK, st)
	assert.EqualValues(t, order, list["total"])
	for _, c := range list["charges"].([]any) {
		assert.NotEqual(t, old, c.(map[string]any)["charge_uuid"])
	}

	// Replaying the first charge's key runs nothing again, whatever the
	// store still holds of its answer.
	executed := h.e.Stats().Executed
	st, _ = h.do(t, http.MethodPost, walletPrefix+"charge/", evictKey(0), pix)
	assert.NotEqual(t, http.StatusOK, st, "the answer of an evicted key is not kept in full")
	assert.Equal(t, executed, h.e.Stats().Executed, "a replayed key executed again")
	_, list = h.do(t, http.MethodGet, walletPrefix+"charges?wallet_uuid="+acct.WalletUUID+"&idempotency_key="+evictKey(0), "", nil)
	assert.EqualValues(t, 0, list["total"])
}

// Wallets created on request are capped the same way; the default wallet
// of a client stays.
func TestWalletsEvictedOverCap(t *testing.T) {
	const maxOps = 10
	h := newEvictHarness(t, maxOps)
	st, out := h.do(t, http.MethodPost, walletPrefix+"charge/", "evict-default-wallet-01",
		map[string]any{"amount": "1.00", "currency": "BRL", "type_charge": "pix"})
	require.Equal(t, http.StatusOK, st, out)
	def := out["wallet_uuid"].(string)
	var first string
	for i := range 3 * maxOps {
		st, out := h.do(t, http.MethodPost, walletPrefix, fmt.Sprintf("evict-wallet-key-%06d", i), map[string]any{"name": "w"})
		require.Equal(t, http.StatusOK, st, out)
		if i == 0 {
			first = out["uuid"].(string)
		}
	}
	_, _, wallets := h.sizes()
	assert.LessOrEqual(t, wallets, maxOps+1, "the created wallets plus the default one")
	st, _ = h.do(t, http.MethodGet, walletPrefix+"charges?wallet_uuid="+first, "", nil)
	assert.Equal(t, http.StatusNotFound, st)
	st, _ = h.do(t, http.MethodGet, walletPrefix+"charges?wallet_uuid="+def, "", nil)
	assert.Equal(t, http.StatusOK, st)
	st, _ = h.do(t, http.MethodPost, walletPrefix+"charge/", "evict-default-wallet-02",
		map[string]any{"wallet_uuid": def, "amount": "1.00", "currency": "BRL", "type_charge": "pix"})
	assert.Equal(t, http.StatusOK, st)
}

// The timers of PIX charges the cap dropped do not pile up: they stay
// within twice the charges kept.
func TestTimersBoundedByTheCap(t *testing.T) {
	const maxOps = 100
	h := newEvictHarness(t, maxOps)
	pix := map[string]any{"amount": "10.00", "currency": "BRL", "type_charge": "pix"}
	for i := range 20 * maxOps {
		st, out := h.do(t, http.MethodPost, walletPrefix+"charge/", "", pix)
		require.Equal(t, http.StatusOK, st, "%d: %v", i, out)
	}
	h.f.mu.Lock()
	n := len(h.f.timers)
	h.f.mu.Unlock()
	assert.LessOrEqual(t, n, 2*max(maxOps, 64)+1)
}
