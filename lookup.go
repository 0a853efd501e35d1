package payonce

import (
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
