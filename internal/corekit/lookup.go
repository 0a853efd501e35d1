package corekit

import "time"

// LookupWindow returns the span in which an attempt under a journal
// entry's key can have executed at the provider, given the entry's times
// (its KeyCreated, CreatedAt and UpdatedAt; zero ones are skipped): from
// the earliest, the key's creation or the entry's reservation, to the
// latest, the entry's last change (every attempt records its start before
// it is sent), each side widened by margin (zero or less:
// DefaultLookupMargin). A lookup that finds nothing may conclude that
// nothing ran only once the provider's clock is past the window's end.
func LookupWindow(margin time.Duration, times ...time.Time) (from, to time.Time) {
	if margin <= 0 {
		margin = DefaultLookupMargin
	}
	for _, t := range times {
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
