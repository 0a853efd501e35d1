package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payonce/payonce/internal/corekit"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce/coinepay"
	"github.com/payonce/payonce/internal/testsupport/admintest"
)

// chargePath is A55's create-charge path.
const chargePath = "/api/v1/bank/wallet/charge/"

// guideCharge is the charge payload of the A55 idempotency guide.
const guideCharge = `{
"amount": "100.00",
"currency": "BRL",
"type_charge": "credit_card",
"card": { "number": "4111111111111111", "holder_name": "TEST", "expiration_month": "12", "expiration_year": "2030", "cvv": "123" },
"payer": { "name": "张伟", "email": "zhangwei@example.com", "document": "12345678909", "document_type": "CPF" }
}`

// guideTime is before the example card's expiry (12/2030).
var guideTime = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// setClock sets the fake's clock through the admin API.
func setClock(t *testing.T, base string, at time.Time) {
	t.Helper()
	resp, err := http.Post(base+"/_fakepay/clock", "application/json", strings.NewReader(`{"set":"`+at.Format(time.RFC3339)+`"}`))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
}

// output is a run's standard output, safe to read while run writes it.
type output struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.Write(p)
}

// firstLine returns the first line run printed.
func (o *output) firstLine() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	line, _, _ := strings.Cut(o.buf.String(), "\n")
	return line
}

// startRun runs fakepay with args until ctx ends and waits, on run's ready
// call, until it listens. It returns the address, the output, and the
// channel of run's result; err is what run returned when it ended before
// listening.
func startRun(ctx context.Context, args ...string) (addr net.Addr, out *output, errc <-chan error, err error) {
	out = &output{}
	ready := make(chan net.Addr, 1)
	result := make(chan error, 1)
	go func() { result <- run(ctx, args, out, func(a net.Addr) { ready <- a }) }()
	select {
	case addr = <-ready:
		return addr, out, result, nil
	case err = <-result:
		return nil, out, nil, err
	}
}

func TestRunServesBothAPIs(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	// A grace period far past the wait below: a shutdown held by the
	// hanging request (or by a silent connection) fails the test as a
	// hang instead of racing the default 5 s grace against a 5 s wait.
	addr, out, errc, err := startRun(ctx, "-addr", "127.0.0.1:0", "-seed", "3", "-shutdown-timeout", "10m")
	require.NoError(t, err)
	line := out.firstLine()
	require.True(t, strings.HasPrefix(line, "fakepay listening on http://127.0.0.1:"), line)
	base := "http://" + addr.String()
	assert.Equal(t, "fakepay listening on "+base, line)
	// The example card expires after 12/2030: run the fake before that.
	setClock(t, base, guideTime)

	// Token, as A55's cURL example needs it.
	resp, err := http.PostForm(base+"/oauth2/token", url.Values{
		"grant_type": {"client_credentials"}, "client_id": {"demo-client"}, "client_secret": {"demo-secret"}, "scope": {"api/readwrite"},
	})
	require.NoError(t, err)
	var tok struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int    `json:"expires_in"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&tok))
	resp.Body.Close()
	require.NotEmpty(t, tok.AccessToken)
	assert.Equal(t, 3600, tok.ExpiresIn)

	// A55's cURL example, twice with one key.
	for range 2 {
		req, _ := http.NewRequest(http.MethodPost, base+"/api/v1/bank/wallet/charge/", strings.NewReader(guideCharge))
		req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(corekit.HeaderIdempotencyKey, "550e8400-e29b-41d4-a716-446655440000")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, 200, resp.StatusCode)
	}

	// Coinepay on the same address.
	body := []byte(`{"header_id":"h","package_id":"p"}`)
	req, _ := http.NewRequest(http.MethodPost, base+"/api/v1/openapi/card/apply", strings.NewReader(string(body)))
	req.Header.Set(corekit.HeaderIdempotencyKey, "openapi:apply:1")
	signer, err := coinepay.NewHMACSigner("demo-key", "demo-secret", coinepay.WithSignerClock(func() time.Time { return guideTime }))
	require.NoError(t, err)
	require.NoError(t, signer.Sign(req, body))
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode)

	lr, err := http.Get(base + "/_fakepay/ledger")
	require.NoError(t, err)
	var ledger struct {
		Operations []map[string]any `json:"operations"`
	}
	require.NoError(t, json.NewDecoder(lr.Body).Decode(&ledger))
	lr.Body.Close()
	require.Len(t, ledger.Operations, 2)
	assert.Equal(t, "a55", ledger.Operations[0]["provider"])
	assert.Equal(t, "550e8400-e29b-41d4-a716-446655440000", ledger.Operations[0]["idempotency_key"])
	assert.Equal(t, "coinepay", ledger.Operations[1]["provider"])

	nf, err := http.Get(base + "/nowhere")
	require.NoError(t, err)
	nf.Body.Close()
	assert.Equal(t, 404, nf.StatusCode)

	// A hanging request does not hold the shutdown.
	hr, err := http.Post(base+"/_fakepay/faults", "application/json", strings.NewReader(`{"fault":"hang"}`))
	require.NoError(t, err)
	hr.Body.Close()
	go func() {
		if r, err := http.Get(base + "/api/v1/bank/wallet/charge/?charge_uuid=x"); err == nil {
			r.Body.Close()
		}
	}()
	// Cancelled once the request hangs (its fault fired), not after a
	// sleep a loaded machine can outlast before the request arrives.
	require.Eventually(t, func() bool {
		fired, rules := admintest.FaultsFired(base)
		return rules == 1 && fired == 1
	}, 10*time.Second, time.Millisecond)
	cancel()
	select {
	case err := <-errc:
		assert.NoError(t, err)
	case <-time.After(time.Minute):
		t.Fatal("run did not return after cancel")
	}
}

func TestRunBadFlags(t *testing.T) {
	ctx := context.Background()
	assert.Error(t, run(ctx, []string{"-fault-rate", "2"}, io.Discard, nil))
	assert.Error(t, run(ctx, []string{"-balance", "lots"}, io.Discard, nil))
	assert.Error(t, run(ctx, []string{"-nope"}, io.Discard, nil))
	assert.Error(t, run(ctx, []string{"extra"}, io.Discard, nil))
}

// Without -seed every fakepay draws its own IDs; -seed N makes a run
// reproducible (-seed 0 included).
func TestSeedFlagMakesIDsReproducible(t *testing.T) {
	firstID := func(args ...string) string {
		o, err := parseFlags(args, io.Discard)
		require.NoError(t, err)
		_, e, err := newHandler(o)
		require.NoError(t, err)
		defer e.Close()
		return e.NewUUID()
	}
	assert.NotEqual(t, firstID(), firstID(), "two fakepay runs without -seed share their IDs")
	assert.Equal(t, firstID("-seed", "5"), firstID("-seed", "5"))
	assert.Equal(t, firstID("-seed", "0"), firstID("-seed", "0"))
	assert.NotEqual(t, firstID("-seed", "0"), firstID("-seed", "5"))
}
