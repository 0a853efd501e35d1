package chaos

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRunFarLargerThanTheFakesCaps: a run of many segments against fakes
// that keep three segments' worth of answers, ledger and resources still
// checks every operation, since it reads the ledger segment by segment.
func TestRunFarLargerThanTheFakesCaps(t *testing.T) {
	t.Parallel()
	cfg := testConfig(240)
	cfg.segmentOps = 20 // the fakes keep 60 operations
	rep, err := Run(context.Background(), cfg)
	require.NoError(t, err)
	assert.True(t, rep.Passed(), rep.Problems)
	assert.Zero(t, rep.Lost)
	assert.Zero(t, rep.Duplicates)
	assert.Zero(t, rep.Failed, rep.Problems)
	ledger := 0
	for _, k := range rep.ByKind {
		ledger += k.Ledger
	}
	assert.GreaterOrEqual(t, rep.Operations, 240)
	assert.Equal(t, rep.Operations, ledger, "every operation was read from a ledger that kept only 60")
}
