package chaos

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// A rate that is not a number, or a negative latency, is refused like any
// other value out of range (NaN passed the range comparisons).
func TestConfigsRefuseNaNAndNegativeLatency(t *testing.T) {
	cfg := DefaultConfig()
	cfg.FaultRate = math.NaN()
	assert.Error(t, cfg.Validate())
	cfg = DefaultConfig()
	cfg.DuplicateRate = math.NaN()
	assert.Error(t, cfg.Validate())
	ccfg := DefaultCrashConfig()
	ccfg.FaultRate = math.NaN()
	assert.Error(t, ccfg.Validate())
	_, err := CompareJournals(context.Background(), CompareConfig{Operations: 1, Concurrency: 1, Latency: -time.Second})
	assert.ErrorContains(t, err, "latency")
}

func TestConfigValidate(t *testing.T) {
	for _, mutate := range []func(*Config){
		func(c *Config) { c.Operations = 0 },
		func(c *Config) { c.Concurrency = 0 },
		func(c *Config) { c.FaultRate = 1 },
		func(c *Config) { c.DuplicateRate = -1 },
		func(c *Config) { c.MaxResumeRounds = 0 },
		func(c *Config) { c.Retry.MaxAttempts = 0 },
	} {
		cfg := DefaultConfig()
		mutate(&cfg)
		_, err := Run(context.Background(), cfg)
		assert.Error(t, err)
	}
}
