//go:build !unix

package chaos

// pause cannot stop a process on this platform: no stall.
func (p *workerProc) pause() bool { return false }

func (p *workerProc) resume() {}
