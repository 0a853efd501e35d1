package logtest

import (
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestRetryWaits(t *testing.T) {
	l, logger := New()
	logger.Debug(RetryMessage, slog.Duration("wait", 20*time.Millisecond))
	logger.Debug("payonce attempt", slog.Duration("wait", time.Hour))
	logger.Info(RetryMessage, slog.Duration("wait", time.Second))
	assert.Equal(t, []time.Duration{20 * time.Millisecond, time.Second}, l.RetryWaits(t))
}
