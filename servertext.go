package payonce

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Bounds on the text a server puts in an error: a hostile or broken
// server could otherwise send a megabyte of message that every Error()
// call and every log line would redact and print again.
const (
	maxServerText    = 4096 // bytes of APIError.Message and of a detail's Reason
	maxServerCode    = 256  // bytes of APIError.Code, RequestID and a detail's Field and Code
	maxServerDetails = 100  // entries of APIError.Details
)

// textCut ends a server text that was cut.
const textCut = " [cut]"

// cutServerText returns s when it holds at most n bytes; otherwise its
// first n bytes at most, ended by textCut. The cut never splits a rune
// and never leaves the head of a card number, token or JWT in clear: the
// word it falls in is dropped, and so are the digit groups before it.
func cutServerText(s string, n int) string {
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
