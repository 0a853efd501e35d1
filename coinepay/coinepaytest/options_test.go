package coinepaytest_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce/coinepay/coinepaytest"
)

// fatalRecorder is a testing.TB whose Fatalf records the message.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (r *fatalRecorder) Helper() {}

func (r *fatalRecorder) Fatalf(format string, args ...any) { r.msg = fmt.Sprintf(format, args...) }

// An invalid option is refused, naming the option: NewServer panics, New
// fails the test; nothing starts.
func TestInvalidOptionsAreRefused(t *testing.T) {
	for name, opt := range map[string]coinepaytest.Option{
		"WithFaultRate(2)":          coinepaytest.WithFaultRate(2),
		"WithFaultRate(-0.5)":       coinepaytest.WithFaultRate(-0.5),
		"WithFaultRate(NaN)":        coinepaytest.WithFaultRate(math.NaN()),
		"WithLatency(-1s)":          coinepaytest.WithLatency(-time.Second),
		"WithMaxStoredResponse(-1)": coinepaytest.WithMaxStoredResponse(-1),
	} {
		t.Run(name, func(t *testing.T) {
			assert.PanicsWithValue(t, fmt.Sprintf("invalid configuration: coinepaytest.%s: %s", name, reasonOf(name)), func() { coinepaytest.NewServer(opt) })
			rec := &fatalRecorder{TB: t}
			assert.Nil(t, coinepaytest.New(rec, opt))
			assert.Contains(t, rec.msg, "coinepaytest."+name)
		})
	}
	for _, opt := range []coinepaytest.Option{coinepaytest.WithFaultRate(0), coinepaytest.WithFaultRate(1), coinepaytest.WithLatency(0)} {
		require.NotNil(t, coinepaytest.New(t, opt))
	}
}

func reasonOf(name string) string {
	switch name[:8] {
	case "WithFaul":
		return "want a share from 0 to 1"
	case "WithLate":
		return "want a duration of 0 or more"
	}
	return "want a size of 0 or more"
}
