package corekit

import "strings"

// StatusIs reports whether got, a status or code a provider sent, is
// want, without regard to letter case or the spaces around it: a charge
// answered "ERROR" or " error " failed as one answered "error" did.
// Wherever a provider's status decides success or failure, it is
// compared with StatusIs (or read through StatusKey), never with ==.
func StatusIs[S ~string](got, want S) bool {
	return strings.EqualFold(strings.TrimSpace(string(got)), strings.TrimSpace(string(want)))
}

// StatusKey is the form of a status or code StatusIs compares: trimmed
// and lower-cased, for a switch over the values a provider documents in
// lower case.
func StatusKey[S ~string](s S) string { return strings.ToLower(strings.TrimSpace(string(s))) }
