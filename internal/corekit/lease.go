package corekit

import "time"

// ReserveLease is how long Reserve leases a created entry whose Lease is
// lease: lease, or JournalReserveLease when it is not above 0.
func ReserveLease(lease time.Duration) time.Duration {
	if lease > 0 {
		return lease
	}
	return JournalReserveLease
}
