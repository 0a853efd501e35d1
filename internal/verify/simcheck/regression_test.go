package simcheck

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// regressions are counterexamples the exploration found, kept as named
// cases: each replays the path that broke an invariant and then explores
// every continuation from there.
var regressions = []struct {
	name string
	sc   Scenario
}{
	{
		// Worker A passes its fence check for a retry and stalls before
		// the request leaves; its lease expires and B takes the entry
		// over (fence 2); B's attempt is refused with a 4xx Coinepay does
		// not keep and B records failed; A's stalled attempt then arrives
		// and executes, its answer lost. The journal says failed for a
		// key the provider executed. A refusal is final for the key only
		// when no earlier run's attempt under it can still arrive.
		name: "stalled attempt executes after the take-over recorded a refusal",
		sc: Scenario{Provider: Coinepay,
			Answers: []Answer{Answer2xx, Answer4xxFinalNotKept, Answer5xx, AnswerLost},
			Workers: []Worker{{Name: "A", MaxAttempts: 2}, {Name: "B", MaxAttempts: 1}},
			Env:     []EnvStep{{Advance: 10 * time.Minute}},
			Script: []string{"A reserve", "A sends, provider answers 5xx", "A begin attempt", "B reserve",
				"env: clock +10m0s", "B take", "B begin attempt", "B sends, provider answers 4xx final, not kept",
				"A sends, provider answers lost after commit"}},
	},
	{
		// Main recorded the refusal one worker got over the 2xx its twin
		// got a moment later (the 2xx's update refused as settled): the
		// journal and both callers said failed for an executed charge.
		name: "a 2xx after a twin's refusal under the same key wins",
		sc: Scenario{Provider: Coinepay,
			Answers: []Answer{Answer2xx, Answer4xxFinalNotKept, Answer5xx},
			Workers: []Worker{{Name: "A", MaxAttempts: 2}, {Name: "B", MaxAttempts: 1}},
			Env:     []EnvStep{{Advance: 10 * time.Minute}},
			Script:  []string{"A reserve", "A sends, provider answers 5xx", "B reserve", "env: clock +10m0s"}},
	},
	{
		// Main: a worker 48 h ahead reserved and sent; a day later an
		// honest worker saw a negative key age and sent the key again
		// past the provider's window: two executions.
		name: "a key reserved 48 h ahead is not sent past its window",
		sc: Scenario{Provider: A55,
			Answers: []Answer{Answer2xx, Answer5xx, AnswerLost},
			Workers: []Worker{{Name: "ahead", MaxAttempts: 1, ClockOffset: 48 * time.Hour}, {Name: "B", MaxAttempts: 1}},
			Env:     []EnvStep{{Advance: 30 * time.Hour}}},
	},
	{
		// Main: one client ID on sandbox and production shared a scope;
		// production's reference was answered from sandbox's entry and
		// never sent.
		name: "two origins with one client ID never share an entry",
		sc: Scenario{Provider: A55, Answers: []Answer{Answer2xx, AnswerLost},
			Merchants: []Merchant{{Origin: "http://127.0.0.1:9001", ClientID: "shop"}, {Origin: "http://127.0.0.2:9001", ClientID: "shop"}},
			Workers:   []Worker{{Name: "sandbox", Merchant: 0, MaxAttempts: 1}, {Name: "production", Merchant: 1, MaxAttempts: 1}}},
	},
	{
		// Main: order A's charge never ran (its attempt got a 503);
		// order B, the same charge under another reference, was charged
		// and recorded. A55's answers carry no key, so A's settle lookup
		// found one charge of A's amount and description in A's window
		// and recorded A as paid with B's charge, which the journal held
		// as B's outcome.
		name: "a lookup never takes the charge another reference holds",
		sc: Scenario{Provider: A55, SameRequest: true, Answers: []Answer{Answer2xx, Answer5xx, AnswerLost},
			Workers: []Worker{{Name: "A", MaxAttempts: 1}, {Name: "B", Reference: 1, MaxAttempts: 1}, {Name: "settle A", Settle: true}},
			Env:     []EnvStep{{Advance: 25 * time.Hour}},
			Script: []string{"A reserve", "A sends, provider answers 5xx", "A update pending", "B reserve",
				"B sends, provider answers 2xx", "B update succeeded", "env: clock +25h"}},
	},
}

func TestRegressions(t *testing.T) {
	for _, r := range regressions {
		t.Run(r.name, func(t *testing.T) {
			sc := r.sc
			sc.Name = r.name
			if sc.MaxRuns == 0 {
				// A lost A55 answer is looked up before the call ends,
				// which multiplies the schedules; the depth-first order
				// covers every schedule of the last steps first.
				sc.MaxRuns = 2000
			}
			st, vs, err := Explore(sc)
			require.NoError(t, err)
			t.Logf("%d interleavings, %d distinct states", st.Runs, st.States)
			for _, v := range vs {
				t.Error(v.Error())
			}
			require.Positive(t, st.Runs)
		})
	}
}
