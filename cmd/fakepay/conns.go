package main

import (
	"net"
	"net/http"
	"sync"
)

// connTracker remembers which of a server's connections have not yet
// sent a byte, so a shutdown can close them at once. net/http's Shutdown
// counts such a connection as busy for its first five seconds (it cannot
// tell a silent client from a request about to arrive), so a client's
// spare dial would otherwise hold every shutdown for that long.
type connTracker struct {
	mu     sync.Mutex
	silent map[net.Conn]struct{}
}

// hook is the server's ConnState function.
func (t *connTracker) hook(c net.Conn, s http.ConnState) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s == http.StateNew {
		if t.silent == nil {
			t.silent = make(map[net.Conn]struct{})
		}
		t.silent[c] = struct{}{}
		return
	}
	delete(t.silent, c)
}

// closeSilent closes every connection that has not sent a byte. Call it
// once the server accepts no more connections. A connection whose first
// byte races the close loses only that unread request, which its client
// sees as a failed connection and may send again.
func (t *connTracker) closeSilent() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for c := range t.silent {
		_ = c.Close()
		delete(t.silent, c)
	}
}
