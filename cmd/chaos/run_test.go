package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRunPrintsTableAndResultLine(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"-n", "200", "-concurrency", "8", "-seed", "3"}, &out, &errOut, false)
	require.Equal(t, 0, code, errOut.String())
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	assert.Regexp(t, `^RESULT operations=\d+ attempts=\d+ replays=\d+ resumed=\d+ duplicates=0 lost=0$`, lines[len(lines)-1])
	assert.Contains(t, out.String(), "charge.create")
	assert.Contains(t, errOut.String(), "progress:", "plain progress lines when not a terminal")
}

func TestRunJSON(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"-n", "100", "-json", "-quiet"}, &out, &errOut, false)
	require.Equal(t, 0, code, errOut.String())
	s := strings.TrimSpace(out.String())
	i := strings.LastIndex(s, "\n")
	require.Positive(t, i)
	var rep map[string]any
	require.NoError(t, json.Unmarshal([]byte(s[:i]), &rep))
	assert.EqualValues(t, 0, rep["duplicates"])
	assert.EqualValues(t, 0, rep["lost"])
	assert.True(t, strings.HasPrefix(s[i+1:], "RESULT "))
	assert.Empty(t, errOut.String(), "-quiet prints no progress")
}

func TestRunTerminalProgressBar(t *testing.T) {
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run(context.Background(), []string{"-n", "50"}, &out, &errOut, true))
	assert.Contains(t, errOut.String(), "\r[")
	assert.Contains(t, errOut.String(), "100.0%")
}

func TestRunBadFlags(t *testing.T) {
	var out, errOut bytes.Buffer
	assert.Equal(t, 2, run(context.Background(), []string{"-n", "0"}, &out, &errOut, false))
	assert.Contains(t, errOut.String(), "-n must be at least 1")
	assert.Equal(t, 2, run(context.Background(), []string{"-nope"}, &out, &errOut, false))
	assert.Equal(t, 0, run(context.Background(), []string{"-h"}, &out, &errOut, false))
}
