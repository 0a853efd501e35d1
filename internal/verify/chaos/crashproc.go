package chaos

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// workerProc is one worker process as the parent sees it: its pipes, the
// lines it printed and whether the parent killed it.
type workerProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string // closed when the worker's stdout ends
	stderr *tailBuffer

	mu        sync.Mutex
	killPhase string // the phase the parent killed it at ("" while alive)

	reaped  sync.Once
	waitErr error

	cfg workerConfig // what it was started with
}

// defaultWorkerCommand re-executes the running binary in worker mode.
func defaultWorkerCommand() (*exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("chaos: find own executable: %w", err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), WorkerEnv+"=1")
	return cmd, nil
}

// startWorker starts a worker process, sends it cfg and waits until it
// is ready.
func startWorker(newCmd func() (*exec.Cmd, error), cfg workerConfig) (*workerProc, error) {
	cmd, err := newCmd()
	if err != nil {
		return nil, err
	}
	p := &workerProc{cmd: cmd, lines: make(chan string, 16), stderr: &tailBuffer{max: 4 << 10}, cfg: cfg}
	cmd.Stderr = p.stderr
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("chaos: start worker: %w", err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	b, err := json.Marshal(cfg)
	if err != nil {
		p.kill("")
		_ = p.reap()
		return nil, err
	}
	p.send("config " + string(b))
	tm := time.NewTimer(time.Minute)
	defer tm.Stop()
	select {
	case line, ok := <-p.lines:
		if ok && line == "ready" {
			return p, nil
		}
		p.kill("")
		_ = p.reap()
		return nil, fmt.Errorf("chaos: worker did not start: %s %s", oneLine(line), p.stderr.String())
	case <-tm.C:
		p.kill("")
		_ = p.reap()
		return nil, errors.New("chaos: worker did not start within a minute")
	}
}

// send writes one line to the worker. A worker that died does not read
// it; its end of the story is the closed stdout.
func (p *workerProc) send(line string) {
	_, _ = io.WriteString(p.stdin, line+"\n")
}

// kill SIGKILLs the worker, once, and remembers at which phase.
func (p *workerProc) kill(phase string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.killPhase != "" {
		return
	}
	if phase == "" {
		phase = "setup"
	}
	p.killPhase = phase
	_ = p.cmd.Process.Kill()
}

// killedAt returns the phase the worker was killed at, "" while alive.
func (p *workerProc) killedAt() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.killPhase
}

// reap waits for the worker's exit after its stdout ended or it was
// killed; after it, stderr holds everything the worker wrote there.
func (p *workerProc) reap() error {
	p.reaped.Do(func() {
		for range p.lines {
		}
		p.waitErr = p.cmd.Wait()
	})
	return p.waitErr
}

// stopping tells a live worker to end the ordinary way: no more work
// (stdin closed). reap waits for its exit.
func (p *workerProc) stopping() { _ = p.stdin.Close() }

// raceWarning starts every report of the race detector on stderr.
const raceWarning = "WARNING: DATA RACE"

// tailBuffer keeps the last max bytes written to it, and whether any of
// them began a race detector's report.
type tailBuffer struct {
	mu    sync.Mutex
	max   int
	b     []byte
	raced bool
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	from := max(0, len(t.b)-len(raceWarning)) // a warning split across writes
	t.b = append(t.b, p...)
	t.raced = t.raced || strings.Contains(string(t.b[from:]), raceWarning)
	if len(t.b) > t.max {
		t.b = t.b[len(t.b)-t.max:]
	}
	return len(p), nil
}

// sawRace reports whether the worker's race detector reported a race.
func (t *tailBuffer) sawRace() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.raced
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.b))
}

// delivery is one hand-over of a reference to a worker, as a queue makes
// it: the first, a parallel twin, or a redelivery.
type delivery struct {
	item planItem
	n    int // this reference's nth delivery (1-based)
	// settled: the reference had settled before this delivery began, so
	// the journal holds its outcome and nothing may be sent.
	settled bool
	// honest: for a worker whose clock is true (a skewed one left it in
	// doubt).
	honest bool
}

// deliveryResult is how one delivery ended: a report, or a kill.
type deliveryResult struct {
	done   doneReport
	killed string // the phase the worker was killed at
	sends  int    // requests the worker was about to send
	skewed bool   // the worker's clock runs ahead
	err    error  // the worker died on its own or broke the protocol
}

// deliver hands d to the worker p and plays the parent's part at each of
// its sync points: ack, or kill (decided by decide).
func deliver(ctx context.Context, p *workerProc, d delivery, decide func(d delivery, phase, key string, i int) (kill bool, hold time.Duration)) deliveryResult {
	var res deliveryResult
	var hold *time.Timer
	stopHold := func() {
		if hold != nil {
			hold.Stop()
		}
	}
	p.send("job " + d.item.ref)
	i := 0
	for {
		var line string
		var ok bool
		select {
		case line, ok = <-p.lines:
		case <-ctx.Done():
			stopHold()
			p.kill(phaseCanceled)
			res.err = ctx.Err()
			return res
		}
		if !ok {
			break
		}
		switch {
		case strings.HasPrefix(line, "sync "):
			f := strings.Fields(line)
			if (len(f) != 3 && len(f) != 4) || f[2] != d.item.ref {
				stopHold()
				p.kill(phaseSetup)
				res.err = fmt.Errorf("chaos: worker sync line %q for %s", oneLine(line), d.item.ref)
				return res
			}
			phase := f[1]
			i++
			key := ""
			if len(f) == 4 {
				key = f[3]
			}
			kill, holdFor := decide(d, phase, key, i)
			if kill {
				stopHold()
				p.kill(phase)
				res.killed = p.killedAt()
				return res
			}
			if phase == phaseSend {
				res.sends++
			}
			p.send("ack")
			if holdFor > 0 && hold == nil {
				hold = time.AfterFunc(holdFor, func() { p.kill(phaseHold) })
			}
		case strings.HasPrefix(line, "done "):
			stopHold()
			dr, ok := parseDone(line)
			if !ok || dr.ref != d.item.ref {
				p.kill(phaseSetup)
				res.err = fmt.Errorf("chaos: worker done line %q for %s", oneLine(line), d.item.ref)
				return res
			}
			res.done = dr
			return res
		case strings.HasPrefix(line, "fatal "):
			stopHold()
			p.kill(phaseSetup)
			res.err = fmt.Errorf("chaos: worker failed: %s", strings.TrimPrefix(line, "fatal "))
			return res
		}
	}
	stopHold()
	if k := p.killedAt(); k != "" {
		res.killed = k
		return res
	}
	_ = p.reap()
	res.err = fmt.Errorf("chaos: worker exited on its own during %s: %s", d.item.ref, p.stderr.String())
	return res
}

// phaseSetup marks a worker the parent ended because it broke the
// protocol (not a planned crash), phaseCanceled one ended because the run
// was canceled.
const (
	phaseSetup    = "setup"
	phaseCanceled = "canceled"
)
