package payoncetest_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce/internal/testsupport/admintest"
	"github.com/payonce/payonce/payoncetest"
)

// The idempotency semantics every fake shares, through each fake's
// HTTPClient: another key runs again, a key in flight is waited for, and
// a key in flight with another payload is a conflict.

// assertSpent checks, where the fake keeps a balance, that n operations
// were paid for.
func assertSpent(t *testing.T, f *running, n int) {
	t.Helper()
	if f.spent != nil {
		want, got := f.spent(n)
		assert.Equal(t, want, got, "the balance after %d operations", n)
	}
}

func TestDifferentKeySameBodyRunsTwice(t *testing.T) {
	forEach(t, func(t *testing.T, p provider) {
		f := p.start(t)
		a := f.send(t, "key-aaaaaaaaaaaaaaaa", p.body)
		b := f.send(t, "key-bbbbbbbbbbbbbbbb", p.body)
		require.Equal(t, 200, a.status, "%s", a.raw)
		require.Equal(t, 200, b.status, "%s", b.raw)
		assert.NotEqual(t, a.id, b.id)
		assert.Equal(t, 2, f.Ledger().CountKind(p.kind))
		assertSpent(t, f, 2)
	})
}

func TestConcurrentSameKeyRunsOnce(t *testing.T) {
	forEach(t, func(t *testing.T, p provider) {
		f := p.start(t)
		// Hold the first execution so the others arrive while it is in flight.
		require.NoError(t, f.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDelay, Delay: 50 * time.Millisecond, Count: 1}))
		const key = "key-concurrent-0123456789"
		const n = 8
		answers := make([]answer, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() { defer wg.Done(); answers[i] = f.send(t, key, p.body) }()
		}
		wg.Wait()
		require.NotEmpty(t, answers[0].id, "%s", answers[0].raw)
		for _, a := range answers {
			assert.Equal(t, 200, a.status)
			assert.Equal(t, answers[0].id, a.id, "every caller gets the final result")
		}
		assert.True(t, f.Ledger().ExecutedOnce(key))
		assertSpent(t, f, 1)
	})
}

func TestConcurrentSameKeyDifferentBodyConflictsInFlight(t *testing.T) {
	forEach(t, func(t *testing.T, p provider) {
		f := p.start(t)
		require.NoError(t, f.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDelay, Delay: 200 * time.Millisecond, Count: 1}))
		const key = "key-in-flight-0123456789"
		done := make(chan answer)
		go func() { done <- f.send(t, key, p.body) }()
		// The first request is held by the delay (its rule fired and it is
		// not logged as done), not merely started after a sleep a loaded
		// machine can outrun.
		require.Eventually(t, func() bool {
			fired, rules := admintest.FaultsFired(f.url)
			return len(f.Requests()) == 0 && rules == 1 && fired == 1
		}, 10*time.Second, time.Millisecond)
		b := f.send(t, key, p.otherBody)
		a := <-done
		// Whichever request reached the store first runs (the delayed one,
		// almost always); the other, same key and another body, gets 409.
		if a.status == 409 {
			a, b = b, a
		}
		assert.Equal(t, 200, a.status, "%s", a.raw)
		assert.Equal(t, 409, b.status, "%s", b.raw)
		assert.Equal(t, p.conflict, b.code)
		assert.Equal(t, 1, f.Ledger().Count(key))
	})
}
