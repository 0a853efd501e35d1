package corekit

import (
	"errors"
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
// "@", so no two (identity, origin) pairs give one scope. Its error says
// what is wrong; callers wrap it in their configuration kind.
func ScopeOf(identity, baseURL string) (string, error) {
	u, err := url.Parse(baseURL)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil {
		return "", errors.New("scope: base URL must be an absolute http(s) URL without user info")
	}
	s := identity + "@" + origin(u)
	if identity == "" || len(s) > MaxReferenceLen || !Printable(s) {
		return "", fmt.Errorf("scope %q is empty, not printable or longer than %d bytes: pass payonce.WithScope",
			redact.String(s), MaxReferenceLen)
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

// Printable reports whether s is valid UTF-8 that shows as it is written:
// no control character (C0, DEL, C1), no line or paragraph separator and
// no bidirectional formatting character (U+202E and its kin), which would
// forge, erase or reorder a line on an operator's terminal or in a log.
// Every backend can store it (PostgreSQL's text refuses invalid UTF-8).
func Printable(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c == 0x7f:
			return false
		case c >= utf8.RuneSelf:
			return printableRunes(s[i:])
		}
	}
	return true
}

// printableRunes is Printable past the ASCII fast path.
func printableRunes(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r >= 0x7f && r <= 0x9f || hiddenFormat(r) {
			return false
		}
	}
	return true
}

// hiddenFormat reports a rune that changes how the text around it shows
// without showing itself: the bidirectional controls (ALM, LRM, RLM,
// LRE..RLO, LRI..PDI) and the line and paragraph separators.
func hiddenFormat(r rune) bool {
	switch {
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	case r == 0x2028, r == 0x2029:
		return true
	}
	return false
}

// NameProblem says what is wrong with s as a journal reference, a scope
// or a lease owner, "" when nothing: empty, longer than MaxReferenceLen
// bytes, or not Printable. The client and every journal backend apply
// it, so that no entry holds a name the client would refuse.
func NameProblem(s string) string {
	switch {
	case s == "":
		return "empty"
	case len(s) > MaxReferenceLen:
		return fmt.Sprintf("longer than %d bytes", MaxReferenceLen)
	case !Printable(s):
		return "holds a control or bidirectional formatting character, or is not UTF-8"
	}
	return ""
}
