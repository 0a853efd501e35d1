// Package corekit holds the limits, tuning values and plumbing that the root
// package payonce shares with its providers, journal backends, observers
// and tools, and that a merchant never calls: they are not part of the
// public API, so they can change with the core.
//
// Who uses it: the root package payonce, the a55 and coinepay clients, the
// journal backends, otelpayonce, reconcile and cmd/payonce. It ships in
// every merchant's binary.
package corekit
