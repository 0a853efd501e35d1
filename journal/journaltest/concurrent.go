package journaltest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/journal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ManyWriters runs many concurrent Reserve and Update calls on j, as group
// commit batches them: each reference is reserved by several callers at
// once (exactly one creates it, every one gets the same key), then
// settled by one and moved back to pending by another (refused). Every
// write returned without error is read back.
func ManyWriters(t *testing.T, j journal.Store) {
	t.Helper()
	const refs, callers = 40, 3
	created := make([][]bool, refs)
	keys := make([][]string, refs)
	var wg sync.WaitGroup
	for r := range refs {
		created[r], keys[r] = make([]bool, callers), make([]string, callers)
		for c := range callers {
			wg.Go(func() {
				e := Entry("scope", fmt.Sprintf("many-%d", r))
				e.Key = fmt.Sprintf("key-%d-%d", r, c)
				got, ok, err := j.Reserve(ctx(t), e)
				if assert.NoError(t, err) {
					created[r][c], keys[r][c] = ok, got.Key
				}
			})
		}
	}
	wg.Wait()
	for r := range refs {
		n := 0
		for c := range callers {
			if created[r][c] {
				n++
				assert.Equal(t, fmt.Sprintf("key-%d-%d", r, c), keys[r][c], "the creator's key is stored")
			}
			assert.Equal(t, keys[r][0], keys[r][c], "every caller sees the one stored key")
		}
		assert.Equal(t, 1, n, "reference %d created once", r)
	}
	errs := make([][2]error, refs)
	for r := range refs {
		wg.Go(func() {
			e, err := j.Get(ctx(t), "scope", fmt.Sprintf("many-%d", r))
			if !assert.NoError(t, err) {
				return
			}
			e.State, e.StatusCode = payonce.JournalSucceeded, 201
			errs[r][0] = j.Update(ctx(t), e)
			e.State = payonce.JournalPending
			errs[r][1] = j.Update(ctx(t), e)
		})
	}
	wg.Go(func() {
		e := Entry("scope", "many-absent")
		assert.ErrorIs(t, j.Update(ctx(t), e), journal.ErrNotFound)
	})
	wg.Wait()
	for r := range refs {
		require.NoError(t, errs[r][0])
		require.ErrorIs(t, errs[r][1], journal.ErrSettled)
		got, err := j.Get(ctx(t), "scope", fmt.Sprintf("many-%d", r))
		require.NoError(t, err)
		assert.Equal(t, payonce.JournalSucceeded, got.State)
		assert.Equal(t, 201, got.StatusCode)
	}
}

// ManyAttempts runs many concurrent BeginAttempt calls on j, as group
// commit batches them, half of them with a stale fence: every refused
// one is ErrJournalFenced and changes nothing, every accepted one is
// counted exactly once, whatever batch it shared with refused ones.
func ManyAttempts(t *testing.T, j journal.Store) {
	t.Helper()
	const refs, callers = 20, 6
	for r := range refs {
		e := Entry("scope", fmt.Sprintf("att-%d", r))
		e.LeaseOwner = "run"
		_, _, err := j.Reserve(ctx(t), e)
		require.NoError(t, err)
		_, err = j.Take(ctx(t), payonce.JournalEntry{Scope: "scope", Reference: e.Reference, LeaseOwner: "run", Lease: time.Hour})
		require.NoError(t, err) // fence 2: fence 1 is stale
	}
	var wg sync.WaitGroup
	errs := make([][callers]error, refs)
	for r := range refs {
		for c := range callers {
			wg.Go(func() {
				fence := int64(2)
				if c%2 == 1 {
					fence = 1
				}
				_, errs[r][c] = j.BeginAttempt(ctx(t), payonce.JournalEntry{Scope: "scope", Reference: fmt.Sprintf("att-%d", r),
					Fence: fence, LeaseOwner: "run", Lease: time.Hour})
			})
		}
	}
	wg.Wait()
	for r := range refs {
		for c := range callers {
			if c%2 == 1 {
				assert.ErrorIs(t, errs[r][c], payonce.ErrJournalFenced)
			} else {
				assert.NoError(t, errs[r][c])
			}
		}
		got, err := j.Get(ctx(t), "scope", fmt.Sprintf("att-%d", r))
		require.NoError(t, err)
		assert.Equal(t, callers/2, got.Attempts, "each accepted attempt counted once")
		assert.True(t, got.Sent)
		assert.Equal(t, int64(2), got.Fence)
	}
}
