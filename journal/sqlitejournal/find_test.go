package sqlitejournal

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// LookAlikes reads the two partial state indexes, not the whole table.
func TestLookAlikesReadTheStateIndexes(t *testing.T) {
	j := openInternal(t)
	args := []any{"s", "charges.create", "", "", 2, 0}
	plan := queryPlan(t, j.DB(), lookAlikesSQL, append(append(args, append(args, 1)...), -1)...)
	assert.Contains(t, plan, "payonce_journal_pending_created")
	assert.Contains(t, plan, "payonce_journal_settled_updated")
	assert.NotContains(t, plan, "SCAN payonce_journal ")
}
