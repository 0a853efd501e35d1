package main

import (
	"github.com/payonce/payonce/coinepay"
	"github.com/payonce/payonce/internal/corekit"

	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// getJSON decodes the JSON answer of a GET on base+path.
func getJSON(t *testing.T, base, path string, v any) {
	t.Helper()
	resp, err := http.Get(base + path)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, path)
	require.NoError(t, json.NewDecoder(resp.Body).Decode(v))
}

func keysOf(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// What a test in another language sees, field by field, as docs/testing.md
// shows it: a lost answer, a retry with the same key, one operation.
func TestAdminAPIAsDocumented(t *testing.T) {
	base := start(t)
	resp, err := http.Post(base+"/_fakepay/faults", "application/json",
		strings.NewReader(`{"fault":"drop_after_commit","path":"/api/v1/bank/wallet/charge/","count":1}`))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode)

	token := demoToken(t, base)
	// A fresh connection per request: net/http resends a request carrying an
	// Idempotency-Key by itself when a reused connection drops it.
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	charge := `{"amount":"10.00","currency":"BRL","type_charge":"credit_card","card":{"number":"4111111111111111","holder_name":"T","expiration_month":"12","expiration_year":"2099","cvv":"123"}}`
	for i := range 2 {
		req, _ := http.NewRequest(http.MethodPost, base+"/api/v1/bank/wallet/charge/", strings.NewReader(charge))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(corekit.HeaderIdempotencyKey, "order-1-payment-0001")
		resp, err := hc.Do(req)
		if i == 0 {
			require.Error(t, err, "the answer is lost")
			continue
		}
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
	}
	// Coinepay requests without a signature and with a wrong one.
	for _, sign := range []bool{false, true} {
		req, _ := http.NewRequest(http.MethodPost, base+"/api/v1/openapi/card/apply", strings.NewReader(`{}`))
		req.Header.Set(corekit.HeaderIdempotencyKey, "openapi:apply:1")
		if sign {
			signer, err := coinepay.NewHMACSigner("demo-key", "wrong-secret")
			require.NoError(t, err)
			require.NoError(t, signer.Sign(req, []byte(`{}`)))
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	}

	var ledger struct {
		Operations []map[string]any `json:"operations"`
		Next       string           `json:"next"`
		LastSeq    uint64           `json:"last_seq"`
	}
	getJSON(t, base, "/_fakepay/ledger?idempotency_key=order-1-payment-0001", &ledger)
	require.Len(t, ledger.Operations, 1, "charged once")
	op := ledger.Operations[0]
	assert.Equal(t, []string{"amount", "credential", "id", "idempotency_key", "kind", "provider", "seq", "status", "time"}, keysOf(op))
	assert.Equal(t, "charge.create", op["kind"])
	assert.Equal(t, "confirmed", op["status"])
	assert.Equal(t, "10.00", op["amount"])
	assert.Equal(t, "demo-client", op["credential"])
	assert.Empty(t, ledger.Next, "no more pages")
	assert.Equal(t, op["seq"], float64(ledger.LastSeq))

	var log struct {
		Requests []map[string]any `json:"requests"`
	}
	getJSON(t, base, "/_fakepay/requests", &log)
	require.Len(t, log.Requests, 5) // token, 2 charges, 2 applies
	lost, replay := log.Requests[1], log.Requests[2]
	assert.Equal(t, "drop_after_commit", lost["fault"])
	assert.Equal(t, true, lost["executed"])
	assert.Equal(t, float64(0), lost["status"], "no answer sent")
	assert.Equal(t, true, replay["replayed"])
	assert.Equal(t, false, replay["executed"])
	assert.NotContains(t, replay, "signature_valid", "A55 requests are not signed")
	assert.Equal(t, false, log.Requests[3]["signature_valid"], "missing")
	assert.Equal(t, false, log.Requests[4]["signature_valid"], "wrong")

	var stats map[string]any
	getJSON(t, base, "/_fakepay/stats", &stats)
	assert.Equal(t, map[string]any{"requests": 5.0, "executed": 1.0, "replayed": 1.0, "conflicts": 0.0, "faults": 1.0}, stats)

	// The console's view of the same requests: one row per key.
	var ops struct {
		Operations []map[string]any `json:"operations"`
		Total      int              `json:"total"`
	}
	getJSON(t, base, "/_fakepay/operations?provider=a55", &ops)
	require.Len(t, ops.Operations, 1)
	row := ops.Operations[0]
	assert.Equal(t, []string{"attempts", "conflicts", "credential", "executions", "faults", "first_seen", "id", "idempotency_key",
		"kind", "last_seen", "provider", "replays", "route", "status"}, keysOf(row))
	assert.Equal(t, "order-1-payment-0001", row["idempotency_key"])
	assert.Equal(t, "/api/v1/bank/wallet/charge/", row["route"])
	for k, want := range map[string]float64{"attempts": 2, "executions": 1, "replays": 1, "conflicts": 0, "faults": 1, "status": 200} {
		assert.Equal(t, want, row[k], k)
	}
	var detail struct {
		Operation map[string]any   `json:"operation"`
		Attempts  []map[string]any `json:"attempts"`
		Ledger    []map[string]any `json:"ledger"`
		Webhooks  []any            `json:"webhooks"`
	}
	getJSON(t, base, fmt.Sprintf("/_fakepay/operations/%v", row["id"]), &detail)
	require.Len(t, detail.Attempts, 2)
	assert.Equal(t, "drop_after_commit", detail.Attempts[0]["fault"])
	assert.Equal(t, "charge.create", detail.Attempts[1]["kind"])
	assert.NotEmpty(t, detail.Attempts[1]["request_id"])
	require.Len(t, detail.Ledger, 1)
	assert.Equal(t, op["id"], detail.Ledger[0]["id"])
	require.Len(t, detail.Webhooks, 1, "the charge's deliveries (none: no webhook_url)")
}
