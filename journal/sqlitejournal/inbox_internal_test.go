package sqlitejournal

import (
	"strings"
	"testing"
	"time"

	"github.com/payonce/payonce"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The listings a receiver and an operator run read the inbox's partial
// indexes: a resource's events (an ordering rule, on every delivery),
// unhandled and stuck events; purging reads the handled one.
func TestInboxListingsUseThePartialIndexes(t *testing.T) {
	j := openInternal(t)
	now := time.Now()
	for _, c := range []struct {
		q     payonce.InboxQuery
		index string
	}{
		{payonce.InboxQuery{Scope: "s", ResourceID: "r"}, "payonce_inbox_resource"},
		{payonce.InboxQuery{Scope: "s", ResourceID: "r", Unhandled: true}, "payonce_inbox_resource"},
		{payonce.InboxQuery{Unhandled: true}, "payonce_inbox_unhandled"},
		{payonce.InboxQuery{Stuck: true, Limit: 10}, "payonce_inbox_unhandled"},
	} {
		query, args := eventsSQL(c.q, now)
		assert.Contains(t, plan(t, j, query, args...), c.index, query)
	}
	assert.Contains(t, plan(t, j, `DELETE FROM payonce_inbox WHERE handled_at <> 0 AND handled_at < ?`, 5), "payonce_inbox_handled")
}

func plan(t *testing.T, j *Journal, query string, args ...any) string {
	t.Helper()
	rows, err := j.DB().QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+query, args...)
	require.NoError(t, err)
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		require.NoError(t, rows.Scan(&id, &parent, &unused, &detail))
		lines = append(lines, detail)
	}
	require.NoError(t, rows.Err())
	return strings.Join(lines, "\n")
}
