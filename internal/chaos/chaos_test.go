package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/coinepay/coinepaytest"
)

// testConfig is a bounded run for go test -race: a few thousand
// operations, a fixed seed, well under a minute on 2 cores.
func testConfig(n int) Config {
	cfg := DefaultConfig()
	cfg.Operations = n
	cfg.Concurrency = 16
	cfg.Seed = 42
	// Under -race on a loaded machine an attempt can outlast the
	// default 2 s and be retried, which adds an attempt the tests that
	// compare counts (same seed, same faults; one attempt per submission
	// without faults) do not expect. The injected faults do not rely on
	// timeouts: a delay fault holds a request 2 ms.
	cfg.Retry.AttemptTimeout = time.Minute
	cfg.Retry.MaxElapsedTime = 2 * time.Minute
	return cfg
}

// syncBuffer is a bytes.Buffer safe for the run's concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// tokenRecorder wraps the SDK clients' transports and keeps every bearer
// token the A55 client sent that the server accepted: the tokens the fake
// actually issued to the run.
type tokenRecorder struct {
	mu     sync.Mutex
	tokens map[string]bool
}

func (tr *tokenRecorder) wrap(provider string, next http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		auth := req.Header.Get("Authorization")
		resp, err := next.RoundTrip(req)
		if provider == providerA55 && err == nil && resp.StatusCode != http.StatusUnauthorized {
			if tok, ok := strings.CutPrefix(auth, "Bearer "); ok && tok != "" {
				tr.mu.Lock()
				if tr.tokens == nil {
					tr.tokens = map[string]bool{}
				}
				tr.tokens[tok] = true
				tr.mu.Unlock()
			}
		}
		return resp, err
	})
}

func (tr *tokenRecorder) all() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	var out []string
	for t := range tr.tokens {
		out = append(out, t)
	}
	return out
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// assertNoSecrets checks that none of the run's secrets, nor any access
// token the A55 fake issued, shows in the given output.
func assertNoSecrets(t *testing.T, cfg Config, tokens []string, outputs map[string]string) {
	t.Helper()
	require.NotEmpty(t, tokens, "the A55 client was issued tokens")
	secrets := []string{"4111111111111111", `"cvv"`, "cvv=123", cfg.A55ClientSecret, cfg.CoinepaySecret, "Bearer "}
	secrets = append(secrets, tokens...)
	for name, out := range outputs {
		for _, bad := range secrets {
			require.NotEmpty(t, bad)
			assert.NotContains(t, out, bad, "a secret in the %s", name)
		}
	}
}

// observed is a run with everything it printed captured.
type observed struct {
	rep                  *Report
	text, logs, progress string
	tokens               []string
}

// observedRun runs cfg capturing the report, the debug log, the progress
// output and every access token the A55 client used, and checks that the
// run passed and that none of it holds a secret.
func observedRun(t *testing.T, cfg Config) observed {
	t.Helper()
	var logs, progress syncBuffer
	var tokens tokenRecorder
	cfg.DebugLog = &logs
	cfg.Progress, cfg.ProgressInterval = &progress, 5*time.Millisecond
	cfg.wrapTransport = tokens.wrap
	rep, err := Run(context.Background(), cfg)
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, rep.WriteText(&out))
	t.Log("\n" + out.String())
	o := observed{rep: rep, text: out.String(), logs: logs.String(), progress: progress.String(), tokens: tokens.all()}

	assert.Zero(t, rep.Duplicates, "no operation may run twice")
	assert.Zero(t, rep.Lost, "no operation may be lost")
	assert.Zero(t, rep.Failed)
	assert.True(t, rep.Passed())
	assert.Positive(t, rep.Resumed, "operations that exhausted their retries are resumed")
	assert.Contains(t, o.logs, "payonce attempt")
	assert.Contains(t, o.progress, "progress:")
	js, err := json.Marshal(rep)
	require.NoError(t, err)
	assertNoSecrets(t, cfg, o.tokens, map[string]string{
		"report": o.text, "JSON report": string(js), "debug log": o.logs, "progress": o.progress,
	})
	return o
}

func TestChaosExactlyOnce(t *testing.T) {
	n := 2000
	if testing.Short() {
		n = 300
	}
	cfg := testConfig(n)
	// One attempt fewer than the default run, so that even the short run
	// exhausts the retries of some operations and resumes them.
	cfg.Retry.MaxAttempts = 3
	// Distinct secrets, so that finding one in the output means a leak.
	cfg.A55ClientSecret, cfg.CoinepaySecret = "a55-secret-9f3c1e", "coinepay-secret-7b2d40"
	o := observedRun(t, cfg)
	rep := o.rep
	assert.GreaterOrEqual(t, rep.Operations, n)
	assert.Greater(t, rep.Replays, 0, "lost answers are replayed")
	assert.Greater(t, rep.Attempts, rep.Operations, "faults force retries")
	assert.GreaterOrEqual(t, rep.ResumeRounds, 1)
	assert.NotEmpty(t, rep.Retries)
	lines := strings.Split(strings.TrimSpace(o.text), "\n")
	assert.Regexp(t, `^RESULT operations=\d+ attempts=\d+ replays=\d+ resumed=[1-9]\d* crashes=0 duplicates=0 lost=0 misrecorded=0$`, lines[len(lines)-1])
}

func TestChaosSameSeedSameFaults(t *testing.T) {
	cfg := testConfig(150)
	cfg.Concurrency = 1 // one order of requests, so the seeded faults fall the same way
	a, err := Run(context.Background(), cfg)
	require.NoError(t, err)
	b, err := Run(context.Background(), cfg)
	require.NoError(t, err)
	assert.Equal(t, a.Operations, b.Operations)
	assert.Equal(t, a.Attempts, b.Attempts)
	assert.Equal(t, a.Replays, b.Replays)
	assert.True(t, a.Passed() && b.Passed())
}

func TestChaosJSONReport(t *testing.T) {
	cfg := testConfig(60)
	cfg.FaultRate = 0
	rep, err := Run(context.Background(), cfg)
	require.NoError(t, err)
	b, err := json.Marshal(rep)
	require.NoError(t, err)
	var back map[string]any
	require.NoError(t, json.Unmarshal(b, &back))
	for _, k := range []string{"operations", "attempts", "replays", "resumed", "duplicates", "lost", "by_kind", "retries"} {
		assert.Contains(t, back, k)
	}
	assert.Equal(t, rep.Submissions, rep.Attempts, "without faults, one attempt per submission")
	assert.True(t, rep.Passed())
}

func TestConfigValidate(t *testing.T) {
	for _, mutate := range []func(*Config){
		func(c *Config) { c.Operations = 0 },
		func(c *Config) { c.Concurrency = 0 },
		func(c *Config) { c.FaultRate = 1 },
		func(c *Config) { c.DuplicateRate = -1 },
		func(c *Config) { c.MaxResumeRounds = 0 },
		func(c *Config) { c.Retry.MaxAttempts = 0 },
	} {
		cfg := DefaultConfig()
		mutate(&cfg)
		_, err := Run(context.Background(), cfg)
		assert.Error(t, err)
	}
}

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
	// The default run is the mix: 10 % lost answers, 10 % 503,
	// 5 % resets, 5 % 429, 5 % delays.
	assert.Equal(t, "10.0% answer lost after commit, 10.0% 503 before commit, 5.0% connection reset, 5.0% 429 Retry-After, 5.0% delayed",
		mixFor(DefaultConfig().FaultRate).String())
}

func TestTestCardNotExpired(t *testing.T) {
	year, err := strconv.Atoi(testCard().ExpirationYear)
	require.NoError(t, err)
	assert.Greater(t, year, time.Now().Year(), "the run's card must stay valid whatever the date")
}

// TestChaosExternalServers points the run at servers it does not control,
// as at cmd/fakepay: faults come from the client-side transport, the
// ledgers and counters from the servers' admin API.
func TestChaosExternalServers(t *testing.T) {
	big, err := payonce.ParseAmount("100000000.00")
	require.NoError(t, err)
	a55Srv := a55test.NewServer(a55test.WithRateLimit(-1, time.Minute))
	defer a55Srv.Close()
	cpSrv := coinepaytest.NewServer(coinepaytest.WithBalance(big))
	defer cpSrv.Close()

	cfg := testConfig(400)
	cfg.A55URL, cfg.CoinepayURL = a55Srv.URL+"/", cpSrv.URL // a trailing slash is fine
	cfg.A55ClientID, cfg.A55ClientSecret = a55Srv.ClientID(), a55Srv.ClientSecret()
	cfg.CoinepayKey, cfg.CoinepaySecret = coinepaytest.DefaultAPIKey, coinepaytest.DefaultSecret
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
