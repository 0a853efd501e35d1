package payoncetest

import (
	"fmt"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/fake/fakeserver"
)

// settings is what a fake's options set: the engine's, the hold, and the
// provider's own (Provider.Settings).
type settings struct {
	pkg      string // the fake's test package, in messages
	engine   fakeserver.Options
	clock    *Clock        // nil: a real-time clock
	hold     time.Duration // WithHoldOnFailure
	provider any           // Provider.Settings
	err      error         // the first option refused
}

// refuse records the first invalid option: NewServer panics with it and
// New fails the test with it, before anything starts.
func (s *settings) refuse(err error) {
	if s.err == nil {
		s.err = err
	}
}

// refusal is the error of an invalid shared option.
func refusal(option, reason string) error {
	return fmt.Errorf("%w: payoncetest.%s: %s", payonce.ErrInvalidConfig, option, reason)
}

// Option configures a fake server: a55test.New, coinepaytest.New and their
// NewServer take it. The options of this package apply to every fake; a
// provider's test package adds options of its own (a55test.WithRateLimit,
// coinepaytest.WithBalance), which another provider's fake refuses. An
// invalid option is refused before anything starts: NewServer panics and
// New fails the test, naming the option.
type Option func(*settings)

// ProviderOption returns an Option of the provider test package pkg
// ("a55test"): set changes that package's settings, a *T given to Serve as
// Provider.Settings, and returns an error to refuse the option. A fake of
// another provider refuses it. It is how a55test and coinepaytest make
// their options.
func ProviderOption[T any](pkg string, set func(*T) error) Option {
	return func(s *settings) {
		p, ok := s.provider.(*T)
		if !ok {
			s.refuse(fmt.Errorf("%w: %s: an option of %s", payonce.ErrInvalidConfig, s.pkg, pkg))
			return
		}
		if err := set(p); err != nil {
			s.refuse(err)
		}
	}
}

// WithClock sets the fake's clock (default real time): give one clock to
// several fakes and it drives them all, and the clients of all. A nil clk
// keeps the default.
func WithClock(clk *Clock) Option {
	return func(s *settings) {
		if clk != nil {
			s.clock = clk
		}
	}
}

// WithSeed seeds fault choices and generated IDs, for a reproducible run:
// two servers with one seed hand out the same IDs to the same requests.
// Without it each server draws a random seed, so that IDs never repeat
// across servers (a test database kept between runs sees no collision).
func WithSeed(seed uint64) Option {
	return func(s *settings) { s.engine.Seed, s.engine.Seeded = seed, true }
}

// WithLatency adds d before every API request. A negative d is refused.
func WithLatency(d time.Duration) Option {
	return func(s *settings) {
		if d < 0 {
			s.refuse(refusal(fmt.Sprintf("WithLatency(%v)", d), "want a duration of 0 or more"))
		}
		s.engine.Latency = d
	}
}

// WithFaultRate injects a random fault into this share (0..1) of requests.
// A rate outside [0, 1] (or NaN) is refused.
func WithFaultRate(rate float64) Option {
	return func(s *settings) {
		if !(rate >= 0 && rate <= 1) {
			s.refuse(refusal(fmt.Sprintf("WithFaultRate(%v)", rate), "want a share from 0 to 1"))
		}
		s.engine.FaultRate = rate
	}
}

// WithHoldOnFailure keeps the fake that New started serving for up to d
// after its test failed, so a developer can open ConsoleURL and look; the
// console's Release button (POST /_fakepay/release) ends the wait
// earlier. The environment variable PAYONCE_FAKE_HOLD ("10m") does the
// same for every fake New starts. No hold outlasts go test's -timeout (it
// ends 10 s before the binary's deadline, so the failure is still
// printed), and this option holds nothing where the CI environment
// variable is set (PAYONCE_FAKE_HOLD still does). NewServer ignores it; a
// negative d is refused.
func WithHoldOnFailure(d time.Duration) Option {
	return func(s *settings) {
		if d < 0 {
			s.refuse(refusal(fmt.Sprintf("WithHoldOnFailure(%v)", d), "want a duration of 0 or more"))
			return
		}
		s.hold = d
	}
}

// ClientClock is a payonce.Option that sets the clock a client measures
// its keys' ages by, signs with (Coinepay's timestamps) and checks card
// expiry against: a Clock's Now, so that Advance ages the client's keys
// with the fake's, or any func. nil is refused (payonce.ErrInvalidConfig).
func ClientClock(now func() time.Time) payonce.Option { return payonce.WithClock(now) }
