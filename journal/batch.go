package journal

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// DefaultMaxBatch is the most writes a Batcher commits in one transaction.
const DefaultMaxBatch = 128

// DefaultBatchTimeout bounds one batch's transaction, whatever the callers'
// contexts: a batch runs for several callers, so no one caller's context
// may cancel it.
const DefaultBatchTimeout = 30 * time.Second

// ErrBatcherClosed is returned by Batcher.Do after Close.
var ErrBatcherClosed = errors.New("journal: closed")

// ErrWriteInDoubt is returned (with the context's error) by Batcher.Do when
// the caller's context ended while its write was inside a transaction being
// committed: the write may or may not be recorded. Get tells which; a
// reserved entry found later is resumed with its own key, so acting as if
// the write failed is safe.
var ErrWriteInDoubt = errors.New("journal: context ended while the write was committing; it may be recorded")

// BatchItem is one caller's write in a batch: Ctx is the caller's context
// (a backend checks it before running the write and runs the write under
// the batch's context) and Write the payload the backend runs.
type BatchItem[T any] struct {
	Ctx   context.Context
	Write T
}

// BatchFunc runs items in one transaction and returns one error per item
// (nil when that item's write committed). It is called by one goroutine at
// a time.
type BatchFunc[T any] func(ctx context.Context, items []BatchItem[T]) []error

// Batcher is group commit: concurrent Do calls are gathered into batches of
// at most max items, each committed in one transaction by run. The first
// caller to find no batch running becomes the leader: it runs one batch
// (its own write and whatever queued before it started), hands every
// caller its own result and passes the lead to the first caller still
// queued. No goroutine of its own runs: nothing is left behind by Close.
type Batcher[T any] struct {
	run     BatchFunc[T]
	max     int
	timeout time.Duration

	mu     sync.Mutex
	idle   *sync.Cond
	queue  []*waiter[T]
	busy   bool // a leader is running or has been chosen
	closed bool
}

type waiter[T any] struct {
	item     BatchItem[T]
	wake     chan struct{} // one signal: done or promoted
	taken    bool          // inside a running batch
	done     bool
	promoted bool
	err      error
}

// NewBatcher returns a Batcher committing with run, at most max items per
// batch (DefaultMaxBatch when max <= 0), each batch bounded by timeout
// (DefaultBatchTimeout when timeout <= 0).
func NewBatcher[T any](run BatchFunc[T], max int, timeout time.Duration) *Batcher[T] {
	if max <= 0 {
		max = DefaultMaxBatch
	}
	if timeout <= 0 {
		timeout = DefaultBatchTimeout
	}
	b := &Batcher[T]{run: run, max: max, timeout: timeout}
	b.idle = sync.NewCond(&b.mu)
	return b
}

// Do queues w and returns once its batch committed (nil), or with the
// write's own error. A caller whose context ends while queued is removed
// and gets the context's error (nothing was written); one whose write is
// already in a committing batch gets ErrWriteInDoubt wrapping the
// context's error, unless the batch finished first (then its result).
func (b *Batcher[T]) Do(ctx context.Context, w T) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return ErrBatcherClosed
	}
	p := &waiter[T]{item: BatchItem[T]{Ctx: ctx, Write: w}, wake: make(chan struct{}, 1)}
	b.queue = append(b.queue, p)
	if !b.busy {
		b.busy = true
		b.mu.Unlock()
		return b.lead(p)
	}
	b.mu.Unlock()
	select {
	case <-p.wake:
	case <-ctx.Done():
		b.mu.Lock()
		switch {
		case p.done:
			b.mu.Unlock()
			return p.err
		case p.taken:
			b.mu.Unlock()
			return fmt.Errorf("%w: %w", ErrWriteInDoubt, ctx.Err())
		default: // still queued, perhaps just promoted: leave, pass the lead on
			b.remove(p)
			if p.promoted {
				b.handOff()
			}
			b.mu.Unlock()
			return ctx.Err()
		}
	}
	b.mu.Lock()
	if p.done {
		b.mu.Unlock()
		return p.err
	}
	b.mu.Unlock()
	return b.lead(p) // promoted
}

// lead runs the batch holding p (p is first in the queue) and passes the
// lead on.
func (b *Batcher[T]) lead(p *waiter[T]) error {
	b.mu.Lock()
	n := min(len(b.queue), b.max)
	batch := make([]*waiter[T], n)
	copy(batch, b.queue)
	b.queue = append(b.queue[:0:0], b.queue[n:]...)
	items := make([]BatchItem[T], n)
	for i, w := range batch {
		w.taken = true
		items[i] = w.item
	}
	b.mu.Unlock()

	errs := b.runBatch(items)

	b.mu.Lock()
	for i, w := range batch {
		w.done, w.err = true, errs[i]
		if w != p {
			w.wake <- struct{}{}
		}
	}
	b.handOff()
	b.mu.Unlock()
	return p.err
}

// runBatch runs items under a context no caller can cancel, bounded by the
// batch timeout, and always returns one error per item.
func (b *Batcher[T]) runBatch(items []BatchItem[T]) (errs []error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(items[0].Ctx), b.timeout)
	defer cancel()
	defer func() {
		if r := recover(); r != nil {
			// The other callers must not hang on a leader that died.
			panicErr := fmt.Errorf("journal: batch panicked: %v", r)
			errs = make([]error, len(items))
			for i := range errs {
				errs[i] = panicErr
			}
		}
	}()
	errs = b.run(ctx, items)
	if len(errs) != len(items) {
		bad := fmt.Errorf("journal: batch returned %d results for %d writes", len(errs), len(items))
		errs = make([]error, len(items))
		for i := range errs {
			errs[i] = bad
		}
	}
	return errs
}

// handOff promotes the first queued caller to leader, or marks the
// batcher idle. b.mu is held.
func (b *Batcher[T]) handOff() {
	if len(b.queue) > 0 {
		next := b.queue[0]
		next.promoted = true
		next.wake <- struct{}{}
		return
	}
	b.busy = false
	b.idle.Broadcast()
}

func (b *Batcher[T]) remove(p *waiter[T]) {
	for i, w := range b.queue {
		if w == p {
			b.queue = append(b.queue[:i], b.queue[i+1:]...)
			return
		}
	}
}

// Close refuses new writes and waits until the queued and running ones
// are committed.
func (b *Batcher[T]) Close() {
	b.mu.Lock()
	b.closed = true
	for b.busy {
		b.idle.Wait()
	}
	b.mu.Unlock()
}
