package chaos

import (
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/payonce/payonce"
)

// Config is one chaos run.
type Config struct {
	Operations  int     // business operations to start (about; scenarios are chains)
	Concurrency int     // scenarios in flight at once
	FaultRate   float64 // share of requests hit by any fault, split into the mix (see mixFor)
	Seed        uint64  // same seed, same faults and choices
	// DuplicateRate is the share of operations submitted twice in parallel
	// with the same key and body; ConflictRate the share also submitted in
	// parallel with the same key and another body.
	DuplicateRate float64
	ConflictRate  float64
	// A55Codes has the in-process A55 fake answer creates with A55's
	// codes too (TIMEOUT, DUPLICATE_REQUEST, 3DS_UNAVAILABLE,
	// PROCESSING_ERROR), and adds the codes segment.
	A55Codes bool

	// External servers (cmd/fakepay or another fake): when set, that
	// provider is not started in-process and faults are injected on the
	// client side by a transport that drops answers after the server has
	// them.
	A55URL, CoinepayURL          string
	A55ClientID, A55ClientSecret string
	CoinepayKey, CoinepaySecret  string

	Retry           payonce.RetryPolicy
	RetryBudget     int // each client's retry budget capacity (0: the SDK default)
	MaxResumeRounds int // rounds of resumption before faults are switched off

	Progress           io.Writer     // where progress goes (nil: none)
	ProgressIsTerminal bool          // a live bar instead of plain lines
	ProgressInterval   time.Duration // plain lines: how often
	DebugLog           io.Writer     // optional: every client's debug log lines (redacted)
	// Telemetry reports the run through otelpayonce too (the -otel flag):
	// its metrics, read from a ManualReader, land in Report.Telemetry.
	Telemetry bool

	// wrapTransport, for tests, wraps the transport of each provider's
	// SDK client (outside any client-side fault transport).
	wrapTransport func(provider string, next http.RoundTripper) http.RoundTripper
	// segmentOps, for tests, replaces defaultSegmentOps.
	segmentOps int
}

func (c Config) segment() int {
	if c.segmentOps > 0 {
		return c.segmentOps
	}
	return defaultSegmentOps
}

// DefaultConfig is the run `go run ./cmd/chaos` makes with no flags.
func DefaultConfig() Config {
	p := payonce.DefaultRetryPolicy()
	p.MaxAttempts = 4
	p.InitialInterval = 2 * time.Millisecond
	p.MaxInterval = 20 * time.Millisecond
	p.MaxElapsedTime = 10 * time.Second
	p.MaxRetryAfter = 10 * time.Millisecond
	p.AttemptTimeout = 2 * time.Second
	return Config{
		Operations:       3000,
		Concurrency:      32,
		FaultRate:        0.35, // 10 % drop, 10 % 503, 5 % reset, 5 % 429, 5 % delay
		Seed:             1,
		DuplicateRate:    0.05,
		ConflictRate:     0.01,
		A55Codes:         true,
		A55ClientID:      "demo-client",
		A55ClientSecret:  "demo-secret",
		CoinepayKey:      "demo-key",
		CoinepaySecret:   "demo-secret",
		Retry:            p,
		MaxResumeRounds:  50,
		ProgressInterval: 2 * time.Second,
	}
}

// Validate refuses a config that cannot run.
func (c Config) Validate() error {
	switch {
	case c.Operations < 1:
		return fmt.Errorf("chaos: -n must be at least 1")
	case c.Concurrency < 1:
		return fmt.Errorf("chaos: -concurrency must be at least 1")
	case !(c.FaultRate >= 0 && c.FaultRate <= 0.9): // NaN too
		return fmt.Errorf("chaos: -faults must be within 0..0.9")
	case !(c.DuplicateRate >= 0 && c.DuplicateRate <= 1) || !(c.ConflictRate >= 0 && c.ConflictRate <= 1):
		return fmt.Errorf("chaos: duplicate and conflict rates must be within 0..1")
	case c.MaxResumeRounds < 1:
		return fmt.Errorf("chaos: resume rounds must be at least 1")
	}
	// The policy is checked as every client checks it.
	_, err := payonce.NewClient(payonce.WithBaseURL("http://127.0.0.1"), payonce.WithRetryPolicy(c.Retry))
	return err
}
