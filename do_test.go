package payonce

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// reserveOnlyJournal creates every entry on Reserve and accepts every
// Update: enough for a journaled run that succeeds on its first attempt.
type reserveOnlyJournal struct{ Journal }

func (reserveOnlyJournal) Reserve(_ context.Context, e JournalEntry) (JournalEntry, bool, error) {
	e.Fence = 1
	return e, true, nil
}

func (reserveOnlyJournal) Update(context.Context, JournalEntry) error { return nil }

func (reserveOnlyJournal) Now(context.Context) (time.Time, error) { return time.Time{}, nil }

// A journaled run holds its entry in the client's registry only while Do
// runs: the registry does not grow with every reference.
func TestJournaledRunLetsGoOfItsEntry(t *testing.T) {
	c := setup(t, &recorder{statuses: []int{200}}, WithJournal(reserveOnlyJournal{}), WithScope("acct-test"))
	_, err := c.Do(context.Background(), postReq(), nil, WithReference("order-1"))
	require.NoError(t, err)
	c.held.mu.Lock()
	defer c.held.mu.Unlock()
	assert.Empty(t, c.held.m)
}
