//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package main

import (
	"net"
	"syscall"
)

// canPeek: pending can see bytes waiting in a socket here.
const canPeek = true

// pending reports whether bytes wait, unread, in c's socket. It does not
// consume them and does not block.
func pending(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	var n int
	if err := rc.Control(func(fd uintptr) {
		var b [1]byte
		n, _, _ = syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	}); err != nil {
		return false
	}
	return n > 0
}
