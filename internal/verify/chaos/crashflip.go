package chaos

import (
	"sync"
	"time"

	"github.com/payonce/payonce/internal/fake/fakeserver"
	"github.com/payonce/payonce/payoncetest"
)

// flipWait bounds how long the parent holds one twin of a flipped
// reference for the other: long enough for a worker to reach its next
// sync point, short enough not to slow the run when the journal keeps
// the twin from sending at all.
const flipWait = 500 * time.Millisecond

// flipState is the parent's script for a reference the provider answers
// differently twice under one key. The reference is delivered to two
// workers at once. The first to send has that attempt refused with a 4xx
// the provider does not keep (refuse_before_commit for its key, once);
// it is held before recording the refusal until its twin is about to
// send; the twin is held at its send until the first delivery ended, and
// its attempt, under the same key and body, executes. A journal that
// recorded the refusal as final now says failed for a key that executed.
type flipState struct {
	first     int  // the delivery whose attempt is refused (0: none yet)
	refused   bool // the rule is set
	twinSend  chan struct{}
	firstDone chan struct{}
	twinOnce  sync.Once
	doneOnce  sync.Once
}

func newFlipState() *flipState {
	return &flipState{twinSend: make(chan struct{}), firstDone: make(chan struct{})}
}

// flipStep plays the parent at a sync point of one of a flipped
// reference's two first deliveries. It never kills.
func (r *crashRun) flipStep(fs *flipState, it planItem, d delivery, phase, key string) {
	r.mu.Lock()
	if phase == phaseSend && fs.first == 0 {
		fs.first = d.n
	}
	first := fs.first == d.n
	refuse := phase == phaseSend && first && !fs.refused && key != ""
	if refuse {
		fs.refused = true
	}
	r.mu.Unlock()
	switch {
	case refuse:
		if err := r.refuseOnce(it, key); err != nil {
			r.mu.Lock()
			r.problemLocked("flip: %s: %v", it.ref, err)
			r.mu.Unlock()
		}
	case phase == phaseSend && !first:
		fs.twinOnce.Do(func() { close(fs.twinSend) })
		wait(fs.firstDone, flipWait)
	case phase == phaseUpdate && first:
		wait(fs.twinSend, flipWait)
	}
}

// flipEnded notes that a delivery of a flipped reference ended.
func (fs *flipState) ended(d delivery) {
	switch {
	case d.n == fs.first:
		fs.doneOnce.Do(func() { close(fs.firstDone) })
	case d.n <= 2:
		fs.twinOnce.Do(func() { close(fs.twinSend) })
	}
}

// refuseOnce makes the item's provider refuse the next request under key
// with a 4xx it does not keep.
func (r *crashRun) refuseOnce(it planItem, key string) error {
	if it.other {
		return r.a55b.AddFault(payoncetest.Rule{Fault: payoncetest.FaultKind(fakeserver.RefuseBeforeCommit), IdempotencyKey: key, Count: 1})
	}
	if it.provider() == providerA55 {
		return r.a55.AddFault(payoncetest.Rule{Fault: payoncetest.FaultKind(fakeserver.RefuseBeforeCommit), IdempotencyKey: key, Count: 1})
	}
	return r.cp.AddFault(payoncetest.Rule{Fault: payoncetest.FaultKind(fakeserver.RefuseBeforeCommit), IdempotencyKey: key, Count: 1})
}

// wait waits for ch to close, at most d; it reports whether ch closed.
func wait(ch <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}
