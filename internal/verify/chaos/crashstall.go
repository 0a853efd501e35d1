package chaos

import (
	"context"

	"github.com/payonce/payonce/internal/fake/fakeserver"
	"github.com/payonce/payonce/payoncetest"
)

// stallState is the parent's script for a reference whose first worker
// stalls mid-run. Its first delivery goes to a worker with a true clock;
// its first attempt is answered 503 (error_before_commit for its key,
// once), and when the answer arrives the parent stops the process
// (SIGSTOP) and delivers the reference to another worker, which takes
// the entry over once the stopped worker's lease has ended on the
// journal's clock. Once that takeover's deliveries ended (the reference
// settled, or nothing more can be delivered in this phase), the process
// resumes (SIGCONT) and backs off into its retry: the journal must stop
// it (the entry is settled or taken over), so any attempt it still sends
// is counted (StaleSends). No timer decides whether it was taken over.
type stallState struct {
	key     string // the stalled delivery's key, once it sent
	stopped bool   // the stall happened
	resumed bool   // the stalled worker runs again after another settled its reference: its sends are stale
	// takenOver: the delivery that settled the reference took it over
	// (it did not leave it in doubt).
	takenOver bool
	// takingOver: another worker takes the reference over while this
	// one is stopped; the parent kills none of its deliveries.
	takingOver bool
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
// stalled one keeps its slot), and resumes p once that one's deliveries
// ended. It runs in the stalled delivery's slot, before the parent's ack.
func (r *crashRun) stall(p *workerProc, ss *stallState, d delivery) {
	if !p.pause() {
		return // no SIGSTOP here: the reference runs unstalled
	}
	r.mu.Lock()
	td := r.nextDeliveryLocked(r.refs[d.item.ref])
	ctx, cfg := r.ctx, r.base
	r.stalls++
	ss.takingOver = true
	r.mu.Unlock()
	r.takeOver(ctx, cfg, td)
	r.mu.Lock()
	ss.takingOver = false
	ss.resumed = ss.takenOver
	if ss.resumed {
		r.takenOver++
	}
	r.mu.Unlock()
	p.resume()
}

// takeOver runs d in a worker slot of its own, as another host of the
// fleet picking up the stalled worker's job, with a queue of its own:
// what the delivery's end redelivers (the entry still leased to the
// stopped worker, a temporary failure) comes back to this slot, until
// the reference settled or nothing more is due in this phase. It returns
// then, whatever the time it took.
func (r *crashRun) takeOver(ctx context.Context, cfg workerConfig, d delivery) {
	q := newQueue()
	q.push(d)
	if err := r.slot(ctx, q, cfg); err != nil && ctx.Err() == nil {
		r.mu.Lock()
		r.problemLocked("stall: take over %s: %v", d.item.ref, err)
		r.mu.Unlock()
	}
}
