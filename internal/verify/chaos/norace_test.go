//go:build !race

package chaos

// raceEnabled reports whether the test binary was built with -race.
const raceEnabled = false
