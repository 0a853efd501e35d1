package fakeserver

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// waiting blocks until a WaitCount sleeps on l.
func waiting(t *testing.T, l *Ledger) {
	t.Helper()
	require.Eventually(t, func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return len(l.waiters) > 0
	}, 5*time.Second, time.Millisecond)
}

// An operation a waiter saw committed counts though the cap drops it
// before the waiter wakes: WaitCount counts what ran, not what is kept.
func TestLedgerWaitCountCountsOperationsTheCapDropped(t *testing.T) {
	l := &Ledger{max: 1}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- l.WaitCount(ctx, "k", 2) }()
	waiting(t, l)
	l.Record(Operation{IdempotencyKey: "k"})
	l.Record(Operation{IdempotencyKey: "k"}) // the cap of 1 drops the first
	require.NoError(t, <-done)
	assert.Equal(t, 1, l.Count("k"), "the ledger keeps one")
}

// A commit a waiter is waiting for wakes it even when a Reset follows
// before it runs again; a waiter that gives up leaves nothing behind.
func TestLedgerWaitCountSurvivesAResetAfterTheCommit(t *testing.T) {
	l := &Ledger{}
	for range 20 {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		done := make(chan error, 1)
		go func() { done <- l.WaitCount(ctx, "k", 1) }()
		waiting(t, l)
		l.Record(Operation{IdempotencyKey: "k"})
		l.Reset()
		require.NoError(t, <-done)
		cancel()
	}
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		for {
			l.mu.Lock()
			asleep := len(l.waiters) > 0
			l.mu.Unlock()
			if asleep {
				cancel()
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	require.ErrorIs(t, l.WaitCount(ctx, "k", 1), context.Canceled)
	l.mu.Lock()
	defer l.mu.Unlock()
	assert.Empty(t, l.waiters, "a waiter that gave up is forgotten")
}
