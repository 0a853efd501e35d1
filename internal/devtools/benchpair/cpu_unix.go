//go:build unix

package benchpair

import (
	"syscall"
	"time"
)

// CPUTime is the process's CPU time, user and system: every goroutine's,
// the client's, an in-process server's and the GC's.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
