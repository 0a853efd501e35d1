package payonce_test

import (
	"testing"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/corekit"
	"github.com/stretchr/testify/assert"
)

// The window spans the key's creation, the reservation and the last
// change, widened by the margin; a key created after the reservation (a
// clock ahead) does not shrink it.
func TestLookupWindow(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	e := payonce.JournalEntry{KeyCreated: t0.Add(time.Hour), CreatedAt: t0, UpdatedAt: t0.Add(3 * time.Hour)}
	from, to := corekit.LookupWindow(time.Minute, e.KeyCreated, e.CreatedAt, e.UpdatedAt)
	assert.Equal(t, t0.Add(-time.Minute), from)
	assert.Equal(t, t0.Add(3*time.Hour+time.Minute), to)
	from, to = corekit.LookupWindow(0, time.Time{}, t0)
	assert.Equal(t, t0.Add(-corekit.DefaultLookupMargin), from)
	assert.Equal(t, t0.Add(corekit.DefaultLookupMargin), to)
}
