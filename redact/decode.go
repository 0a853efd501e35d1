package redact

import (
	"encoding/base64"
	"encoding/hex"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Encoded text. A server may echo a card number or a secret encoded:
// percent-encoded, as HTML entities, as escape sequences, in base64
// (standard or URL alphabet, padded or not) or in hex, or in several of
// these nested. String decodes what looks encoded and redacts the
// decoded text; when that changes anything, the encoded span is masked.
//
// The work is bounded per call: at most maxDecodeDepth decodings nested
// in one another, at most maxCandidateSpans base64 or hex spans and
// maxDecodedBytes decoded bytes in all. A span past the bounds is cut
// whole ([REDACTED]): a text too costly to inspect is not shown.
const (
	maxDecodeDepth    = 3
	maxCandidateSpans = 1024
	maxDecodedBytes   = 256 << 10
	// minBase64Span is the shortest base64 span decoded: 16 characters
	// hold 12 bytes; a card number needs 13.
	minBase64Span = 16
	// minHexSpan is the shortest hex span decoded (13 bytes).
	minHexSpan = 26
)

// decodeBudget is what one String call may still decode.
type decodeBudget struct {
	spans, bytes int
}

func newDecodeBudget() *decodeBudget {
	return &decodeBudget{spans: maxCandidateSpans, bytes: maxDecodedBytes}
}

// take spends one span of n decoded bytes; false when the budget is spent.
func (b *decodeBudget) take(n int) bool {
	b.spans--
	b.bytes -= n
	return b.spans >= 0 && b.bytes >= 0
}

// hasEscape reports whether s may hold an escape decodeEscapes reads.
func hasEscape(s string) bool { return strings.ContainsAny(s, "%&\\=\x00") }

// decodeEscapes decodes, in one pass, the escapes of s: percent-encoding
// (%34, %u0034), HTML character references (&#52;, &#x34;, &#X34 without
// its semicolon, a few named ones such as &amp;), and backslash escapes
// (\u0034, \U00000034, \u{34}, \x34, \064, \n, \t, \r), however many
// backslashes stand before them (JSON quoted in JSON doubles them).
// Control characters come out as spaces, and NUL bytes are dropped (text
// in UTF-16 read as bytes). It returns s itself when s holds no escape.
func decodeEscapes(s string) string {
	var b strings.Builder
	last := 0 // s[last:i] is not written yet
	for i := 0; i < len(s); {
		c := s[i]
		if c != '%' && c != '&' && c != '\\' && c != '=' && c != 0 {
			i++
			continue
		}
		out, n := "", 1 // a NUL is dropped
		if c != 0 {
			out, n = escapeAt(s, i)
		}
		if n == 0 {
			i++
			continue
		}
		if b.Len() == 0 && last == 0 {
			b.Grow(len(s))
		}
		b.WriteString(s[last:i])
		b.WriteString(out)
		i += n
		last = i
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// namedEntities are the HTML named references decodeEscapes reads: those
// that may stand between the groups of a card number or in a secret's
// name and value.
var namedEntities = map[string]string{
	"amp": "&", "lt": "<", "gt": ">", "quot": `"`, "apos": "'", "nbsp": " ", "colon": ":", "equals": "=",
	"comma": ",", "period": ".", "sol": "/", "num": "#", "percnt": "%", "plus": "+", "lowbar": "_",
	"hyphen": "-", "dash": "-", "verbar": "|", "semi": ";", "bsol": `\`, "quest": "?", "commat": "@",
	"Tab": " ", "NewLine": " ",
}

// escapeAt decodes the escape starting at s[i], if any: the text it
// stands for and its length (0 when s[i] starts none).
func escapeAt(s string, i int) (string, int) {
	switch s[i] {
	case '%':
		if i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			return byteText(unhex(s[i+1])<<4 | unhex(s[i+2])), 3
		}
		if i+5 < len(s) && (s[i+1] == 'u' || s[i+1] == 'U') && allHex(s[i+2:i+6]) {
			v := hexValue(s[i+2 : i+6])
			if utf16.IsSurrogate(v) && i+11 < len(s) && s[i+6] == '%' && (s[i+7] == 'u' || s[i+7] == 'U') && allHex(s[i+8:i+12]) {
				if r := utf16.DecodeRune(v, hexValue(s[i+8:i+12])); r != utf8.RuneError {
					return runeText(r), 12
				}
			}
			return runeText(v), 6
		}
	case '&':
		return entityAt(s, i)
	case '=':
		// quoted-printable (=34=31): only in a run of two or more, since
		// "page=31" is no escape
		if qpAt(s, i) && (qpAt(s, i+3) || i >= 3 && qpAt(s, i-3)) {
			return byteText(unhex(s[i+1])<<4 | unhex(s[i+2])), 3
		}
	case '\\':
		j := i
		for j < len(s) && s[j] == '\\' {
			j++
		}
		if j == len(s) {
			return "", 0
		}
		out, n := backslashEscape(s, j)
		if n == 0 {
			return "", 0
		}
		return out, j - i + n
	}
	return "", 0
}

// qpAt reports a quoted-printable escape (=XX, upper-case hex) at s[i].
func qpAt(s string, i int) bool {
	upperHex := func(c byte) bool { return c >= '0' && c <= '9' || c >= 'A' && c <= 'F' }
	return i >= 0 && i+2 < len(s) && s[i] == '=' && upperHex(s[i+1]) && upperHex(s[i+2])
}

// entityAt decodes an HTML character reference at s[i] ('&').
func entityAt(s string, i int) (string, int) {
	j := i + 1
	if j < len(s) && s[j] == '#' {
		j++
		hexRef := j < len(s) && (s[j] == 'x' || s[j] == 'X')
		if hexRef {
			j++
		}
		k := j
		for k < len(s) && k-j < 8 && (hexRef && isHex(s[k]) || !hexRef && s[k] >= '0' && s[k] <= '9') {
			k++
		}
		if k == j {
			return "", 0
		}
		base := 10
		if hexRef {
			base = 16
		}
		v, err := strconv.ParseUint(s[j:k], base, 32)
		if err != nil || v > utf8.MaxRune {
			return "", 0
		}
		if k < len(s) && s[k] == ';' {
			k++
		}
		return runeText(rune(v)), k - i
	}
	k := j
	for k < len(s) && k-j < 8 && (s[k] >= 'a' && s[k] <= 'z' || s[k] >= 'A' && s[k] <= 'Z') {
		k++
	}
	if k < len(s) && s[k] == ';' {
		if v, ok := namedEntities[s[j:k]]; ok {
			return v, k + 1 - i
		}
	}
	return "", 0
}

// backslashEscape decodes the escape after a run of backslashes, s[j]
// being its first character.
func backslashEscape(s string, j int) (string, int) {
	rest := s[j:]
	switch c := rest[0]; {
	case c == 'u' && len(rest) >= 3 && rest[1] == '{':
		k := 2
		for k < len(rest) && k < 9 && isHex(rest[k]) {
			k++
		}
		if k > 2 && k < len(rest) && rest[k] == '}' {
			return runeText(hexValue(rest[2:k])), k + 1
		}
	case c == 'u' && len(rest) >= 5 && allHex(rest[1:5]):
		v := hexValue(rest[1:5])
		if utf16.IsSurrogate(v) { // a pair, as JSON writes a rune past U+FFFF: \ud835\udfce
			k := 5
			for k < len(rest) && rest[k] == '\\' {
				k++
			}
			if k > 5 && k+5 <= len(rest) && rest[k] == 'u' && allHex(rest[k+1:k+5]) {
				if r := utf16.DecodeRune(v, hexValue(rest[k+1:k+5])); r != utf8.RuneError {
					return runeText(r), k + 5
				}
			}
		}
		return runeText(v), 5
	case c == 'U' && len(rest) >= 9 && allHex(rest[1:9]):
		return runeText(hexValue(rest[1:9])), 9
	case (c == 'x' || c == 'X') && len(rest) >= 3 && isHex(rest[1]) && isHex(rest[2]):
		return byteText(unhex(rest[1])<<4 | unhex(rest[2])), 3
	case c >= '0' && c <= '3' && len(rest) >= 3 && isOctal(rest[1]) && isOctal(rest[2]):
		return byteText((c-'0')<<6 | (rest[1]-'0')<<3 | (rest[2] - '0')), 3
	case c == 'n' || c == 'r' || c == 't':
		return " ", 1
	}
	return "", 0
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

func allHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isHex(s[i]) {
			return false
		}
	}
	return true
}

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

func hexValue(s string) rune {
	v, _ := strconv.ParseUint(s, 16, 32)
	if v > utf8.MaxRune {
		return utf8.RuneError
	}
	return rune(v)
}

// byteText is a decoded byte: NUL is dropped, another control character
// becomes a space;
// bytes of 0x80 and up are kept, as they may be part of a UTF-8 sequence
// (a percent-encoded full-width digit).
func byteText(c byte) string {
	if c == 0 {
		return "" // UTF-16 text: dropped as decodeEscapes drops it
	}
	if c < 0x20 || c == 0x7f {
		return " "
	}
	return string([]byte{c})
}

// runeText is a decoded rune, a control character as a space.
func runeText(r rune) string {
	if r == 0 {
		return ""
	}
	if r < 0x20 || r >= 0x7f && r < 0xa0 {
		return " "
	}
	return string(r)
}

// base64Char reports a character of the standard or URL base64 alphabet,
// padding included.
func base64Char(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '-' || c == '_' || c == '='
}

// mayHoldEncodedSpan reports whether s has a run of base64 characters
// long enough to be decoded.
func mayHoldEncodedSpan(s string) bool {
	run := 0
	for i := 0; i < len(s); i++ {
		if base64Char(s[i]) {
			if run++; run >= minBase64Span {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

// maskEncodedSpans cuts ([REDACTED]) every base64 or hex span of s whose
// decoding, redacted in turn, changes: it held a card number or a
// secret. A span is a run of base64 characters; '=' splits it into
// segments (padding ends one), each decoded on its own from each of its
// first four characters (a word glued before the base64 shifts it), in
// both alphabets at once. A run of hex digits is decoded as hex too.
func (r *Redactor) maskEncodedSpans(s string, depth int, b *decodeBudget) string {
	if !mayHoldEncodedSpan(s) {
		return s
	}
	var out strings.Builder
	last := 0
	cut := func(from, to int) {
		if out.Len() == 0 {
			out.Grow(len(s))
		}
		out.WriteString(s[last:from])
		out.WriteString(redacted)
		last = to
	}
	for i := 0; i < len(s); {
		if !base64Char(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) {
			if base64Char(s[j]) {
				j++
				continue
			}
			// a line break inside base64 wrapped at a fixed width (MIME, PEM)
			if k := lineBreak(s, j); k > 0 && j+k < len(s) && base64Char(s[j+k]) && (j-i)%4 == 0 {
				j += k
				continue
			}
			break
		}
		if j-i >= minBase64Span {
			// segments: text up to and with its '=' padding
			for k := i; k < j; {
				e := k
				for e < j && s[e] != '=' {
					e++
				}
				p := e
				for p < j && s[p] == '=' {
					p++
				}
				if e-k >= minBase64Span && r.encodedDirty(s[k:e], depth, b) {
					cut(k, p)
				}
				k = p
			}
		}
		i = j
	}
	if last == 0 {
		return s
	}
	out.WriteString(s[last:])
	return out.String()
}

// encodedDirty reports whether seg, a segment of base64 characters,
// decodes (as base64, or its runs of hex digits as hex) to text that
// redaction changes, or is past the decoding budget.
func (r *Redactor) encodedDirty(seg string, depth int, b *decodeBudget) bool {
	upper, lower, digit := false, false, false
	for i, h := 0, -1; i <= len(seg); i++ {
		if i < len(seg) {
			c := seg[i]
			switch {
			case c >= 'A' && c <= 'Z':
				upper = true
			case c >= 'a' && c <= 'z':
				lower = true
			case c >= '0' && c <= '9':
				digit = true
			}
			if isHex(c) {
				if h < 0 {
					h = i
				}
				continue
			}
		}
		// seg[h:i] is a run of hex digits
		if h >= 0 && i-h >= minHexSpan && strings.ContainsAny(seg[h:i], "abcdefABCDEF") {
			for off := 0; off < 2; off++ {
				n := (i - h - off) / 2 * 2
				dec, err := hex.DecodeString(seg[h+off : h+off+n])
				if err == nil && (!b.take(len(dec)) || r.decodedDirty(string(dec), depth, b)) {
					return true
				}
			}
		}
		h = -1
	}
	// Base64 of 13 or more bytes always holds an upper-case letter and a
	// lower-case letter or a digit: identifiers in one case (hex IDs,
	// snake_case codes, UPPER_CASE codes) are never decoded as base64.
	if !upper || !lower && !digit {
		return false
	}
	std := seg
	if strings.ContainsAny(seg, "-_\r\n") {
		std = strings.NewReplacer("-", "+", "_", "/", "\r", "", "\n", "").Replace(seg)
	}
	for off := 0; off < 4 && len(std)-off >= minBase64Span; off++ {
		t := std[off:]
		if len(t)%4 == 1 {
			t = t[:len(t)-1]
		}
		dec, err := base64.RawStdEncoding.DecodeString(t)
		if err != nil {
			continue
		}
		if !b.take(len(dec)) || r.decodedDirty(string(dec), depth, b) {
			return true
		}
	}
	return false
}

// decodedDirty reports whether redacting dec, decoded at depth, changes
// it. The characters glued to an encoded run decode to a byte or two of
// garbage at its ends, which may be a digit that hides the card number
// next to it (its run fails the Luhn check): dec is tried without up to
// two such digits at either end too.
func (r *Redactor) decodedDirty(dec string, depth int, b *decodeBudget) bool {
	if r.changes(dec, depth, b) {
		return true
	}
	if !mayHoldCardNumber(dec) {
		return false
	}
	digit := func(i int) bool { return i >= 0 && i < len(dec) && dec[i] >= '0' && dec[i] <= '9' }
	n := len(dec)
	for _, v := range [][2]int{{1, 0}, {2, 0}, {0, 1}, {0, 2}, {1, 1}} {
		ok := true
		for i := range v[0] {
			ok = ok && digit(i)
		}
		for i := range v[1] {
			ok = ok && digit(n-1-i)
		}
		if ok && v[0]+v[1] < n && maskDigitRuns(dec[v[0]:n-v[1]]) != dec[v[0]:n-v[1]] {
			return true
		}
	}
	return false
}

// lineBreak returns the length of the line break at s[i] (LF or CRLF),
// or 0.
func lineBreak(s string, i int) int {
	switch {
	case s[i] == '\n':
		return 1
	case s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n':
		return 2
	}
	return 0
}

// changes reports whether redacting dec, decoded at depth, changes it.
func (r *Redactor) changes(dec string, depth int, b *decodeBudget) bool {
	return r.redactAt(dec, depth+1, b, false) != dec
}

// decodeDigitEscapes decodes the escapes of s (decodeEscapes) while some
// stand for a digit (\u0034, %34, &#52;, \064...), at most
// maxDecodeDepth+1 times (decoding one may complete another): a card
// number a server sent escaped shows masked like one in clear
// ("************1111"). All escapes are decoded, not only the digits: a
// digit written next to an escape left as is would change how that one
// reads (&#X22 then 4 reads &#X224).
func decodeDigitEscapes(s string) string {
	for range maxDecodeDepth + 1 {
		if decodeDigitEscapesOnce(s) == s {
			break
		}
		s = decodeEscapes(s)
	}
	return s
}

func decodeDigitEscapesOnce(s string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c != '%' && c != '&' && c != '\\' && c != '=' {
			i++
			continue
		}
		out, n := escapeAt(s, i)
		if n == 0 {
			i++
			continue
		}
		if r, size := utf8.DecodeRuneInString(out); size != len(out) || digitValue(r) < 0 {
			i++
			continue
		}
		b.WriteString(s[last:i])
		b.WriteString(out)
		i += n
		last = i
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}
