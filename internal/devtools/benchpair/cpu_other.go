//go:build !unix

package benchpair

import "time"

// CPUTime is 0 where the process's CPU time is not read: cpu-ratio is
// not reported.
func CPUTime() time.Duration { return 0 }
