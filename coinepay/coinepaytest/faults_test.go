package coinepaytest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce/coinepay/coinepaytest"
	"github.com/payonce/payonce/internal/corekit"
	"github.com/payonce/payonce/internal/fake/fakeserver"
	"github.com/payonce/payonce/internal/testsupport/admintest"
	"github.com/payonce/payonce/payoncetest"
)

// try sends one signed attempt on a fresh connection (so net/http never
// resends it by itself) and returns the transport error, if any.
func try(ctx context.Context, s *coinepaytest.Server, key, body string) (answer, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/api/v1/openapi/card/apply", strings.NewReader(body))
	if err != nil {
		return answer{}, err
	}
	req.Header.Set(corekit.HeaderIdempotencyKey, key)
	if err := s.Signer().Sign(req, []byte(body)); err != nil {
		return answer{}, err
	}
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return answer{}, err
	}
	a := answer{Status: resp.StatusCode, Header: resp.Header, Raw: raw}
	return a, json.Unmarshal(raw, &a.Env)
}

func TestFaultDropAfterCommit(t *testing.T) {
	s := coinepaytest.New(t)
	require.NoError(t, s.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: "/api/v1/openapi/card/apply", Count: 1}))
	_, err := try(context.Background(), s, "drop-1", applyBody)
	require.Error(t, err, "the response is lost")
	assert.Equal(t, 1, s.Ledger().Count("drop-1"), "but the card was issued")

	a, err := try(context.Background(), s, "drop-1", applyBody)
	require.NoError(t, err)
	assert.Equal(t, 200, a.Status)
	assert.Equal(t, "true", a.Header.Get(corekit.HeaderReplay))
	assert.True(t, s.Ledger().ExecutedOnce("drop-1"))
	reqs := s.Requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, payoncetest.FaultDropAfterCommit, reqs[0].Fault)
	assert.Equal(t, 0, reqs[0].Status)
	assert.True(t, reqs[0].Executed)
}

func TestFaultResetBeforeRead(t *testing.T) {
	s := coinepaytest.New(t)
	require.NoError(t, s.AddFault(payoncetest.Rule{Fault: payoncetest.FaultResetBeforeRead, IdempotencyKey: "rst-1", Count: 1}))
	_, err := try(context.Background(), s, "rst-1", applyBody)
	require.Error(t, err)
	assert.Equal(t, 0, s.Ledger().Count("rst-1"), "nothing ran")
	a, err := try(context.Background(), s, "rst-1", applyBody)
	require.NoError(t, err)
	assert.Equal(t, 200, a.Status)
	assert.Empty(t, a.Header.Get(corekit.HeaderReplay))
	assert.True(t, s.Ledger().ExecutedOnce("rst-1"))
}

func TestFaultRateLimit(t *testing.T) {
	s := coinepaytest.New(t)
	require.NoError(t, s.AddFault(payoncetest.Rule{Fault: payoncetest.FaultRateLimit, RetryAfter: 2, Count: 1}))
	a := apply(t, s, "rl-1", applyBody)
	assert.Equal(t, 429, a.Status)
	assert.Equal(t, "2", a.Header.Get("Retry-After"))
	assert.Equal(t, "openapi_rate_limited", a.Env.MessageKey)
	assert.Equal(t, 200, apply(t, s, "rl-1", applyBody).Status)
}

func TestFaultNth(t *testing.T) {
	s := coinepaytest.New(t)
	require.NoError(t, s.AddFault(payoncetest.Rule{Fault: payoncetest.FaultErrorBeforeCommit, Nth: 2}))
	assert.Equal(t, 200, apply(t, s, "nth-1", applyBody).Status)
	a := apply(t, s, "nth-2", applyBody)
	assert.Equal(t, 503, a.Status, "default status")
	assert.Equal(t, 200, apply(t, s, "nth-3", applyBody).Status)
}

func TestFaultDelayAfterCommit(t *testing.T) {
	s := coinepaytest.New(t)
	// The answer is held a minute after the commit; the client gives up
	// once the ledger shows the commit, not after a timer a loaded
	// machine can fire before the request even arrives.
	require.NoError(t, s.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDelay, Delay: time.Minute, When: "after", Count: 1}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		_ = s.Ledger().WaitCount(ctx, "late-1", 1)
		cancel()
	}()
	_, err := try(ctx, s, "late-1", applyBody)
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 1, s.Ledger().Count("late-1"), "the operation committed although the client gave up")
	a, err := try(context.Background(), s, "late-1", applyBody)
	require.NoError(t, err)
	assert.Equal(t, "true", a.Header.Get(corekit.HeaderReplay))
}

func TestFaultHang(t *testing.T) {
	s := coinepaytest.New(t)
	require.NoError(t, s.AddFault(payoncetest.Rule{Fault: payoncetest.FaultHang, Count: 1}))
	// The client's context ends the hang (which would last forever) once
	// the fault holds the request: a fixed deadline could end before the
	// request reached the fake on a loaded machine, and hangFired below
	// needs hang-1 logged.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			if fired, _ := admintest.FaultsFired(s.URL); fired == 1 {
				cancel()
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	_, err := try(ctx, s, "hang-1", applyBody)
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 0, s.Ledger().Len())

	// A hanging request also ends when the server closes.
	require.NoError(t, s.AddFault(payoncetest.Rule{Fault: payoncetest.FaultHang, Count: 1}))
	errc := make(chan error, 1)
	go func() {
		_, err := try(context.Background(), s, "hang-2", applyBody)
		errc <- err
	}()
	require.Eventually(t, func() bool { return s.Ledger().Len() == 0 && hangFired(s) }, 10*time.Second, time.Millisecond)
	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	select {
	case err := <-errc:
		assert.Error(t, err)
	case <-time.After(30 * time.Second): // bounds a hang
		t.Fatal("hanging request did not end on Close")
	}
	<-closed
}

func hangFired(s *coinepaytest.Server) bool {
	for _, a := range s.Requests() {
		if a.IdempotencyKey == "hang-1" {
			return inFlightCount(s) == 2
		}
	}
	return false
}

func inFlightCount(s *coinepaytest.Server) int {
	fired, _ := admintest.FaultsFired(s.URL)
	return fired
}

func TestFaultRuleValidation(t *testing.T) {
	s := coinepaytest.New(t)
	assert.Error(t, s.AddFault(payoncetest.Rule{Fault: "explode"}))
	assert.Error(t, s.AddFault(payoncetest.Rule{Fault: payoncetest.FaultErrorBeforeCommit, Status: 404}))
	assert.Error(t, s.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDelay}))
	assert.Error(t, s.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDelay, Delay: time.Millisecond, When: "during"}))
}

func TestChaosDeterministicUnderSeed(t *testing.T) {
	run := func() map[string]string {
		s := coinepaytest.NewServer(payoncetest.WithSeed(7), payoncetest.WithFaultRate(0.5))
		defer s.Close()
		faults := map[string]string{}
		for i := range 20 {
			_, err := try(context.Background(), s, "chaos-"+string(rune('a'+i)), applyBody)
			_ = err
		}
		// The log is in completion order; faults were picked in arrival order.
		require.Eventually(t, func() bool { return len(s.Requests()) == 20 }, 10*time.Second, time.Millisecond)
		for _, a := range s.Requests() {
			faults[a.IdempotencyKey] = string(a.Fault)
		}
		return faults
	}
	a, b := run(), run()
	assert.Equal(t, a, b)
	kinds := map[string]bool{}
	for _, f := range a {
		kinds[f] = true
	}
	assert.True(t, kinds[string(payoncetest.FaultDropAfterCommit)])
	assert.True(t, kinds[""])
}

func TestAdminOverHTTP(t *testing.T) {
	s := coinepaytest.New(t)
	post := func(path, body string) *http.Response {
		resp, err := http.Post(s.URL+path, "application/json", strings.NewReader(body))
		require.NoError(t, err)
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	assert.Equal(t, 201, post("/_fakepay/faults", `{"fault":"error_before_commit","status":503}`).StatusCode)
	assert.Equal(t, 503, apply(t, s, "adm-1", applyBody).Status)
	req, _ := http.NewRequest(http.MethodDelete, s.URL+"/_fakepay/faults", nil)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 200, apply(t, s, "adm-1", applyBody).Status)

	assert.Equal(t, 200, post("/_fakepay/balance", `{"api_key":"demo-key","amount":"500.00"}`).StatusCode)
	assert.Equal(t, "500.00", s.Balance("demo-key").String())
	assert.Equal(t, 404, post("/_fakepay/balance", `{"api_key":"nope","amount":"1.00"}`).StatusCode)
	assert.Equal(t, 400, post("/_fakepay/balance", `{"api_key":`).StatusCode)

	before := s.Clock().Now()
	assert.Equal(t, 200, post("/_fakepay/clock", `{"advance":"25h"}`).StatusCode)
	assert.WithinDuration(t, before.Add(25*time.Hour), s.Clock().Now(), time.Second)
	assert.Equal(t, 400, post("/_fakepay/clock", `{"advance":"soon"}`).StatusCode)

	lr, err := http.Get(s.URL + "/_fakepay/ledger")
	require.NoError(t, err)
	defer lr.Body.Close()
	var ledger struct {
		Operations []map[string]any `json:"operations"`
	}
	require.NoError(t, json.NewDecoder(lr.Body).Decode(&ledger))
	require.Len(t, ledger.Operations, 1)
	assert.Equal(t, "coinepay", ledger.Operations[0]["provider"])
	assert.Equal(t, "card.apply", ledger.Operations[0]["kind"])
	assert.Equal(t, "adm-1", ledger.Operations[0]["idempotency_key"])
	assert.NotEmpty(t, ledger.Operations[0]["id"])

	rr, err := http.Get(s.URL + "/_fakepay/requests")
	require.NoError(t, err)
	defer rr.Body.Close()
	var reqs struct {
		Requests []payoncetest.Attempt `json:"requests"`
	}
	require.NoError(t, json.NewDecoder(rr.Body).Decode(&reqs))
	require.Len(t, reqs.Requests, 2)
	assert.Equal(t, payoncetest.FaultErrorBeforeCommit, reqs.Requests[0].Fault)

	assert.Equal(t, 200, post("/_fakepay/reset", ``).StatusCode)
	assert.Equal(t, 0, s.Ledger().Len())
	assert.Equal(t, 404, post("/_fakepay/nope", ``).StatusCode)
	g, err := http.Get(s.URL + "/_fakepay/reset")
	require.NoError(t, err)
	g.Body.Close()
	assert.Equal(t, 405, g.StatusCode)
}

func TestCloseIsIdempotent(t *testing.T) {
	s := coinepaytest.NewServer()
	s.Close()
	s.Close()
	_, err := http.Get(s.URL + "/_fakepay/ledger")
	assert.Error(t, err, "closed")
}

// The attempt log holds an attempt as soon as its client has the answer
// (or lost it): a test may assert on Requests() right after its call.
func TestRequestLoggedBeforeClientSeesOutcome(t *testing.T) {
	s := coinepaytest.New(t)
	for i := range 40 {
		if i%2 == 0 {
			require.NoError(t, s.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Count: 1}))
		}
		_, _ = try(context.Background(), s, fmt.Sprintf("log-key-%02d", i), applyBody)
		require.Len(t, s.Requests(), i+1, "attempt %d must be logged before its client sees the outcome", i+1)
	}
}

// A fault that acts at or after the commit is not counted when the request
// never gets that far (here: refused for its missing signature).
func TestFaultNotCountedWhenNotApplied(t *testing.T) {
	s := coinepaytest.New(t)
	require.NoError(t, s.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Count: 1}))
	resp, err := http.Post(s.URL+"/api/v1/openapi/card/apply", "application/json", strings.NewReader(applyBody))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.Zero(t, s.Stats().Faults)
	require.Len(t, s.Requests(), 1)
	assert.Empty(t, s.Requests()[0].Fault)
}

// A refusal before the commit is not kept: the same key and body execute
// on the next attempt, and that answer is the one kept.
func TestRefuseBeforeCommitAnswersOneKeyDifferentlyTwice(t *testing.T) {
	s := coinepaytest.New(t)
	const key = "job-refused-then-run"
	require.NoError(t, s.AddFault(payoncetest.Rule{Fault: payoncetest.FaultKind(fakeserver.RefuseBeforeCommit), IdempotencyKey: key, Count: 1}))
	first := apply(t, s, key, applyBody)
	assert.Equal(t, 400, first.Status)
	assert.Equal(t, "openapi_invalid_request", first.Env.MessageKey)
	assert.Empty(t, s.Ledger().Operations(), "a refusal executes nothing")

	second := apply(t, s, key, applyBody)
	require.Equal(t, 200, second.Status, "%s", second.Raw)
	id := cardID(t, second)
	third := apply(t, s, key, applyBody)
	assert.Equal(t, id, cardID(t, third), "the 2xx is kept and replayed")
	assert.Len(t, s.Ledger().Operations(), 1)
}

func TestRefuseBeforeCommitStatusIsA4xx(t *testing.T) {
	for _, st := range []int{200, 409, 429, 503} {
		r := fakeserver.Rule{Fault: fakeserver.RefuseBeforeCommit, Status: st}
		assert.Error(t, r.Validate(), "status %d", st)
	}
	r := fakeserver.Rule{Fault: fakeserver.RefuseBeforeCommit}
	require.NoError(t, r.Validate())
	assert.Equal(t, 400, r.Status)
}

// A key that executed is never refused: its kept answer comes back.
func TestRefuseBeforeCommitSparesAKeyThatRan(t *testing.T) {
	s := coinepaytest.New(t)
	const key = "job-ran-first"
	first := apply(t, s, key, applyBody)
	require.Equal(t, 200, first.Status)
	require.NoError(t, s.AddFault(payoncetest.Rule{Fault: payoncetest.FaultKind(fakeserver.RefuseBeforeCommit), IdempotencyKey: key, Count: 1}))
	again := apply(t, s, key, applyBody)
	assert.Equal(t, 200, again.Status)
	assert.Equal(t, cardID(t, first), cardID(t, again))
}
