package logtest

import (
	"bytes"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestOptionsLeaveOutTimeAndNamedAttributes(t *testing.T) {
	var b bytes.Buffer
	l := slog.New(slog.NewJSONHandler(&b, Options(slog.LevelDebug, "wait")))
	l.Debug("m", "wait", "1s", "cvv", "***", slog.Group("g", "time", "kept", "wait", "kept"))
	assert.Equal(t, `{"level":"DEBUG","msg":"m","cvv":"***","g":{"time":"kept","wait":"kept"}}`+"\n", b.String())

	b.Reset()
	slog.New(slog.NewTextHandler(&b, Options(slog.LevelInfo))).Debug("below the level")
	assert.Empty(t, b.String())
}
