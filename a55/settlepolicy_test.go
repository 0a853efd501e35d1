package a55

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/payonce/payonce"
)

// A charge in a failed status (error or declined, in any letter case) may
// be an attempt of an entry recorded failed, or an earlier attempt of one
// whose charge is known: such an entry could have made it, so a lookup
// for another entry weighs it as a rival, never takes the charge as its
// own. A charge in another status it could not have made.
func TestChargePolicyFailedChargeOfAFailedEntry(t *testing.T) {
	failed := payonce.JournalEntry{Reference: "order-B/attempt-1", State: payonce.JournalFailed}
	known := payonce.JournalEntry{Reference: "order-C/attempt-1", State: payonce.JournalSucceeded, ResourceID: "ch-known"}
	from, to := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	for _, status := range []Status{"error", "ERROR", "Error", " error", "declined", "DECLINED"} {
		ch := &Charge{UUID: "ch-1", Status: status}
		assert.True(t, chargePolicy{}.CouldMake(failed, ch, from, to), "a failed entry could have made a charge in status %q", status)
		assert.True(t, chargePolicy{}.CouldMake(known, ch, from, to), "an earlier attempt of an entry whose charge is known could have made a charge in status %q", status)
	}
	for _, status := range []Status{"confirmed", "CONFIRMED", "pending"} {
		ch := &Charge{UUID: "ch-1", Status: status}
		assert.False(t, chargePolicy{}.CouldMake(failed, ch, from, to), status)
		assert.False(t, chargePolicy{}.CouldMake(known, ch, from, to), status)
	}
}
