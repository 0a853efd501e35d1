package sqlitejournal

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type codeError int

func (e codeError) Error() string { return fmt.Sprintf("sqlite error %d", int(e)) }
func (e codeError) Code() int     { return int(e) }

// A BEGIN that SQLite refuses at once with SQLITE_BUSY (or LOCKED, with
// any extended code) is tried again within the busy timeout; any other
// error is returned at once, and so is the busy error once the timeout
// has passed or the context has ended.
func TestRetryBusy(t *testing.T) {
	ctx := context.Background()
	calls := 0
	// A budget no loaded machine outlasts in three short waits: the point
	// is that busy errors are retried, not how fast.
	got, err := retryBusy(ctx, time.Minute, func() (int, error) {
		calls++
		switch calls {
		case 1:
			return 0, fmt.Errorf("open: %w", codeError(5))
		case 2:
			return 0, codeError(261) // SQLITE_BUSY_RECOVERY
		case 3:
			return 0, codeError(6)
		}
		return 42, nil
	})
	require.NoError(t, err)
	assert.Equal(t, 42, got)
	assert.Equal(t, 4, calls)

	calls = 0
	_, err = retryBusy(ctx, time.Second, func() (int, error) { calls++; return 0, codeError(19) }) // SQLITE_CONSTRAINT
	assert.Equal(t, codeError(19), err)
	assert.Equal(t, 1, calls)

	calls = 0
	start := time.Now()
	// The budget is far longer than a loaded machine stalls between two
	// calls (a 30 ms one could be used up before the first retry); the
	// bound only catches a retry loop that ignores its budget.
	_, err = retryBusy(ctx, 500*time.Millisecond, func() (int, error) { calls++; return 0, codeError(5) })
	assert.Equal(t, codeError(5), err)
	assert.Greater(t, calls, 1)
	assert.Less(t, time.Since(start), 10*time.Second)

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = retryBusy(cctx, time.Second, func() (int, error) { return 0, codeError(5) })
	assert.True(t, errors.Is(err, context.Canceled))
	assert.True(t, busy(err), "the busy error stays in the chain")
}
