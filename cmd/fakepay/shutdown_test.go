package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A client still sending its body when SIGTERM arrives does not turn the
// shutdown into a failure: after -shutdown-timeout the remaining
// connections are closed and the exit status is 0, as documented.
func TestShutdownWithASlowClientStillSucceeds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	listening, _, errc, err := startRun(ctx, "-addr", "127.0.0.1:0", "-shutdown-timeout", "100ms")
	require.NoError(t, err)
	addr := listening.String()

	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.Write([]byte("POST /_fakepay/reset HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\nContent-Length: 10\r\n\r\n{}"))
	require.NoError(t, err)
	// net/http answers 100 Continue at the handler's first read of the
	// body: the handler is now reading it. (A sleep here let a loaded
	// machine cancel before the server had read the request, whose
	// connection was then closed as silent, unread bytes and all: a reset,
	// not the grace period's close.)
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(30*time.Second)))
	const cont = "HTTP/1.1 100 Continue\r\n\r\n"
	got := make([]byte, len(cont))
	_, err = io.ReadFull(conn, got)
	require.NoError(t, err)
	require.Equal(t, cont, string(got))
	cancel()
	select {
	case err := <-errc:
		assert.NoError(t, err)
	case <-time.After(30 * time.Second): // bounds a hang; the grace period is 100 ms
		t.Fatal("run did not return after cancel")
	}
	// The slow client's connection was closed, not left open.
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(5*time.Second)))
	_, err = io.ReadAll(conn)
	assert.NoError(t, err, "the server closed the connection")
}

// A connection that never sent a byte (a client's spare dial, or a port
// probe) does not hold the shutdown: net/http counts such a connection as
// busy for its first 5 seconds, so fakepay closes it itself. Nothing was
// read from it, so nothing is lost.
func TestShutdownDoesNotWaitForSilentConnections(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	listening, _, errc, err := startRun(ctx, "-addr", "127.0.0.1:0", "-shutdown-timeout", "1m")
	require.NoError(t, err)
	addr := listening.String()

	silent, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer silent.Close()
	// A request on another connection proves the silent one was accepted
	// before the cancel (connections are accepted in order).
	busy, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer busy.Close()
	_, err = busy.Write([]byte("GET /_fakepay/ledger HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"))
	require.NoError(t, err)
	status, err := bufio.NewReader(busy).ReadString('\n')
	require.NoError(t, err)
	require.Contains(t, status, "200")

	start := time.Now()
	cancel()
	select {
	case err := <-errc:
		assert.NoError(t, err)
		// net/http alone would wait out its 5 s rule for new connections.
		assert.Less(t, time.Since(start), 4*time.Second)
	case <-time.After(20 * time.Second):
		t.Fatal("run did not return after cancel")
	}
	require.NoError(t, silent.SetReadDeadline(time.Now().Add(5*time.Second)))
	n, err := silent.Read(make([]byte, 1))
	assert.Zero(t, n)
	assert.ErrorIs(t, err, io.EOF, "the server closed the silent connection")
}
