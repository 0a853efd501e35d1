//go:build unix

package chaos

import "syscall"

// pause stops the worker process (SIGSTOP): its timers and sockets wait
// with it, as in a long GC pause or a frozen VM.
func (p *workerProc) pause() bool { return p.cmd.Process.Signal(syscall.SIGSTOP) == nil }

// resume lets a paused worker run on (SIGCONT).
func (p *workerProc) resume() { _ = p.cmd.Process.Signal(syscall.SIGCONT) }
