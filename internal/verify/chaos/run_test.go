package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	o := observed{rep: rep, text: loggedText(t, rep), logs: logs.String(), progress: progress.String(), tokens: tokens.all()}

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
	t.Parallel()
	n := 600
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
	t.Parallel()
	cfg := testConfig(50)
	cfg.Concurrency = 1 // one order of requests, so the seeded faults fall the same way
	// Twins run in parallel: a twin's lookup after a lost answer (a list,
	// a read) would interleave with the other twin's requests.
	cfg.DuplicateRate, cfg.ConflictRate = 0, 0
	a, err := Run(context.Background(), cfg)
	require.NoError(t, err)
	b, err := Run(context.Background(), cfg)
	require.NoError(t, err)
	assert.Equal(t, a.Operations, b.Operations)
	assert.Equal(t, a.Attempts, b.Attempts)
	assert.Equal(t, a.Replays, b.Replays)
	assert.Positive(t, a.Replays, "the seeded faults fell: answers were lost and replayed")
	assert.Greater(t, a.Attempts, a.Operations, "the seeded faults fell: attempts were retried")
	assert.True(t, a.Passed() && b.Passed())
}

func TestChaosJSONReport(t *testing.T) {
	t.Parallel()
	cfg := testConfig(60)
	cfg.FaultRate, cfg.A55Codes = 0, false // A55's codes are faults too
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
