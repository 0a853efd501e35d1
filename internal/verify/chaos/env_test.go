package chaos

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/coinepay/coinepaytest"
)

func TestFaultMixRules(t *testing.T) {
	for _, f := range []float64{0.1, 0.3, 0.35, 0.9} {
		m := mixFor(f)
		// The shares sum to exactly the total rate, 2:2:1:1:1.
		assert.InDelta(t, f, m.total(), 1e-12, "f=%v", f)
		assert.InDelta(t, f*2/7, m.drop, 1e-12)
		assert.InDelta(t, f*2/7, m.errBefore, 1e-12)
		assert.InDelta(t, f/7, m.reset, 1e-12)
		assert.InDelta(t, f/7, m.rateLimit, 1e-12)
		assert.InDelta(t, f/7, m.delayBefore+m.delayAfter, 1e-12)

		rules := m.rules()
		require.Len(t, rules, 6)
		// The conditional probabilities multiply back to the mix, and what
		// is left unfaulted is 1-f.
		left, got := 1.0, []float64{}
		for _, r := range rules {
			assert.Greater(t, r.Probability, 0.0)
			assert.Less(t, r.Probability, 1.0)
			got = append(got, left*r.Probability)
			left *= 1 - r.Probability
		}
		want := []float64{m.drop, m.errBefore, m.reset, m.rateLimit, m.delayBefore, m.delayAfter}
		for i := range want {
			assert.InDelta(t, want[i], got[i], 1e-9)
		}
		assert.InDelta(t, 1-f, left, 1e-9, "f=%v: the rules fault exactly f of the requests", f)
	}
	assert.Empty(t, mixFor(0).rules())
	// The default run's mix: 10 % lost answers, 10 % 503,
	// 5 % resets, 5 % 429, 5 % delays.
	assert.Equal(t, "10.0% answer lost after commit, 10.0% 503 before commit, 5.0% connection reset, 5.0% 429 Retry-After, 5.0% delayed",
		mixFor(DefaultConfig().FaultRate).String())
}

// externalServers starts an A55 fake without a rate limit and a Coinepay
// fake with a large balance, closed when t ends, and a run of n operations
// configured to use them as servers it does not control.
func externalServers(t *testing.T, n int) (*a55test.Server, *coinepaytest.Server, Config) {
	t.Helper()
	big, err := payonce.ParseAmount("100000000.00")
	require.NoError(t, err)
	a55Srv := a55test.NewServer(a55test.WithRateLimit(-1, time.Minute))
	t.Cleanup(a55Srv.Close)
	cpSrv := coinepaytest.NewServer(coinepaytest.WithBalance(big))
	t.Cleanup(cpSrv.Close)
	cfg := testConfig(n)
	cfg.A55URL, cfg.CoinepayURL = a55Srv.URL, cpSrv.URL
	cfg.A55ClientID, cfg.A55ClientSecret = a55Srv.ClientID(), a55Srv.ClientSecret()
	cfg.CoinepayKey, cfg.CoinepaySecret = coinepaytest.DefaultAPIKey, coinepaytest.DefaultSecret
	return a55Srv, cpSrv, cfg
}

// TestChaosExternalServers points the run at servers it does not control,
// as at cmd/fakepay: faults come from the client-side transport, the
// ledgers and counters from the servers' admin API.
func TestChaosExternalServers(t *testing.T) {
	t.Parallel()
	a55Srv, cpSrv, cfg := externalServers(t, 400)
	cfg.A55URL += "/" // a trailing slash is fine
	cfg.Retry.MaxAttempts = 3
	o := observedRun(t, cfg)
	rep := o.rep

	assert.Contains(t, rep.Faults, "client-side for external servers")
	assert.GreaterOrEqual(t, rep.Operations, 400)
	var retries int
	for _, c := range rep.Retries {
		retries += c.Count
	}
	assert.Positive(t, retries, "injected faults force retries")
	assert.Greater(t, rep.Attempts, rep.Submissions)
	assert.Positive(t, rep.Replays, "answers dropped after the server had them are replayed")
	assert.Positive(t, rep.Resumed)

	// The report's figures are the servers' own.
	assert.Equal(t, rep.Operations, a55Srv.Ledger().Len()+cpSrv.Ledger().Len(), "each operation executed once")
	st := a55Srv.Stats()
	cs := cpSrv.Stats()
	assert.Equal(t, st.Replayed+cs.Replayed, rep.Replays)
	assert.Equal(t, st.Requests+cs.Requests, rep.Server.Requests)
	assert.Less(t, rep.Server.Requests, rep.Attempts, "some attempts never reached the servers")
}

// An external server that is not reachable is a run that could not take
// place, not a failed proof.
func TestChaosExternalServerDown(t *testing.T) {
	cfg := testConfig(10)
	cfg.CoinepayURL = "http://127.0.0.1:1"
	_, err := Run(context.Background(), cfg)
	assert.Error(t, err)
}

// The client-side transport injects the same mix as the fakes do: each
// fault at its share, f in all.
func TestFaultTransportMix(t *testing.T) {
	t.Parallel()
	const n = 5000
	m := mixFor(0.35)
	var reached int
	next := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		reached++
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: req}, nil
	})
	ft := newFaultTransport(next, m, 7)
	counts := map[string]int{}
	for range n {
		req, err := http.NewRequest(http.MethodPost, "http://x/api/v1/op", nil)
		require.NoError(t, err)
		before := reached
		resp, err := ft.RoundTrip(req)
		switch {
		case errors.Is(err, errInjectedDrop):
			assert.Equal(t, before+1, reached, "a dropped answer's request reached the server")
			counts["drop"]++
		case errors.Is(err, errInjectedReset):
			counts["reset"]++
		case err != nil:
			t.Fatal(err)
		case resp.StatusCode == http.StatusServiceUnavailable:
			counts["503"]++
		case resp.StatusCode == http.StatusTooManyRequests:
			assert.Equal(t, "1", resp.Header.Get("Retry-After"))
			counts["429"]++
		default:
			counts["ok"]++
		}
	}
	tol := 0.015
	assert.InDelta(t, m.drop, float64(counts["drop"])/n, tol)
	assert.InDelta(t, m.errBefore, float64(counts["503"])/n, tol)
	assert.InDelta(t, m.reset, float64(counts["reset"])/n, tol)
	assert.InDelta(t, m.rateLimit, float64(counts["429"])/n, tol)
	// Delayed requests succeed; what fails is f minus the delays.
	assert.InDelta(t, 1-m.total()+m.delayBefore+m.delayAfter, float64(counts["ok"])/n, tol)

	// Non-API paths (the token endpoint, the admin API) pass untouched, and
	// off() ends the faults.
	req, _ := http.NewRequest(http.MethodPost, "http://x/oauth2/token", nil)
	for range 100 {
		_, err := ft.RoundTrip(req)
		require.NoError(t, err)
	}
	ft.setStopped(true)
	for range 100 {
		req, _ := http.NewRequest(http.MethodPost, "http://x/api/v1/op", nil)
		resp, err := ft.RoundTrip(req)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode)
	}
}

// A second run against external servers that served an earlier run
// reconciles only its own operations: none of the first run's ledger
// entries count as lost, and the server figures are this run's.
func TestChaosExternalServersServedEarlierRuns(t *testing.T) {
	t.Parallel()
	a55Srv, cpSrv, cfg := externalServers(t, 60)
	cfg.FaultRate = 0

	first, err := Run(context.Background(), cfg)
	require.NoError(t, err)
	require.True(t, first.Passed(), first.ResultLine())
	before := a55Srv.Stats().Requests + cpSrv.Stats().Requests

	cfg.Seed++
	second, err := Run(context.Background(), cfg)
	require.NoError(t, err)
	assert.Zero(t, second.Lost, second.ResultLine())
	assert.True(t, second.Passed())
	assert.Equal(t, a55Srv.Ledger().Len()+cpSrv.Ledger().Len()-first.Operations, second.Operations)
	assert.Equal(t, a55Srv.Stats().Requests+cpSrv.Stats().Requests-before, second.Server.Requests)
}
