package payoncetest_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/coinepay/coinepaytest"
	"github.com/payonce/payonce/payoncetest"
)

// fatalRecorder is a testing.TB whose Fatalf records the message.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (r *fatalRecorder) Helper() {}

func (r *fatalRecorder) Fatalf(format string, args ...any) { r.msg = fmt.Sprintf(format, args...) }

// refusals are invalid options and what refuses them: the shared options
// on every fake, a provider's own options on its fake.
var refusals = map[string][]struct {
	name   string // the option as the message names it
	reason string
	opt    payoncetest.Option
}{
	"": {
		{"payoncetest.WithFaultRate(2)", "want a share from 0 to 1", payoncetest.WithFaultRate(2)},
		{"payoncetest.WithFaultRate(-0.5)", "want a share from 0 to 1", payoncetest.WithFaultRate(-0.5)},
		{"payoncetest.WithFaultRate(NaN)", "want a share from 0 to 1", payoncetest.WithFaultRate(math.NaN())},
		{"payoncetest.WithLatency(-1s)", "want a duration of 0 or more", payoncetest.WithLatency(-time.Second)},
		{"payoncetest.WithHoldOnFailure(-1s)", "want a duration of 0 or more", payoncetest.WithHoldOnFailure(-time.Second)},
	},
	"a55test": {
		{"a55test.WithTokenLifetime(0s)", "want a lifetime above 0", a55test.WithTokenLifetime(0)},
		{"a55test.WithTokenLifetime(-1m0s)", "want a lifetime above 0", a55test.WithTokenLifetime(-time.Minute)},
		{"a55test.WithRateLimit(10, 0s)", "want a window above 0", a55test.WithRateLimit(10, 0)},
		{"a55test.WithWebhookTimeout(-1s)", "want a timeout above 0", a55test.WithWebhookTimeout(-time.Second)},
	},
	"coinepaytest": {
		{"coinepaytest.WithMaxStoredResponse(-1)", "want a size of 0 or more", coinepaytest.WithMaxStoredResponse(-1)},
	},
}

// newServers are the providers' NewServer, by test package.
var newServers = map[string]func(...payoncetest.Option){
	"a55test":      func(opts ...payoncetest.Option) { a55test.NewServer(opts...).Close() },
	"coinepaytest": func(opts ...payoncetest.Option) { coinepaytest.NewServer(opts...).Close() },
}

// An invalid option is refused, naming the option: NewServer panics, New
// fails the test; nothing starts.
func TestInvalidOptionsAreRefused(t *testing.T) {
	forEach(t, func(t *testing.T, p provider) {
		for _, r := range append(refusals[""], refusals[p.name]...) {
			t.Run(r.name, func(t *testing.T) {
				msg := payonce.ErrInvalidConfig.Error() + ": " + r.name + ": " + r.reason
				assert.PanicsWithValue(t, msg, func() { newServers[p.name](r.opt) })
				rec := &fatalRecorder{TB: t}
				assert.Nil(t, p.start(rec, r.opt))
				assert.Equal(t, msg, rec.msg)
			})
		}
	})
	// The valid edges are accepted.
	for _, opt := range []payoncetest.Option{payoncetest.WithFaultRate(0), payoncetest.WithFaultRate(1), payoncetest.WithLatency(0),
		payoncetest.WithHoldOnFailure(0), nil} {
		require.NotNil(t, a55test.New(t, opt))
		require.NotNil(t, coinepaytest.New(t, opt))
	}
	require.NotNil(t, a55test.New(t, a55test.WithRateLimit(0, 0)))
	require.NotNil(t, coinepaytest.New(t, coinepaytest.WithMaxStoredResponse(0)))
}

// An option of one provider's test package given to another's fake is
// refused, naming both: it would otherwise set nothing without a word.
func TestAnotherProvidersOptionIsRefused(t *testing.T) {
	rec := &fatalRecorder{TB: t}
	assert.Nil(t, coinepaytest.New(rec, a55test.WithRateLimit(3, time.Minute)))
	assert.Equal(t, "invalid configuration: coinepaytest: an option of a55test", rec.msg)
	assert.PanicsWithValue(t, "invalid configuration: a55test: an option of coinepaytest",
		func() { a55test.NewServer(coinepaytest.WithBalance(payonce.Amount{})) })
}
