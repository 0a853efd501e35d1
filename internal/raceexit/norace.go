//go:build !race

package raceexit

// raceEnabled reports whether the binary was built with -race.
const raceEnabled = false
