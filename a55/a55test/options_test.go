package a55test_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce/a55/a55test"
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
	for name, opt := range map[string]a55test.Option{
		"WithFaultRate(2)":         a55test.WithFaultRate(2),
		"WithFaultRate(-0.5)":      a55test.WithFaultRate(-0.5),
		"WithFaultRate(NaN)":       a55test.WithFaultRate(math.NaN()),
		"WithLatency(-1s)":         a55test.WithLatency(-time.Second),
		"WithTokenLifetime(0s)":    a55test.WithTokenLifetime(0),
		"WithTokenLifetime(-1m0s)": a55test.WithTokenLifetime(-time.Minute),
		"WithRateLimit(10, 0s)":    a55test.WithRateLimit(10, 0),
		"WithWebhookTimeout(-1s)":  a55test.WithWebhookTimeout(-time.Second),
	} {
		t.Run(name, func(t *testing.T) {
			assert.PanicsWithValue(t, "invalid configuration: a55test."+name+": "+reasonOf(name), func() { a55test.NewServer(opt) })
			rec := &fatalRecorder{TB: t}
			assert.Nil(t, a55test.New(rec, opt))
			assert.Contains(t, rec.msg, "a55test."+name)
		})
	}
	// The valid edges are accepted.
	for _, opt := range []a55test.Option{a55test.WithFaultRate(0), a55test.WithFaultRate(1), a55test.WithLatency(0), a55test.WithRateLimit(0, 0)} {
		require.NotNil(t, a55test.New(t, opt))
	}
}

func reasonOf(name string) string {
	switch name[:8] {
	case "WithFaul":
		return "want a share from 0 to 1"
	case "WithLate":
		return "want a duration of 0 or more"
	case "WithToke":
		return "want a lifetime above 0"
	case "WithRate":
		return "want a window above 0"
	}
	return "want a timeout above 0"
}
