//go:build race

package raceexit

import "runtime"

// raceEnabled reports whether the binary was built with -race.
const raceEnabled = true

// raceErrors is how many races the detector has reported.
func raceErrors() int { return runtime.RaceErrors() }
