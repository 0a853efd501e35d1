package journaltest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/payonce/payonce"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ManyWriters runs many concurrent Reserve and Update calls on j, as group
// commit batches them: each reference is reserved by several callers at
// once (exactly one creates it, every one gets the same key), then
// settled by one and moved back to pending by another (refused). Every
// write returned without error is read back.
func ManyWriters(t *testing.T, j payonce.Journal) {
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
		assert.ErrorIs(t, j.Update(ctx(t), e), payonce.ErrJournalNotFound)
	})
	wg.Wait()
	for r := range refs {
		require.NoError(t, errs[r][0])
		require.ErrorIs(t, errs[r][1], payonce.ErrJournalSettled)
		got, err := j.Get(ctx(t), "scope", fmt.Sprintf("many-%d", r))
		require.NoError(t, err)
		assert.Equal(t, payonce.JournalSucceeded, got.State)
		assert.Equal(t, 201, got.StatusCode)
	}
}
