package main

import (
	"net"
	"net/http"
	"sync"
	"sync/atomic"
)

// connTracker remembers which of a server's connections have not yet
// sent a byte, so a shutdown can close them at once. net/http's Shutdown
// counts such a connection as busy for its first five seconds (it cannot
// tell a silent client from a request about to arrive), so a client's
// spare dial would otherwise hold every shutdown for that long.
//
// net/http reports a connection new (http.StateNew) until it has read a
// whole request header, so new is not silent: a request the server has
// not read yet (a loaded machine may take a while) waits in the socket,
// and closing it there resets the client. The tracker's listener marks
// each connection the server has read a byte from, and closeSilent looks
// for bytes waiting in the socket as well.
type connTracker struct {
	mu     sync.Mutex
	silent map[net.Conn]struct{}
}

// listener wraps ln so that the tracker knows which connections the
// server has read from. Serve the server on it.
func (t *connTracker) listener(ln net.Listener) net.Listener { return trackingListener{ln} }

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
// once the server accepts no more connections. A connection that has
// (its request read in part, or waiting to be read) is left to the
// server's Shutdown, which serves the request. Only a first byte that
// arrives during the check is lost with its connection, which the client
// sees as a failed connection and may send again.
func (t *connTracker) closeSilent() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for c := range t.silent {
		if tc, ok := c.(*trackedConn); ok && (tc.read.Load() || pending(tc.Conn)) {
			continue
		}
		_ = c.Close()
		delete(t.silent, c)
	}
}

type trackingListener struct{ net.Listener }

func (l trackingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &trackedConn{Conn: c}, nil
}

// trackedConn is a connection that remembers whether a byte was read
// from it.
type trackedConn struct {
	net.Conn
	read atomic.Bool
}

func (c *trackedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.read.Store(true)
	}
	return n, err
}
