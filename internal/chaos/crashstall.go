package chaos

import (
	"context"
	"time"

	"github.com/payonce/payonce/internal/fakeserver"
	"github.com/payonce/payonce/payoncetest"
)

// stallFor bounds how long the parent keeps a stalled worker stopped
// while another worker takes its reference over and settles it.
const stallFor = 3 * time.Second

// stallState is the parent's script for a reference whose first worker
// stalls mid-run: its first attempt is answered 503 (error_before_commit
// for its key, once), and when the answer arrives the parent stops the
// process (SIGSTOP), far past the run's journal lease, and delivers the
// reference to another worker. Once that delivery settled it, or
// stallFor passed, the process resumes (SIGCONT) and backs off into its
// retry: the journal must stop it (the entry is settled or taken over),
// so any attempt it still sends is counted (StaleSends).
type stallState struct {
	key     string // the stalled delivery's key, once it sent
	stopped bool   // the stall happened
	resumed bool   // the stalled worker runs again after another settled its reference: its sends are stale
	// takenOver: the delivery that settled the reference took it over
	// (it did not leave it in doubt).
	takenOver bool
	settled   chan struct{}
}

// stallStep plays the parent at a sync point of a stalled reference's
// first delivery; it returns whether the worker is to be stopped now.
func (r *crashRun) stallStep(ss *stallState, it planItem, d delivery, phase, key string) (stop bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case phase == phaseSend && ss.resumed:
		r.staleSends++
		r.problemLocked("stale send: %s: the stalled worker sent again after another took the reference over (deliveries ended: %s)", it.ref, endings(r.refs[it.ref].reports))
	case phase == phaseSend && ss.key == "" && key != "":
		ss.key = key
		if err := r.failOnce(it, key); err != nil {
			r.problemLocked("stall: %s: %v", it.ref, err)
		}
	case phase == phaseAnswer && ss.key != "" && !ss.stopped:
		ss.stopped = true
		return true
	}
	return false
}

// failOnce makes the item's provider answer the next request under key
// 503, executing nothing.
func (r *crashRun) failOnce(it planItem, key string) error {
	if it.other {
		return r.a55b.AddFault(payoncetest.Rule{Fault: payoncetest.FaultKind(fakeserver.ErrorBeforeCommit), Status: 503, IdempotencyKey: key, Count: 1})
	}
	if it.provider() == providerA55 {
		return r.a55.AddFault(payoncetest.Rule{Fault: payoncetest.FaultKind(fakeserver.ErrorBeforeCommit), Status: 503, IdempotencyKey: key, Count: 1})
	}
	return r.cp.AddFault(payoncetest.Rule{Fault: payoncetest.FaultKind(fakeserver.ErrorBeforeCommit), Status: 503, IdempotencyKey: key, Count: 1})
}

// stall stops p, hands its reference to a new worker process (the
// stalled one keeps its slot), and resumes p once that one settled it
// (or stallFor passed). It runs in the stalled delivery's slot, before
// the parent's ack.
func (r *crashRun) stall(p *workerProc, ss *stallState, d delivery) {
	if !p.pause() {
		return // no SIGSTOP here: the reference runs unstalled
	}
	r.mu.Lock()
	rs := r.refs[d.item.ref]
	q, ctx, cfg := r.q, r.ctx, r.base
	r.stalls++
	r.mu.Unlock()
	go r.takeOver(ctx, q, cfg, r.nextDelivery(rs))
	settled := wait(ss.settled, stallFor)
	r.mu.Lock()
	ss.resumed = settled && ss.takenOver
	if ss.resumed {
		r.takenOver++
	}
	r.mu.Unlock()
	p.resume()
}

// takeOver runs one delivery in a worker process of its own, as another
// host of the fleet picking up the stalled worker's job.
func (r *crashRun) takeOver(ctx context.Context, q *queue, cfg workerConfig, d delivery) {
	p, err := startWorker(r.newCmd, cfg)
	if err != nil {
		r.mu.Lock()
		r.workerFailures++
		r.problemLocked("stall: start a worker: %v", err)
		r.mu.Unlock()
		return
	}
	res := deliver(ctx, p, d, func(d delivery, phase, key string, i int) (bool, time.Duration) {
		return r.decide(p, d, phase, key, i)
	})
	res.skewed = cfg.skewed
	r.settle(q, d, res)
	if p.killedAt() != "" || res.err != nil {
		p.kill(phaseSetup)
		_ = p.reap()
		return
	}
	_ = p.stop()
}
