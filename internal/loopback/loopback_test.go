package loopback

import (
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestListenAddr(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8080": true, "[::1]:0": true, "localhost:0": true, "127.0.0.2:1": true,
		":8080": false, "0.0.0.0:0": false, "[::]:0": false, "192.168.1.10:8080": false, "8080": false,
	} {
		assert.Equal(t, want, ListenAddr(addr), addr)
	}
}

func TestHostHeader(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1:8080": true, "127.1.2.3": true, "[::1]:9": true, "localhost:80": true, "LOCALHOST.": true,
		"app.localhost:3000": true, "": true,
		"0.0.0.0:8080": false, "[::]:8080": false, "10.0.0.5:8080": false, "evil.example": false,
		"localhost.evil.example": false, "127.0.0.1.nip.io": false, "[::ffff:10.0.0.1]:80": false,
	} {
		assert.Equal(t, want, HostHeader(host), host)
	}
}

func TestHost(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "LocalHost": true, "127.0.0.1": true, "127.9.9.9": true, "::1": true,
		"": false, "0.0.0.0": false, "::": false, "app.localhost": false, "localhost.": false,
		"10.0.0.5": false, "localhost.evil.example": false, "[::1]": false,
	} {
		assert.Equal(t, want, Host(host), host)
	}
}

func TestListener(t *testing.T) {
	assert.True(t, Listener(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}))
	assert.True(t, Listener(&net.TCPAddr{IP: net.IPv6loopback}))
	assert.False(t, Listener(&net.TCPAddr{IP: net.IPv4zero}))
	assert.False(t, Listener(&net.TCPAddr{IP: net.IPv4(10, 0, 0, 5)}))
	assert.False(t, Listener(&net.UnixAddr{Name: "/tmp/x", Net: "unix"}))
}
