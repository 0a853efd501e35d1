//go:build race

package simcheck

// raceEnabled: the race detector is on, the exploration takes its small
// bound.
const raceEnabled = true
