package redact

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// textCut ends a server text that was cut.
const textCut = " [cut]"

// Cut returns s when it holds at most n bytes; otherwise its
// first n bytes at most, ended by textCut. The cut never splits a rune
// and never leaves the head of a card number, token or JWT in clear: the
// word it falls in is dropped, and so are the digit groups before it.
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	s = s[:n]
	for s != "" { // the word the cut fell in
		r, size := utf8.DecodeLastRuneInString(s)
		if !tokenRune(r) {
			break
		}
		s = s[:len(s)-size]
	}
	for s != "" { // digit groups before it: the head of a card number
		r, size := utf8.DecodeLastRuneInString(s)
		if digitValue(r) < 0 && !isSeparator(r) {
			break
		}
		s = s[:len(s)-size]
	}
	return s + textCut
}

// tokenRune reports a rune that may be part of a credential or of a card
// number's digit group: credentials are ASCII.
func tokenRune(r rune) bool {
	switch {
	case r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'):
		return true
	case strings.ContainsRune("._~+/=:@!$%*#-", r):
		return true
	}
	return digitValue(r) >= 0 || isSeparator(r) && !unicode.IsSpace(r)
}

// ServerText is a text a server sent, fit for an error: redacted, and with
// every control character (CR, LF, escapes) turned into a space so that it
// cannot forge a log line.
func ServerText(s string) string {
	var r *Redactor
	return r.ServerText(s)
}

// ServerText is ServerText, cutting r's secrets too.
func (r *Redactor) ServerText(s string) string {
	s = r.Redact(s)
	if strings.IndexFunc(s, unicode.IsControl) < 0 {
		return s
	}
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
}
