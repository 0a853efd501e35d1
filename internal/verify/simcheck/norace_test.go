//go:build !race

package simcheck

// raceEnabled: the race detector is off.
const raceEnabled = false
