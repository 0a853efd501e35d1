package simcheck

import "github.com/payonce/payonce"

// entryExtra is the part of an entry's state beyond the fields every
// version of the journal has.
func entryExtra(_ *world, _ payonce.JournalEntry) string { return "" }
