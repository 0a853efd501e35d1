package chaos

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A race report is seen whole or split across writes, and stays seen
// after the tail has dropped it.
func TestTailBufferSeesARaceReport(t *testing.T) {
	b := &tailBuffer{max: 16}
	_, _ = io.WriteString(b, "clean output\n")
	assert.False(t, b.sawRace())
	_, _ = io.WriteString(b, "==================\nWARNING: DA")
	assert.False(t, b.sawRace())
	_, _ = io.WriteString(b, "TA RACE\nRead at 0x00c000012345")
	assert.True(t, b.sawRace())
	_, _ = io.WriteString(b, strings.Repeat("later output\n", 10))
	assert.NotContains(t, b.String(), raceWarning)
	assert.True(t, b.sawRace(), "the tail dropped the report, not the fact")
}

// A worker's exit fails the run when its race detector reported a race,
// or when it was stopped the ordinary way and did not exit 0; a worker
// the run killed exits as killed, which fails nothing.
func TestCheckExitCountsWhatTheWorkerDid(t *testing.T) {
	exit4 := errors.New("exit status 4")
	for name, c := range map[string]struct {
		raced, stopped bool
		killed         string
		err            error
		want           string
	}{
		"stopped, exit 0":      {stopped: true},
		"stopped, exit 4":      {stopped: true, err: exit4, want: "worker: exit: exit status 4"},
		"stopped, killed late": {stopped: true, killed: phaseHold, err: exit4},
		"killed":               {killed: phaseSend, err: exit4},
		"raced, exit 0":        {raced: true, stopped: true, want: "worker: the race detector reported a data race"},
		"raced, killed":        {raced: true, killed: phaseSend, err: exit4, want: "worker: the race detector reported a data race"},
	} {
		p := &workerProc{stderr: &tailBuffer{max: 64}, killPhase: c.killed}
		if c.raced {
			_, _ = io.WriteString(p.stderr, raceWarning+"\n")
		}
		r := &crashRun{}
		r.checkExit(p, c.err, c.stopped)
		if c.want == "" {
			assert.Zero(t, r.exitFailures, name)
			assert.Empty(t, r.problems, name)
			continue
		}
		assert.Equal(t, 1, r.exitFailures, name)
		assert.Zero(t, r.workerFailures, "a worker's exit never makes the run give up")
		assert.Equal(t, []string{c.want}, r.problems, name)
	}
}
