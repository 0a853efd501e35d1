package a55

import "github.com/payonce/payonce/internal/corekit"

// Errors of a settle lookup (ChargesService.SettleCreate), besides
// payonce's: A55's records did not tell what happened, so nothing was
// recorded and the entry stays pending.
var (
	// ErrLookupAmbiguous: more than one charge at A55 could be the
	// entry's. The lookup never picks one: settle by hand
	// (payonce.Client.Settle) once you know which, if any, is yours.
	ErrLookupAmbiguous = corekit.ErrLookupAmbiguous
	// ErrLookupNotFound: no charge at A55 matches the entry, and the
	// lookup was not allowed to conclude that none ran (or its window is
	// not over yet).
	ErrLookupNotFound = corekit.ErrLookupNotFound
)
