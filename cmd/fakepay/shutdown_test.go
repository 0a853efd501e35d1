package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"strings"
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
	pr, pw := io.Pipe()
	errc := make(chan error, 1)
	go func() {
		errc <- run(ctx, []string{"-addr", "127.0.0.1:0", "-shutdown-timeout", "100ms"}, pw)
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	require.NoError(t, err)
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	addr := strings.TrimPrefix(strings.TrimSpace(strings.TrimPrefix(line, "fakepay listening on ")), "http://")

	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.Write([]byte("POST /_fakepay/reset HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n{}"))
	require.NoError(t, err)
	time.Sleep(50 * time.Millisecond) // the handler is now reading the body
	cancel()
	select {
	case err := <-errc:
		assert.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("run did not return after cancel")
	}
	// The slow client's connection was closed, not left open.
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(5*time.Second)))
	_, err = io.ReadAll(conn)
	assert.NoError(t, err, "the server closed the connection")
}
