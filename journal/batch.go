package journal

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/payonce/payonce"
)

// DefaultMaxBatch is the most writes a Batcher commits in one transaction.
const DefaultMaxBatch = 128

// defaultBatchTimeout bounds one batch's transaction, whatever the callers'
// contexts: a batch runs for several callers, so no one caller's context
// may cancel it.
const defaultBatchTimeout = 30 * time.Second

// BatchItem is one caller's write in a batch: Ctx is the caller's context
// (a backend checks it before running the write and runs the write under
// the batch's context) and Write the payload the backend runs.
type BatchItem[T any] struct {
	Ctx   context.Context
	Write T
}

// Batcher is group commit: concurrent Do calls are gathered into batches of
// at most max items, each committed in one transaction by run. A caller
// finding fewer than lanes batches running becomes a leader: it runs one
// batch (its own write and whatever queued before it started, in arrival
// order), hands every caller its own result and passes the lead to the
// first caller still queued. With one lane (SQLite: one writer at a time)
// batches follow each other; with more (PostgreSQL) a batch is gathered
// while another commits. No goroutine of its own runs: nothing is left
// behind by Close.
type Batcher[T any] struct {
	run     func(ctx context.Context, items []BatchItem[T]) []error
	max     int
	lanes   int
	timeout time.Duration

	mu      sync.Mutex
	idle    *sync.Cond
	queue   []*waiter[T]
	leaders int // callers holding a lane: leading, or promoted and waking up
	closed  bool
}

type waiter[T any] struct {
	item     BatchItem[T]
	wake     chan struct{} // at most two signals: promoted, done
	promoted bool          // holds a lane
	leading  bool          // has used its lane
	taken    bool          // inside a running batch
	done     bool
	err      error
}

// NewBatcher returns a Batcher committing with run, at most maxItems per
// batch (DefaultMaxBatch when max <= 0), at most lanes batches at once (1
// when lanes <= 0), each batch bounded by timeout (defaultBatchTimeout
// when timeout <= 0).
func NewBatcher[T any](run func(ctx context.Context, items []BatchItem[T]) []error, maxItems, lanes int, timeout time.Duration) *Batcher[T] {
	if maxItems <= 0 {
		maxItems = DefaultMaxBatch
	}
	lanes = min(max(lanes, 1), maxItems)
	if timeout <= 0 {
		timeout = defaultBatchTimeout
	}
	b := &Batcher[T]{run: run, max: maxItems, lanes: lanes, timeout: timeout}
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
	p := &waiter[T]{item: BatchItem[T]{Ctx: ctx, Write: w}, wake: make(chan struct{}, 2)}
	b.queue = append(b.queue, p)
	if b.leaders < b.lanes {
		b.leaders++
		p.promoted = true
	}
	b.mu.Unlock()
	return b.wait(ctx, p)
}

// wait blocks until p is done, or leads when p is promoted.
func (b *Batcher[T]) wait(ctx context.Context, p *waiter[T]) error {
	for {
		b.mu.Lock()
		switch {
		case p.done:
			b.release(p)
			b.mu.Unlock()
			return p.err
		case p.promoted && !p.leading:
			p.leading = true
			b.mu.Unlock()
			if done := b.lead(p); done {
				return p.err
			}
			continue
		}
		b.mu.Unlock()
		select {
		case <-p.wake:
		case <-ctx.Done():
			b.mu.Lock()
			b.release(p)
			switch {
			case p.done:
				b.mu.Unlock()
				return p.err
			case p.taken:
				b.mu.Unlock()
				return fmt.Errorf("%w: %w", ErrWriteInDoubt, ctx.Err())
			}
			// Still queued: leave, nothing was written.
			b.remove(p)
			b.mu.Unlock()
			return ctx.Err()
		}
	}
}

// release passes on the lane p holds but has not used, as p leaves.
// b.mu is held.
func (b *Batcher[T]) release(p *waiter[T]) {
	if p.promoted && !p.leading {
		p.leading = true
		b.handOff()
	}
}

// lead runs a batch holding p, then passes p's lane on. It reports false
// when another leader had already taken p (p then waits for that batch).
func (b *Batcher[T]) lead(p *waiter[T]) bool {
	b.mu.Lock()
	if p.taken {
		b.handOff()
		b.mu.Unlock()
		return false
	}
	batch := make([]*waiter[T], 0, min(len(b.queue), b.max))
	batch = append(batch, p)
	rest := b.queue[:0:0]
	for _, w := range b.queue {
		switch {
		case w == p:
		case len(batch) < b.max:
			batch = append(batch, w)
		default:
			rest = append(rest, w)
		}
	}
	b.queue = rest
	items := make([]BatchItem[T], len(batch))
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
	return true
}

// runBatch runs items under a context no one caller can cancel, bounded
// by the batch timeout and ended once every caller's context has ended
// (nobody is left waiting for the batch: a write waiting for a lock held
// by another process must not outlive its caller's deadline). It always
// returns one error per item; the error of a write whose batch was ended
// that way wraps ErrWriteInDoubt and the caller's context error.
func (b *Batcher[T]) runBatch(items []BatchItem[T]) (errs []error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(items[0].Ctx), b.timeout)
	defer cancel()
	var left atomic.Int64
	left.Store(int64(len(items)))
	for _, it := range items {
		stop := context.AfterFunc(it.Ctx, func() {
			if left.Add(-1) == 0 {
				cancel()
			}
		})
		defer stop()
	}
	defer func() {
		if ctx.Err() == nil || left.Load() > 0 {
			return
		}
		for i, err := range errs {
			if err != nil && items[i].Ctx.Err() != nil {
				errs[i] = fmt.Errorf("%w: %w (%w)", ErrWriteInDoubt, items[i].Ctx.Err(), err)
			}
		}
	}()
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

// handOff passes a lane to the first queued caller not holding one, or
// frees it. b.mu is held.
func (b *Batcher[T]) handOff() {
	for _, w := range b.queue {
		if !w.promoted {
			w.promoted = true
			w.wake <- struct{}{}
			return
		}
	}
	b.leaders--
	if b.leaders == 0 {
		b.idle.Broadcast()
	}
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
	for b.leaders > 0 || len(b.queue) > 0 {
		b.idle.Wait()
	}
	b.mu.Unlock()
}

// verdict reports whether err, returned by one write of a batch, is the
// write's own answer that changed nothing (ErrJournalNotFound,
// ErrJournalSettled, ErrJournalFenced, ErrJournalLeased, the
// ErrIdempotencyConflict of a Take or an inbox's ErrEventHandled): the
// transaction goes on for the other
// writes. Any other error may have left the transaction unusable, so the
// backend rolls it back and runs each write in its own transaction.
func verdict(err error) bool {
	for _, k := range []error{payonce.ErrJournalNotFound, payonce.ErrJournalSettled, payonce.ErrJournalFenced,
		payonce.ErrJournalLeased, payonce.ErrIdempotencyConflict, payonce.ErrEventHandled} {
		if errors.Is(err, k) {
			return true
		}
	}
	return false
}

// RunBatch is the batch algorithm both SQL backends share. begin opens a
// transaction; write runs one item's write in it; commit commits it and
// rollback abandons it; alone runs one item in a transaction of its own.
// Items whose context ended before their turn get the context's error and
// write nothing. When a write fails with an error verdict does not accept,
// the transaction is rolled back and every item runs alone, so one item's
// failure never fails or undoes another's. A commit failure is returned to
// every item the transaction held.
func RunBatch[T any, Tx any](ctx context.Context, items []BatchItem[T],
	begin func(ctx context.Context) (Tx, error),
	write func(ctx context.Context, tx Tx, w T) error,
	commit func(ctx context.Context, tx Tx) error,
	rollback func(tx Tx),
	alone func(ctx context.Context, w T) error,
) []error {
	errs := make([]error, len(items))
	runAlone := func() []error {
		for i, it := range items {
			if err := it.Ctx.Err(); err != nil {
				errs[i] = err
				continue
			}
			errs[i] = alone(ctx, it.Write)
		}
		return errs
	}
	if len(items) == 1 {
		return runAlone()
	}
	tx, err := begin(ctx)
	if err != nil {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	held := false
	for i, it := range items {
		if err := it.Ctx.Err(); err != nil {
			errs[i] = err
			continue
		}
		if err := write(ctx, tx, it.Write); err != nil {
			if !verdict(err) {
				rollback(tx)
				clear(errs)
				return runAlone()
			}
			errs[i] = err
			continue
		}
		held = true
	}
	if !held {
		rollback(tx)
		return errs
	}
	if err := commit(ctx, tx); err != nil {
		for i := range errs {
			if errs[i] == nil {
				errs[i] = err
			}
		}
	}
	return errs
}
