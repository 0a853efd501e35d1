package corekit

import (
	"fmt"
	"net"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/payonce/payonce/redact"
)

// ScopeOf returns the scope a client with the credential identity and the
// base URL records its journal entries under: the identity, "@" and the
// URL's origin, its scheme and host lowercased and a default port (443
// for https, 80 for http) left out, e.g.
// "a55:client-1@https://sandbox.api.a55.tech". The origin never holds an
// "@", so no two (identity, origin) pairs give one scope.
func ScopeOf(identity, baseURL string) (string, error) {
	u, err := url.Parse(baseURL)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil {
		return "", fmt.Errorf("%w: scope: base URL must be an absolute http(s) URL without user info", ErrInvalidConfig)
	}
	s := identity + "@" + origin(u)
	if identity == "" || len(s) > MaxReferenceLen || !Printable(s) {
		return "", fmt.Errorf("%w: scope %q is empty, not printable or longer than %d bytes: pass payonce.WithScope",
			ErrInvalidConfig, redact.String(s), MaxReferenceLen)
	}
	return s, nil
}

// origin is u's scheme, host and port, lowercased, without a default port.
func origin(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if (scheme == "https" && port == "443") || (scheme == "http" && port == "80") {
		port = ""
	}
	if port != "" {
		return scheme + "://" + net.JoinHostPort(host, port)
	}
	if strings.Contains(host, ":") {
		return scheme + "://[" + host + "]"
	}
	return scheme + "://" + host
}

// Printable reports whether s is valid UTF-8 without control characters:
// every backend can store it (PostgreSQL's text refuses invalid UTF-8).
func Printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return false
		}
	}
	return true
}
