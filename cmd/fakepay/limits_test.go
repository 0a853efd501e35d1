package main

import (
	"bufio"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A header over 64 KB is refused with 431 instead of being read whole.
func TestHeaderLimit(t *testing.T) {
	base := start(t)
	req, err := http.NewRequest(http.MethodGet, base+"/_fakepay/stats", nil)
	require.NoError(t, err)
	req.Header.Set("X-Big", strings.Repeat("b", 100<<10))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusRequestHeaderFieldsTooLarge, resp.StatusCode)
}

// A client that announces a body and never sends it is cut off after
// -read-timeout instead of holding the connection forever.
func TestSlowBodyIsCutOff(t *testing.T) {
	base := start(t, "-read-timeout", "300ms")
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.Write([]byte("POST /_fakepay/reset HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 10\r\n\r\n"))
	require.NoError(t, err)
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
	_, err = bufio.NewReader(conn).ReadString('\n')
	var ne net.Error
	if err != nil && assert.ErrorAs(t, err, &ne) {
		assert.False(t, ne.Timeout(), "the server closed the connection before the client gave up")
	}
}

// -max-operations bounds the ledger of a long-running fakepay.
func TestFlagMaxOperations(t *testing.T) {
	base := start(t, "-max-operations", "3")
	for _, k := range []string{"mo-1", "mo-2", "mo-3", "mo-4", "mo-5"} {
		st, _ := apply(t, base, "demo-key", "demo-secret", k)
		require.Equal(t, 200, st)
	}
	resp, err := http.Get(base + "/_fakepay/ledger")
	require.NoError(t, err)
	defer resp.Body.Close()
	var v struct {
		Operations []struct {
			Key string `json:"idempotency_key"`
		} `json:"operations"`
		LastSeq int `json:"last_seq"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&v))
	require.Len(t, v.Operations, 3)
	assert.Equal(t, "mo-3", v.Operations[0].Key)
	assert.Equal(t, 5, v.LastSeq)
	st, env := apply(t, base, "demo-key", "demo-secret", "mo-1")
	assert.Equal(t, 409, st, "an evicted key is not executed again")
	assert.Equal(t, "openapi_idempotency_answer_not_kept", env["message_key"])
}

func TestFlagLimitsValidated(t *testing.T) {
	for _, args := range [][]string{{"-max-operations", "-1"}, {"-read-timeout", "0s"}, {"-idle-timeout", "-1s"}} {
		_, err := parseFlags(args, &strings.Builder{})
		assert.Error(t, err, args)
	}
}
