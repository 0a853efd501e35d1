//go:build !race

package raceexit

// raceEnabled reports whether the binary was built with -race.
const raceEnabled = false

// raceErrors is how many races the detector has reported: none without it.
func raceErrors() int { return 0 }
