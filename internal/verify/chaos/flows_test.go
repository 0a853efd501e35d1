package chaos

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce/internal/corekit"
	"github.com/payonce/payonce/internal/fake/a55fake"
)

// flowsByName indexes a report's flows.
func flowsByName(fs []FlowCount) map[string]FlowCount {
	out := map[string]FlowCount{}
	for _, f := range fs {
		out[f.Flow] = f
	}
	return out
}

// The fault run makes PIX and 3DS charges beside card charges, has the
// A55 fake answer creates with A55's codes, and checks them all: every
// create executed once, each PIX paid or expired and each 3DS challenge
// completed or abandoned as the trigger says, every retry after
// 3DS_UNAVAILABLE waited its minute (on the injected sleep).
func TestRunExercisesPixAnd3DSAndA55Codes(t *testing.T) {
	t.Parallel()
	rep, err := Run(context.Background(), testConfig(900))
	require.NoError(t, err)
	loggedText(t, rep)
	require.True(t, rep.Passed(), "problems: %v", rep.Problems)
	flows := flowsByName(rep.ByFlow)
	for _, f := range []string{flowCard, flowPix, flow3DS} {
		assert.Positive(t, flows[f].Count, f)
		assert.Equal(t, flows[f].Count, flows[f].Ledger, "%s: each create executed exactly once", f)
	}
	sum := func(m map[string]int) int {
		n := 0
		for _, v := range m {
			n += v
		}
		return n
	}
	assert.Equal(t, flows[flowPix].Count, sum(flows[flowPix].Outcomes), "every PIX paid or expired")
	assert.Subset(t, []string{"paid", "expired"}, keys(flows[flowPix].Outcomes))
	assert.Equal(t, flows[flow3DS].Count, sum(flows[flow3DS].Outcomes), "every 3DS challenge completed or abandoned")
	assert.Subset(t, []string{"confirmed", "canceled"}, keys(flows[flow3DS].Outcomes))

	codes := map[string]int{}
	for _, c := range rep.Codes {
		codes[c.Cause] = c.Count
	}
	for _, c := range []string{"TIMEOUT", "TIMEOUT (executed)", "DUPLICATE_REQUEST", "3DS_UNAVAILABLE", "PROCESSING_ERROR"} {
		assert.Positive(t, codes[c], c)
	}
	assert.Positive(t, rep.LongWaits, "3DS_UNAVAILABLE's minute waited on the injected sleep")
	assert.Positive(t, rep.LookedUpResent, "a TIMEOUT that ran nothing: looked up, then sent again")
	assert.Zero(t, rep.FlowChecksFailed)
	assert.Less(t, rep.Elapsed.Seconds(), 60.0, "no minute was slept")
}

func keys(m map[string]int) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// doublePix charges the first PIX create a second time under a key of
// its own, as a merchant's code that sent the order again would: a
// second payment for one order.
type doublePix struct {
	once sync.Once
}

func (d *doublePix) wrap(provider string, next http.RoundTripper) http.RoundTripper {
	if provider != providerA55 {
		return next
	}
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if req.Method != http.MethodPost || req.URL.Path != a55ChargePath || req.Body == nil {
			return next.RoundTrip(req)
		}
		body, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		resp, err := next.RoundTrip(req)
		if err == nil && resp.StatusCode/100 == 2 && strings.Contains(string(body), `"type_charge":"pix"`) {
			d.once.Do(func() {
				again := req.Clone(req.Context())
				again.Body = io.NopCloser(bytes.NewReader(body))
				again.Header.Set(corekit.HeaderIdempotencyKey, uuid.NewString())
				if r2, err := next.RoundTrip(again); err == nil {
					_, _ = io.Copy(io.Discard, r2.Body)
					_ = r2.Body.Close()
				}
			})
		}
		return resp, err
	})
}

// A PIX order paid twice (a second create under a key no client knows)
// fails the run as a duplicate payment of that order, in the PIX flow.
func TestRunDetectsAPlantedDoublePixCharge(t *testing.T) {
	t.Parallel()
	cfg := testConfig(300)
	cfg.FaultRate = 0
	d := &doublePix{}
	cfg.wrapTransport = d.wrap
	rep, err := Run(context.Background(), cfg)
	require.NoError(t, err)
	assert.False(t, rep.Passed())
	assert.Equal(t, 1, rep.Duplicates)
	pix := flowsByName(rep.ByFlow)[flowPix]
	assert.Equal(t, pix.Count+1, pix.Ledger, "the ledger holds one PIX payment more than the orders made")
	found := false
	for _, p := range rep.Problems {
		found = found || strings.Contains(p, "duplicate: pix payment for order-")
	}
	assert.True(t, found, "problems: %v", rep.Problems)
}

// The codes segment's answers are A55's codes, each once per key.
func TestCodeCycleHasEveryCode(t *testing.T) {
	got := map[string]bool{}
	for _, a := range codeCycle() {
		got[a.Code] = true
	}
	for _, c := range []string{a55fake.AnswerTimeout, a55fake.AnswerDuplicateRequest, a55fake.Answer3DSUnavailable, a55fake.AnswerProcessingError} {
		assert.True(t, got[c], c)
	}
}
