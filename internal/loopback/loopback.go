package loopback

import (
	"net"
	"strings"
)

// Host reports whether host (a URL's Hostname: no port, no brackets) is
// "localhost", in any case, or a loopback IP.
func Host(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// HostHeader reports whether a Host header names this machine: localhost
// (or a name under .localhost, in any case, with or without a final dot)
// or a loopback IP, with or without a port. An empty Host (HTTP/1.0) is
// accepted: browsers always send one.
func HostHeader(hostport string) bool {
	if hostport == "" {
		return true
	}
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	return strings.HasSuffix(host, ".localhost") || Host(host)
}

// ListenAddr reports whether a listen address (host:port) may listen on
// loopback only: a loopback IP or a host name. An empty host, as in
// ":8080", listens on every interface; a host name is checked once it is
// bound (Listener).
func ListenAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if ip := net.ParseIP(strings.Trim(host, "[]")); ip != nil {
		return ip.IsLoopback()
	}
	return host != ""
}

// Listener reports whether addr (a listener's address) accepts
// connections from this machine only. An unspecified address (0.0.0.0,
// [::]) or any other interface's address does not.
func Listener(addr net.Addr) bool {
	tcp, ok := addr.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}
