package journalkit

import (
	"errors"
	"fmt"

	"github.com/payonce/payonce/internal/corekit"
)

// ErrScopeCollision: a scope's entries cannot move into another scope
// holding one of their references (payonce.JournalUpgrader.MoveScope).
var ErrScopeCollision = errors.New("journal: both scopes hold a reference")

// CheckMoveScope validates MoveScope's scopes: two different scopes a
// client could have recorded under (non-empty, printable, at most 255
// bytes).
func CheckMoveScope(from, to string) error {
	for _, s := range []string{from, to} {
		if s == "" || len(s) > corekit.MaxReferenceLen || !corekit.Printable(s) {
			return fmt.Errorf("%w: a scope is 1 to %d bytes of printable UTF-8", ErrInvalidEntry, corekit.MaxReferenceLen)
		}
	}
	if from == to {
		return fmt.Errorf("%w: a scope cannot move into itself", ErrInvalidEntry)
	}
	return nil
}

// CheckReplaceFingerprint validates ReplaceFingerprint's new fingerprint:
// non-empty and not the old one.
func CheckReplaceFingerprint(old, fp string) error {
	if fp == "" || fp == old {
		return fmt.Errorf("%w: a new fingerprint is required", ErrInvalidEntry)
	}
	return nil
}

// CollisionError is the error of a MoveScope refused because to holds
// Reference too.
func CollisionError(from, to, reference string) error {
	return fmt.Errorf("%w: %q and %q both hold reference %q: settle or purge one of them first", ErrScopeCollision, from, to, reference)
}

// LeasedError is the error of a MoveScope refused because a run holds a
// pending entry of from.
func LeasedError(from, reference string) error {
	return fmt.Errorf("%w: reference %q of scope %q: wait for its run to end", corekit.ErrJournalLeased, reference, from)
}
