package chaos

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// progress shows how far the run is: a live bar on a terminal, a plain
// line every interval otherwise.
type progress struct {
	cfg   Config
	total int
	done  *atomic.Int64
	began time.Time
	// the previous plain line's count and time: its rate over the last
	// interval shows whether the run keeps its pace
	lastDone int
	lastAt   time.Time
	quit     chan struct{}
	wg       sync.WaitGroup
}

func newProgress(cfg Config, total int, done *atomic.Int64) *progress {
	return &progress{cfg: cfg, total: total, done: done, quit: make(chan struct{})}
}

func (p *progress) start() {
	p.began = time.Now()
	p.lastAt = p.began
	if p.cfg.Progress == nil {
		return
	}
	every := p.cfg.ProgressInterval
	if p.cfg.ProgressIsTerminal {
		every = 100 * time.Millisecond
	}
	if every <= 0 {
		every = 2 * time.Second
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-p.quit:
				p.print(true)
				return
			case <-t.C:
				p.print(false)
			}
		}
	}()
}

func (p *progress) stop() {
	close(p.quit)
	p.wg.Wait()
}

func (p *progress) print(final bool) {
	done := int(p.done.Load())
	frac := float64(done) / float64(max(p.total, 1))
	frac = min(frac, 1)
	rate := float64(done) / max(time.Since(p.began).Seconds(), 1e-9)
	if p.cfg.ProgressIsTerminal {
		const width = 30
		n := int(frac * width)
		fmt.Fprintf(p.cfg.Progress, "\r[%s%s] %5.1f%%  %d/%d operations  %.0f ops/s ",
			strings.Repeat("#", n), strings.Repeat(".", width-n), frac*100, done, p.total, rate)
		if final {
			fmt.Fprintln(p.cfg.Progress)
		}
		return
	}
	now := time.Now()
	recent := float64(done-p.lastDone) / max(now.Sub(p.lastAt).Seconds(), 1e-9)
	p.lastDone, p.lastAt = done, now
	fmt.Fprintf(p.cfg.Progress, "progress: %d/%d operations (%.0f%%), %.0f ops/s, %.0f ops/s over the last interval\n", done, p.total, frac*100, rate, recent)
}
