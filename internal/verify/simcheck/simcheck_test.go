package simcheck

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// scenario is one exhaustive check and the fewest interleavings it must
// cover, so that a harness that stopped scheduling cannot pass by
// checking nothing.
type scenario struct {
	sc      Scenario
	minRuns int
}

// scenarios are the exhaustive checks: each explores every schedule of
// its workers' steps, the provider's answers, crashes and clock moves
// within its bounds. small is the bound under the race detector or
// -short: fewer answers and attempts, every schedule of them still.
func scenarios(small bool) []scenario {
	pick := func(full, short []Answer) []Answer {
		if small {
			return short
		}
		return full
	}
	n := func(full, short int) int {
		if small {
			return short
		}
		return full
	}
	out := []scenario{
		{Scenario{Name: "coinepay two workers, every answer", Provider: Coinepay,
			Answers: pick(DefaultAnswers(Coinepay), []Answer{Answer2xx, Answer4xxFinalNotKept, Answer5xx}),
			Workers: []Worker{{Name: "A", MaxAttempts: 2}, {Name: "B", MaxAttempts: 1}}}, n(150, 50)},
		{Scenario{Name: "a55 two workers, every answer", Provider: A55,
			Answers: pick(DefaultAnswers(A55), []Answer{Answer2xx, Answer4xxKept, AnswerLost}),
			Workers: []Worker{{Name: "A", MaxAttempts: 2}, {Name: "B", MaxAttempts: 1}}}, n(100, 40)},
		{Scenario{Name: "lease expires while a worker still sends", Provider: Coinepay,
			Answers: pick([]Answer{Answer2xx, Answer4xxFinalNotKept, Answer5xx, AnswerLost}, []Answer{Answer2xx, Answer4xxFinalNotKept, AnswerLost}),
			Workers: []Worker{{Name: "A", MaxAttempts: 2}, {Name: "B", MaxAttempts: 1}},
			Env:     []EnvStep{{Advance: 10 * time.Minute}}}, n(2200, 120)},
		{Scenario{Name: "a worker crashes anywhere, the job is redelivered", Provider: A55,
			Answers: pick([]Answer{Answer2xx, Answer5xx, AnswerLost}, []Answer{Answer2xx, AnswerLost}),
			Workers: []Worker{{Name: "A", MaxAttempts: n(2, 1), Crashes: 1}, {Name: "B", MaxAttempts: 1}}}, n(300, 50)},
		{Scenario{Name: "a worker's clock runs 48 h ahead, a day passes", Provider: A55,
			Answers: pick([]Answer{Answer2xx, Answer5xx, AnswerLost}, []Answer{Answer2xx, AnswerLost}),
			Workers: []Worker{{Name: "ahead", MaxAttempts: 1, ClockOffset: 48 * time.Hour}, {Name: "B", MaxAttempts: 1}},
			Env:     []EnvStep{{Advance: 30 * time.Hour}}}, n(40, 30)},
		{Scenario{Name: "a worker's clock runs 10 min ahead, leases expire", Provider: Coinepay,
			Answers: pick([]Answer{Answer2xx, Answer5xx, AnswerLost}, []Answer{Answer2xx, AnswerLost}),
			Workers: []Worker{{Name: "ahead", MaxAttempts: n(2, 1), ClockOffset: 10 * time.Minute}, {Name: "B", MaxAttempts: 1}},
			Env:     []EnvStep{{Advance: 3 * time.Minute}}}, n(1500, 50)},
		{Scenario{Name: "two merchants, one client ID on two origins, one journal", Provider: A55,
			Answers:   []Answer{Answer2xx, AnswerLost},
			Merchants: []Merchant{{Origin: "http://127.0.0.1:9001", ClientID: "shop"}, {Origin: "http://127.0.0.2:9001", ClientID: "shop"}},
			Workers:   []Worker{{Name: "sandbox", Merchant: 0, MaxAttempts: 1}, {Name: "production", Merchant: 1, MaxAttempts: 1}}}, 20},
		{Scenario{Name: "two references, same charge, answers without keys, one settled by lookup", Provider: A55, SameRequest: true,
			Answers: pick([]Answer{Answer2xx, Answer5xx, AnswerLost}, []Answer{Answer2xx, Answer5xx}),
			Workers: []Worker{{Name: "A", MaxAttempts: 1}, {Name: "B", Reference: 1, MaxAttempts: 1}, {Name: "settle A", Settle: true}},
			Env:     []EnvStep{{Advance: 25 * time.Hour}}}, n(1000, 100)},
		{Scenario{Name: "three workers", Provider: Coinepay,
			Answers: pick([]Answer{Answer2xx, Answer4xxFinalNotKept, AnswerLost}, []Answer{Answer2xx, AnswerLost}),
			Workers: []Worker{{Name: "A", MaxAttempts: 1}, {Name: "B", MaxAttempts: 1}, {Name: "C", MaxAttempts: 1}}}, n(550, 120)},
	}
	if small {
		// The widest scenarios stop after so many runs: the depth-first
		// order covers every schedule of the last steps first.
		for i := range out {
			out[i].sc.MaxRuns = 150
			out[i].minRuns = min(out[i].minRuns, 50)
		}
	}
	return out
}

// small reports whether the exploration takes its small bound: under
// the race detector (ten times slower) or -short.
func small() bool { return raceEnabled || testing.Short() }

// TestExhaustive explores every scenario and fails on the first
// counterexample, printed with the choices that lead to it and what each
// worker did.
func TestExhaustive(t *testing.T) {
	total := Stats{}
	for _, s := range scenarios(small()) {
		t.Run(s.sc.Name, func(t *testing.T) {
			st, vs, err := Explore(s.sc)
			require.NoError(t, err)
			t.Logf("%s: %d interleavings, %d distinct states, %d steps, deepest run %d choices, truncated %t",
				s.sc.Name, st.Runs, st.States, st.Steps, st.MaxChoice, st.Truncated)
			for _, v := range vs {
				t.Error(v.Error())
			}
			require.GreaterOrEqual(t, st.Runs, s.minRuns, "the exploration covered fewer interleavings than it must")
			total.Runs += st.Runs
			total.States += st.States
		})
	}
	t.Logf("all scenarios: %d interleavings, %d distinct states", total.Runs, total.States)
}

// TestHolesReport is the record of what the checker finds; it runs every
// scenario to its end and lists the first counterexample of each kind
// (set SIMCHECK_REPORT=1).
func TestHolesReport(t *testing.T) {
	if os.Getenv("SIMCHECK_REPORT") == "" {
		t.Skip("set SIMCHECK_REPORT=1 to list every kind of counterexample")
	}
	for _, s := range scenarios(false) {
		sc := s.sc
		sc.KeepGoing = true
		st, vs, err := Explore(sc)
		require.NoError(t, err)
		t.Logf("== %s: %d interleavings, %d states, %d violating", sc.Name, st.Runs, st.States, st.Violating)
		for _, v := range vs {
			t.Logf("%s", strings.TrimSpace(v.Error()))
		}
	}
}
