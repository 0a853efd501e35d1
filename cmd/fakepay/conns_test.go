package main

import (
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// closeSilent closes a new connection that sent nothing, and leaves one
// whose request waits unread in its socket (a loaded server has not read
// it yet) or was read in part: closing those would reset a client that
// did send its request.
func TestCloseSilentLeavesConnectionsThatSentBytes(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var conns connTracker
	tl := conns.listener(ln)
	defer tl.Close()
	accept := func() (client, server net.Conn) {
		t.Helper()
		client, err := net.Dial("tcp", ln.Addr().String())
		require.NoError(t, err)
		t.Cleanup(func() { client.Close() })
		server, err = tl.Accept()
		require.NoError(t, err)
		t.Cleanup(func() { server.Close() })
		conns.hook(server, http.StateNew)
		return client, server
	}
	silentClient, _ := accept()
	waitingClient, waiting := accept()
	readClient, read := accept()
	_, err = waitingClient.Write([]byte("GET / HTTP/1.1\r\n"))
	require.NoError(t, err)
	_, err = readClient.Write([]byte("GET / HTTP/1.1\r\n"))
	require.NoError(t, err)
	_, err = read.Read(make([]byte, 4))
	require.NoError(t, err)
	open := map[string]net.Conn{"request read in part": readClient}
	if canPeek {
		require.Eventually(t, func() bool { return pending(waiting.(*trackedConn).Conn) }, 30*time.Second, time.Millisecond)
		open["unread request"] = waitingClient
	}

	conns.closeSilent()
	require.NoError(t, silentClient.SetReadDeadline(time.Now().Add(30*time.Second)))
	_, err = silentClient.Read(make([]byte, 1))
	assert.Error(t, err, "the silent connection is closed")
	assert.NotErrorIs(t, err, os.ErrDeadlineExceeded)
	for name, c := range open {
		require.NoError(t, c.SetReadDeadline(time.Now().Add(100*time.Millisecond)))
		_, err = c.Read(make([]byte, 1))
		assert.ErrorIs(t, err, os.ErrDeadlineExceeded, "%s: left open", name)
	}
}
