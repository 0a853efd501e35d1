package journal_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payonce/payonce/journal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recorder is a BatchFunc over int writes: it records every batch and
// fails the writes listed in fail.
type recorder struct {
	mu      sync.Mutex
	batches [][]int
	fail    map[int]bool
	gate    chan struct{} // when set, each batch waits for it
	running atomic.Int32
	maxRun  atomic.Int32
	entered atomic.Int32 // writes handed to run, counted before the gate
}

func (r *recorder) run(ctx context.Context, items []journal.BatchItem[int]) []error {
	n := r.running.Add(1)
	defer r.running.Add(-1)
	r.entered.Add(int32(len(items)))
	for {
		m := r.maxRun.Load()
		if n <= m || r.maxRun.CompareAndSwap(m, n) {
			break
		}
	}
	if r.gate != nil {
		<-r.gate
	}
	errs := make([]error, len(items))
	var ws []int
	for i, it := range items {
		if err := it.Ctx.Err(); err != nil {
			errs[i] = err
			continue
		}
		ws = append(ws, it.Write)
		if r.fail[it.Write] {
			errs[i] = fmt.Errorf("write %d: %w", it.Write, errBad)
		}
	}
	r.mu.Lock()
	r.batches = append(r.batches, ws)
	r.mu.Unlock()
	return errs
}

var errBad = errors.New("bad write")

func TestBatcherGroupsConcurrentWritesAndAnswersEach(t *testing.T) {
	r := &recorder{fail: map[int]bool{7: true}, gate: make(chan struct{})}
	b := journal.NewBatcher(r.run, 16, 1, 0)
	const n = 100
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = b.Do(t.Context(), i) })
	}
	// Let the first batch go once everyone is queued behind it (every
	// write is in the held batch or in the queue), not after a sleep a
	// loaded machine can outlast before the goroutines run.
	require.Eventually(t, func() bool {
		return r.running.Load() == 1 && int(r.entered.Load())+journal.Queued(b) == n
	}, 30*time.Second, time.Millisecond)
	close(r.gate)
	wg.Wait()
	for i, err := range errs {
		if i == 7 {
			require.ErrorIs(t, err, errBad, "the failing write gets its own error")
			continue
		}
		require.NoError(t, err, "write %d", i)
	}
	seen := map[int]int{}
	for _, ws := range r.batches {
		assert.LessOrEqual(t, len(ws), 16, "batches are bounded")
		for _, w := range ws {
			seen[w]++
		}
	}
	assert.Len(t, seen, n)
	for w, c := range seen {
		assert.Equal(t, 1, c, "write %d ran once", w)
	}
	assert.Less(t, len(r.batches), n/4, "concurrent writes share batches")
	assert.EqualValues(t, 1, r.maxRun.Load(), "one lane: one batch at a time")
	b.Close()
}

func TestBatcherLanesBoundConcurrentBatches(t *testing.T) {
	r := &recorder{}
	b := journal.NewBatcher(r.run, 4, 3, 0)
	var wg sync.WaitGroup
	for i := range 300 {
		wg.Go(func() { assert.NoError(t, b.Do(t.Context(), i)) })
	}
	wg.Wait()
	b.Close()
	assert.LessOrEqual(t, r.maxRun.Load(), int32(3))
	total := 0
	for _, ws := range r.batches {
		total += len(ws)
	}
	assert.Equal(t, 300, total)
}

func TestBatcherCancelWhileQueuedWritesNothing(t *testing.T) {
	r := &recorder{gate: make(chan struct{})}
	b := journal.NewBatcher(r.run, 16, 1, 0)
	first := make(chan error, 1)
	go func() { first <- b.Do(t.Context(), 1) }()
	require.Eventually(t, func() bool { return r.running.Load() == 1 }, 30*time.Second, time.Millisecond)

	ctx, cancel := context.WithCancel(t.Context())
	queued := make(chan error, 1)
	go func() { queued <- b.Do(ctx, 2) }()
	// Write 2 is queued behind the running batch before the cancel.
	require.Eventually(t, func() bool { return journal.Queued(b) == 1 }, 30*time.Second, time.Millisecond)
	cancel()
	err := <-queued
	require.ErrorIs(t, err, context.Canceled)
	require.NotErrorIs(t, err, journal.ErrWriteInDoubt, "a queued write was never sent")

	close(r.gate)
	require.NoError(t, <-first)
	require.NoError(t, b.Do(t.Context(), 3), "the lane was passed on")
	b.Close()
	for _, ws := range r.batches {
		assert.NotContains(t, ws, 2)
	}
}

func TestBatcherFollowerInBatchGetsInDoubt(t *testing.T) {
	gate := make(chan struct{})
	var entered atomic.Int32
	run := func(ctx context.Context, items []journal.BatchItem[int]) []error {
		entered.Add(int32(len(items)))
		<-gate
		return make([]error, len(items))
	}
	b := journal.NewBatcher(run, 16, 1, 0)
	leader := make(chan error, 1)
	// The first batch holds write 0 alone; writes 1 and 2 queue and go in
	// the second batch, led by write 1.
	go func() { leader <- b.Do(t.Context(), 0) }()
	require.Eventually(t, func() bool { return entered.Load() == 1 }, 30*time.Second, time.Millisecond)
	ctx, cancel := context.WithCancel(t.Context())
	res := make(chan error, 2)
	// Write 1 queues before write 2 (it leads their batch); waited for,
	// not slept on: were write 2 first, it would lead, and a leader's
	// cancel is no follower's.
	go func() { res <- b.Do(t.Context(), 1) }()
	require.Eventually(t, func() bool { return journal.Queued(b) == 1 }, 30*time.Second, time.Millisecond)
	go func() { res <- b.Do(ctx, 2) }()
	require.Eventually(t, func() bool { return journal.Queued(b) == 2 }, 30*time.Second, time.Millisecond)
	gate <- struct{}{} // first batch ends
	require.NoError(t, <-leader)
	require.Eventually(t, func() bool { return entered.Load() == 3 }, 30*time.Second, time.Millisecond)
	cancel() // write 2 is inside the second batch
	err := <-res
	require.ErrorIs(t, err, journal.ErrWriteInDoubt)
	require.ErrorIs(t, err, context.Canceled)
	close(gate)
	require.NoError(t, <-res)
	b.Close()
}

func TestBatcherCloseWhileBusyWaitsAndRefusesNewWrites(t *testing.T) {
	r := &recorder{gate: make(chan struct{})}
	b := journal.NewBatcher(r.run, 8, 1, 0)
	var wg sync.WaitGroup
	errs := make([]error, 20)
	for i := range 20 {
		wg.Go(func() { errs[i] = b.Do(t.Context(), i) })
	}
	require.Eventually(t, func() bool { return r.running.Load() == 1 }, 30*time.Second, time.Millisecond)
	closed := make(chan struct{})
	go func() { b.Close(); close(closed) }()
	require.Eventually(t, func() bool {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Millisecond)
		defer cancel()
		return errors.Is(b.Do(ctx, 99), journal.ErrBatcherClosed)
	}, 30*time.Second, time.Millisecond)
	select {
	case <-closed:
		t.Fatal("Close returned while a batch was running")
	default:
	}
	close(r.gate)
	<-closed
	wg.Wait()
	// A write queued before Close is committed; one whose Do came after
	// Close began (a goroutine the scheduler started late) is refused and
	// never written. Nothing else can happen to a write.
	written := map[int]bool{}
	r.mu.Lock()
	for _, batch := range r.batches {
		for _, w := range batch {
			written[w] = true
		}
	}
	r.mu.Unlock()
	assert.NotEmpty(t, written, "the running batch committed")
	for i, err := range errs {
		if written[i] {
			assert.NoError(t, err, "write %d was queued before Close: it is committed", i)
		} else {
			assert.ErrorIs(t, err, journal.ErrBatcherClosed, "write %d came after Close: refused, not lost", i)
		}
	}
}

func TestBatcherBadBatchFuncFailsEveryWriteWithoutHanging(t *testing.T) {
	b := journal.NewBatcher(func(context.Context, []journal.BatchItem[int]) []error { panic("boom") }, 8, 1, 0)
	require.ErrorContains(t, b.Do(t.Context(), 1), "panicked")
	short := journal.NewBatcher(func(context.Context, []journal.BatchItem[int]) []error { return nil }, 8, 1, 0)
	require.Error(t, short.Do(t.Context(), 1))
	b.Close()
	short.Close()
}
