// Package corekit holds the limits, tuning values and plumbing that the root
// package payonce shares with its providers, journal backends, observers
// and tools, and that a merchant never calls: they are not part of the
// public API, so they can change with the core.
package corekit
