package redact

import (
	"bytes"
	"encoding/hex"
	"unicode/utf8"
)

// ID redacts a request ID as Redact does. Most servers send an ordinary
// ID (a lowercase UUID, a hex trace ID, "req_" and a number): plainID
// proves, in one pass and without allocating, that redaction would leave
// it as it is; any other goes through the whole of Redact.
func (r *Redactor) ID(v string) string {
	if s := r.cutSecrets(v); plainID(r, s) {
		return s
	}
	return r.Redact(v)
}

// maxPlainID is the longest request ID plainID looks at.
const maxPlainID = 64

// plainID reports whether Redact (with r's secrets) leaves s as it
// is, for s made of lowercase letters, digits, '.', '_' and '-': no
// escape, no character a secret pattern needs, no base64 (which needs a
// capital), no run of 13 digits (a letter ends a run), and each run of
// hex digits long enough to be decoded decodes to bytes that hide
// nothing either. A false answer says only that the fast path cannot
// tell.
func plainID(r *Redactor, s string) bool {
	if len(s) > maxPlainID {
		return false
	}
	digits, hexStart, hexLetter := 0, -1, false
	for i := 0; i <= len(s); i++ {
		var c byte
		if i < len(s) {
			c = s[i]
		}
		if i < len(s) && (c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			if hexStart < 0 {
				hexStart, hexLetter = i, false
			}
			hexLetter = hexLetter || c >= 'a'
		} else if hexStart >= 0 {
			if i-hexStart >= minHexSpan && hexLetter && !plainHex(r, s[hexStart:i]) {
				return false
			}
			hexStart = -1
		}
		switch {
		case i == len(s):
		case c >= '0' && c <= '9':
			if digits++; digits >= 13 {
				return false
			}
		case c >= 'a' && c <= 'z':
			digits = 0 // a letter ends a run of digit groups
		case c == '.' || c == '_' || c == '-':
		default:
			return false
		}
	}
	return true
}

// plainHex reports whether a run of hex digits, decoded from its first
// or its second digit as redaction decodes it, gives bytes in which
// redaction finds nothing: fewer than 13 digits of any script, no escape,
// no character a secret pattern needs, no run long enough to be base64,
// none of r's secrets.
func plainHex(r *Redactor, run string) bool {
	var buf [maxPlainID / 2]byte
	for off := range 2 {
		n := (len(run) - off) / 2 * 2
		dec := buf[:n/2]
		if _, err := hex.Decode(dec, []byte(run[off:off+n])); err != nil {
			return false
		}
		if !inertBytes(dec) {
			return false
		}
		if r.containsSecret(dec) {
			return false
		}
	}
	return true
}

// inertBytes reports decoded bytes redaction leaves as they are (see
// plainHex).
func inertBytes(b []byte) bool {
	digits, run := 0, 0
	for i := 0; i < len(b); {
		c := b[i]
		switch c {
		case ':', '=', '?', ' ', '\t', '\n', '\f', '\r', '%', '&', '\\', 0:
			return false
		}
		if c == 'e' && bytes.HasPrefix(b[i:], []byte("eyJ")) {
			return false
		}
		if base64Char(c) {
			if run++; run >= minBase64Span {
				return false
			}
		} else {
			run = 0
		}
		size := 1
		if c >= utf8.RuneSelf {
			var rn rune
			rn, size = utf8.DecodeRune(b[i:])
			if size > 1 && digitValue(rn) >= 0 { // an invalid byte is no digit
				digits++
			}
		} else if c >= '0' && c <= '9' {
			digits++
		}
		if digits >= 13 {
			return false
		}
		i += size
	}
	return true
}
