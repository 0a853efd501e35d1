package coinepaytest_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce/coinepay/coinepaytest"
	"github.com/payonce/payonce/internal/fakeserver"
	"github.com/payonce/payonce/payoncetest"
)

// A refusal before the commit is not kept: the same key and body execute
// on the next attempt, and that answer is the one kept.
func TestRefuseBeforeCommitAnswersOneKeyDifferentlyTwice(t *testing.T) {
	s := coinepaytest.New(t)
	const key = "job-refused-then-run"
	require.NoError(t, s.AddFault(payoncetest.Rule{Fault: payoncetest.FaultKind(fakeserver.RefuseBeforeCommit), IdempotencyKey: key, Count: 1}))
	first := apply(t, s, key, applyBody)
	assert.Equal(t, 400, first.Status)
	assert.Equal(t, "openapi_invalid_request", first.Env.MessageKey)
	assert.Empty(t, s.Ledger().Operations(), "a refusal executes nothing")

	second := apply(t, s, key, applyBody)
	require.Equal(t, 200, second.Status, "%s", second.Raw)
	id := cardID(t, second)
	third := apply(t, s, key, applyBody)
	assert.Equal(t, id, cardID(t, third), "the 2xx is kept and replayed")
	assert.Len(t, s.Ledger().Operations(), 1)
}

func TestRefuseBeforeCommitStatusIsA4xx(t *testing.T) {
	for _, st := range []int{200, 409, 429, 503} {
		r := fakeserver.Rule{Fault: fakeserver.RefuseBeforeCommit, Status: st}
		assert.Error(t, r.Validate(), "status %d", st)
	}
	r := fakeserver.Rule{Fault: fakeserver.RefuseBeforeCommit}
	require.NoError(t, r.Validate())
	assert.Equal(t, 400, r.Status)
}

// A key that executed is never refused: its kept answer comes back.
func TestRefuseBeforeCommitSparesAKeyThatRan(t *testing.T) {
	s := coinepaytest.New(t)
	const key = "job-ran-first"
	first := apply(t, s, key, applyBody)
	require.Equal(t, 200, first.Status)
	require.NoError(t, s.AddFault(payoncetest.Rule{Fault: payoncetest.FaultKind(fakeserver.RefuseBeforeCommit), IdempotencyKey: key, Count: 1}))
	again := apply(t, s, key, applyBody)
	assert.Equal(t, 200, again.Status)
	assert.Equal(t, cardID(t, first), cardID(t, again))
}
