package redact

import (
	"net/http"
	"strings"
)

// Header returns a copy of h fit for a log line: the values of
// headers named like secrets (Authorization, Cookie, Set-Cookie, any name
// ending in token, secret, key, signature or password, but the
// Idempotency-Key) are [REDACTED] and
// every other value passes through String. A nil h gives nil.
func Header(h http.Header) http.Header {
	if h == nil {
		return nil
	}
	out := make(http.Header, len(h))
	for k, vs := range h {
		rv := make([]string, len(vs))
		for i, v := range vs {
			if sensitiveHeader(k) {
				rv[i] = redacted
			} else {
				rv[i] = String(v)
			}
		}
		out[k] = rv
	}
	return out
}

// sensitiveHeader reports a header whose whole value is a secret.
func sensitiveHeader(name string) bool {
	if sensitiveAttr(name) {
		return true
	}
	switch strings.ToLower(name) {
	case "www-authenticate", "proxy-authenticate":
		return true
	}
	n := strings.ToLower(name)
	if n == "idempotency-key" {
		return false // the operation's own key, shown as Meta.Key
	}
	return strings.HasSuffix(n, "-key") || strings.HasSuffix(n, "-auth")
}
