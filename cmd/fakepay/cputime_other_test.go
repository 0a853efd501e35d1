//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package main

import "time"

// processCPU returns the CPU time the process has used, or false where it
// cannot tell (here).
func processCPU() (time.Duration, bool) { return 0, false }
