package payonce

import (
	"time"

	"github.com/payonce/payonce/internal/corekit"
)

// Errors of a settle lookup (a55.ChargesService.SettleCreate,
// coinepay.CardsService.SettleApply): the provider's records did not tell
// what happened, so nothing was recorded and the entry stays pending.
var (
	// ErrLookupAmbiguous: more than one operation at the provider could be
	// the entry's. The lookup never picks one: settle by hand
	// (Client.Settle) once you know which, if any, is yours.
	ErrLookupAmbiguous = corekit.ErrLookupAmbiguous
	// ErrLookupNotFound: no operation at the provider matches the entry,
	// and the lookup was not allowed to conclude that none ran (or its
	// window is not over yet).
	ErrLookupNotFound = corekit.ErrLookupNotFound
)

// LookupWindow returns the span in which an attempt under e's key can have
// executed at the provider: from the earlier of the key's creation and the
// entry's reservation to the entry's last change (every attempt records
// its start before it is sent), each side widened by margin (zero or less:
// 15 minutes). A lookup that finds nothing may conclude that
// nothing ran only once the provider's clock is past the window's end.
func LookupWindow(e JournalEntry, margin time.Duration) (from, to time.Time) {
	if margin <= 0 {
		margin = corekit.DefaultLookupMargin
	}
	for _, t := range []time.Time{e.KeyCreated, e.CreatedAt, e.UpdatedAt} {
		if t.IsZero() {
			continue
		}
		if from.IsZero() || t.Before(from) {
			from = t
		}
		if t.After(to) {
			to = t
		}
	}
	return from.Add(-margin), to.Add(margin)
}
