// Package logtest reads, in tests, what a payonce client logs at debug
// level, so a test can assert on a decision (such as the wait chosen
// before a retry) instead of timing it.
package logtest

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// RetryMessage is the message of the debug record a client writes before
// each retry; its "wait" attribute is the wait it chose.
const RetryMessage = "payonce retrying"

// Log collects JSON log records. Safe for concurrent use.
type Log struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// New returns a Log and a debug-level logger writing to it, for
// payonce.WithLogger.
func New() (*Log, *slog.Logger) {
	l := &Log{}
	return l, slog.New(slog.NewJSONHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// Write implements io.Writer for the JSON handler.
func (l *Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// RetryWaits returns the wait of every retry record, in order.
func (l *Log) RetryWaits(t testing.TB) []time.Duration {
	t.Helper()
	l.mu.Lock()
	text := l.buf.String()
	l.mu.Unlock()
	var waits []time.Duration
	for line := range strings.Lines(text) {
		var rec struct {
			Msg  string        `json:"msg"`
			Wait time.Duration `json:"wait"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &rec))
		if rec.Msg == RetryMessage {
			waits = append(waits, rec.Wait)
		}
	}
	return waits
}
