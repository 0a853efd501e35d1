//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package main

import "net"

// canPeek: pending cannot see bytes waiting in a socket here.
const canPeek = false

// pending reports whether bytes wait, unread, in c's socket; here it
// cannot tell, and reports false.
func pending(net.Conn) bool { return false }
