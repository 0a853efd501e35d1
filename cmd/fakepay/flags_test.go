package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/payonce/payonce/internal/corekit"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce/coinepay"
)

// start runs fakepay with args on a free port until the test ends and
// returns its base URL.
func start(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addr, _, errc, err := startRun(ctx, append([]string{"-addr", "127.0.0.1:0"}, args...)...)
	require.NoError(t, err)
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-errc:
			assert.NoError(t, err)
		case <-time.After(time.Minute): // bounds a hang; -shutdown-timeout is 5 s
			t.Error("run did not return after cancel")
		}
	})
	return "http://" + addr.String()
}

// apply sends a signed Coinepay card/apply and returns the status and the
// decoded envelope.
func apply(t *testing.T, base, apiKey, secret, key string) (int, map[string]any) {
	t.Helper()
	body := []byte(`{"header_id":"h","package_id":"p"}`)
	req, err := http.NewRequest(http.MethodPost, base+"/api/v1/openapi/card/apply", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set(corekit.HeaderIdempotencyKey, key)
	signer, err := coinepay.NewHMACSigner(apiKey, secret)
	require.NoError(t, err)
	require.NoError(t, signer.Sign(req, body))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var env map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&env))
	return resp.StatusCode, env
}

func token(t *testing.T, base, id, secret string) int {
	t.Helper()
	resp, err := http.PostForm(base+"/oauth2/token", url.Values{
		"grant_type": {"client_credentials"}, "client_id": {id}, "client_secret": {secret},
	})
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

func TestFlagBalance(t *testing.T) {
	base := start(t, "-balance", "5.00")
	status, env := apply(t, base, "demo-key", "demo-secret", "openapi:apply:b1")
	require.Equal(t, 200, status, "%v", env)
	assert.Equal(t, "4.00", env["data"].(map[string]any)["account_balance"], "5.00 less the 1.00 fee")
}

func TestFlagCoinepayCredentials(t *testing.T) {
	base := start(t, "-coinepay-key", "k2", "-coinepay-secret", "s2")
	status, env := apply(t, base, "k2", "s2", "openapi:apply:c1")
	assert.Equal(t, 200, status, "%v", env)
	status, env = apply(t, base, "demo-key", "demo-secret", "openapi:apply:c2")
	assert.Equal(t, 401, status, "the default key is gone: %v", env)
	status, _ = apply(t, base, "k2", "demo-secret", "openapi:apply:c3")
	assert.Equal(t, 401, status, "k2 needs its own secret")
}

func TestFlagA55Credentials(t *testing.T) {
	base := start(t, "-a55-client-id", "c2", "-a55-client-secret", "s2")
	assert.Equal(t, 200, token(t, base, "c2", "s2"))
	assert.Equal(t, 401, token(t, base, "demo-client", "demo-secret"), "the default client is gone")
	assert.Equal(t, 401, token(t, base, "c2", "demo-secret"))
}

func TestFlagFaultRateOne(t *testing.T) {
	base := start(t, "-fault-rate", "1", "-seed", "7")
	// A fresh connection per request: net/http would silently retry a GET
	// reset on a reused connection.
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	const n = 12
	for i := range n {
		var req *http.Request
		if i%2 == 0 {
			form := url.Values{"grant_type": {"client_credentials"}, "client_id": {"demo-client"}, "client_secret": {"demo-secret"}}
			req, _ = http.NewRequest(http.MethodPost, base+"/oauth2/token", strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		} else {
			body := []byte(`{"header_id":"h","package_id":"p"}`)
			req, _ = http.NewRequest(http.MethodPost, base+"/api/v1/openapi/card/apply", bytes.NewReader(body))
			req.Header.Set(corekit.HeaderIdempotencyKey, "openapi:apply:f"+strconv.Itoa(i))
			signer, err := coinepay.NewHMACSigner("demo-key", "demo-secret")
			require.NoError(t, err)
			require.NoError(t, signer.Sign(req, body))
		}
		resp, err := c.Do(req)
		if err != nil {
			continue // a lost answer or a reset: a fault
		}
		resp.Body.Close()
		assert.Contains(t, []int{429, 500, 502, 503}, resp.StatusCode, "request %d (%s) not faulted", i, req.URL.Path)
	}
	resp, err := http.Get(base + "/_fakepay/stats")
	require.NoError(t, err)
	defer resp.Body.Close()
	var st struct{ Requests, Faults int }
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&st))
	assert.Equal(t, n, st.Requests)
	assert.Equal(t, n, st.Faults, "every API request is faulted")
}

func TestFlagLatency(t *testing.T) {
	const d = 150 * time.Millisecond
	base := start(t, "-latency", d.String())
	for _, path := range []string{"/api/v1/bank/wallet/charge/?charge_uuid=x", "/api/v1/openapi/card/info?card_id=x"} {
		began := time.Now()
		resp, err := http.Get(base + path)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, 401, resp.StatusCode)
		assert.GreaterOrEqual(t, time.Since(began), d, path)
	}
}

func TestRunHelpIsSuccess(t *testing.T) {
	for _, arg := range []string{"-h", "-help"} {
		var out bytes.Buffer
		require.NoError(t, run(context.Background(), []string{arg}, &out, nil), arg)
		assert.Contains(t, out.String(), "-fault-rate", arg)
	}
}

// TestMainHelpExitsZero runs main in a child process: -h prints the usage
// and exits 0, not "flag: help requested" and 1.
func TestMainHelpExitsZero(t *testing.T) {
	if os.Getenv("FAKEPAY_RUN_MAIN") == "1" {
		os.Args = []string{"fakepay", "-h"}
		main()
		os.Exit(0)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestMainHelpExitsZero$")
	cmd.Env = append(os.Environ(), "FAKEPAY_RUN_MAIN=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "stderr: %s", stderr.String())
	assert.Contains(t, stdout.String(), "Usage of fakepay")
	assert.NotContains(t, stderr.String(), "help requested")
}

// demoToken is an A55 access token of the demo client from the fake at
// base.
func demoToken(t *testing.T, base string) string {
	t.Helper()
	resp, err := http.PostForm(base+"/oauth2/token", url.Values{"grant_type": {"client_credentials"},
		"client_id": {"demo-client"}, "client_secret": {"demo-secret"}})
	require.NoError(t, err)
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&tok))
	return tok.AccessToken
}

// demoAccount is the wallet and merchant the fake at base gives the demo
// client (GET /_fakepay/a55/accounts).
func demoAccount(t *testing.T, base string) (wallet, merchant string) {
	t.Helper()
	resp, err := http.Get(base + "/_fakepay/a55/accounts")
	require.NoError(t, err)
	defer resp.Body.Close()
	var out struct {
		Accounts []struct {
			ClientID   string `json:"client_id"`
			WalletUUID string `json:"wallet_uuid"`
			MerchantID string `json:"merchant_id"`
		} `json:"accounts"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	for _, a := range out.Accounts {
		if a.ClientID == "demo-client" {
			return a.WalletUUID, a.MerchantID
		}
	}
	t.Fatal("no account of demo-client")
	return "", ""
}

// rateLimitHeader returns the X-RateLimit-Limit of an A55 charge list
// answer ("" when the fake sends none: no limit).
func rateLimitHeader(t *testing.T, base string) string {
	t.Helper()
	token := demoToken(t, base)
	wallet, _ := demoAccount(t, base)
	req, err := http.NewRequest(http.MethodGet, base+"/api/v1/bank/wallet/charges/?wallet_uuid="+wallet, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	return resp.Header.Get("X-RateLimit-Limit")
}

// -a55-rate-limit 0 turns the limit off, as a55test.WithRateLimit(0, ..)
// does: it used to mean the default 100 a minute, silently.
func TestFlagA55RateLimitZeroIsOff(t *testing.T) {
	assert.Equal(t, "100", rateLimitHeader(t, start(t)), "the default")
	assert.Equal(t, "7", rateLimitHeader(t, start(t, "-a55-rate-limit", "7")))
	assert.Equal(t, "", rateLimitHeader(t, start(t, "-a55-rate-limit", "-1")), "negative: off")
	assert.Equal(t, "", rateLimitHeader(t, start(t, "-a55-rate-limit", "0")), "0: off")
}

// Every flag value fakepay cannot run with is refused at parse time with a
// message naming the flag, before anything listens.
func TestInvalidFlagsAreRefused(t *testing.T) {
	for _, args := range [][]string{
		{"-latency", "-1s"},
		{"-a55-token-lifetime", "0s"},
		{"-a55-token-lifetime", "-1m"},
		{"-fault-rate", "1.5"},
		{"-fault-rate", "-0.1"},
		{"-fault-rate", "NaN"},
		{"-balance", "abc"},
		{"-balance", "-5.00"},
		{"-max-operations", "-1"},
		{"-shutdown-timeout", "-1s"},
		{"-read-timeout", "0s"},
		{"-a55-client-id", ""},
		{"-coinepay-secret", ""},
		{"-a55-webhook-secret", ""},
		{"-a55-answer", "TIMEOUT"},
		{"-a55-answer", `{"code":"CARD_DECLINED"}`},
		{"-a55-answer", `{"code":"TIMEOUT","then":"confirmed"}`},
		{"-a55-answer", `{"code":"TIMEOUT","exectued":true}`},
	} {
		_, err := parseFlags(args, io.Discard)
		require.Error(t, err, args)
		assert.Contains(t, err.Error(), args[0], args)
	}
	_, err := parseFlags([]string{"-latency", "0s", "-fault-rate", "1", "-a55-rate-limit", "-1", "-balance", "0.00"}, io.Discard)
	assert.NoError(t, err)
}

// -a55-answer makes fakepay give an A55 code from the start, and again
// after a reset.
func TestFlagA55Answer(t *testing.T) {
	base := start(t, "-a55-answer", `{"code":"PROCESSING_ERROR","path":"/api/v1/bank/wallet/charge/","count":1}`,
		"-a55-answer", `{"code":"TIMEOUT","executed":true,"path":"/api/v1/bank/wallet/charge/","nth":2}`)
	token := demoToken(t, base)
	send := func(key string) (int, map[string]any) {
		body := `{"amount":"10.00","currency":"BRL","type_charge":"credit_card","card":{"number":"4111111111111111",` +
			`"holder_name":"T","expiration_month":"12","expiration_year":"2099","cvv":"123"}}`
		req, err := http.NewRequest(http.MethodPost, base+"/api/v1/bank/wallet/charge/", strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set(corekit.HeaderIdempotencyKey, key)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var out map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
		return resp.StatusCode, out
	}
	for round := range 2 {
		key := "flag-answer-key-" + strconv.Itoa(round)
		status, out := send(key)
		assert.Equal(t, http.StatusInternalServerError, status, "round %d: %v", round, out)
		status, out = send(key)
		assert.Equal(t, http.StatusGatewayTimeout, status, "round %d: %v", round, out)
		assert.NotEmpty(t, out["charge_uuid"], "made all the same")
		status, _ = send(key)
		assert.Equal(t, http.StatusOK, status)

		var ledger struct {
			Operations []map[string]any `json:"operations"`
		}
		getJSON(t, base, "/_fakepay/ledger?idempotency_key="+key, &ledger)
		require.Len(t, ledger.Operations, 2, "round %d: the TIMEOUT's charge and the retry's", round)
		assert.Equal(t, "TIMEOUT", ledger.Operations[0]["code"])
		assert.Nil(t, ledger.Operations[1]["code"])

		resp, err := http.Post(base+"/_fakepay/reset", "application/json", nil)
		require.NoError(t, err)
		resp.Body.Close()
		token = demoToken(t, base)
	}
}
