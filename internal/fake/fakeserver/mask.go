package fakeserver

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// What the fakes show of a request must never repeat the card data or the
// secrets a client sent: the request log, the admin API and the console
// mask them here. This is the fakes' own masking, written apart from the
// SDK's, so that each checks the other rather than sharing a blind spot.
//
// It masks by name and by shape:
//
//   - a value whose field is named as a card number (card_number, cardNumber,
//     pan, the number of a card object, ...) keeps its last four digits,
//     whether or not it passes the Luhn check (sandbox test cards often
//     do not); a CVV, CVC, security code or PIN becomes "***"; a secret,
//     token, password, signature, API key or cryptogram becomes
//     "[REDACTED]". Names are compared in any letter case, with or
//     without '_', '-' or '.', camelCase too, in name=value, name: value,
//     "name":"value", a path segment followed by its value, and JSON;
//   - anywhere, 13 to 19 digits that pass the Luhn check, in one run or in
//     groups split by spaces, dashes, dots and the like (a CVV or expiry
//     group right after goes with them), keep their last four digits; a
//     single run of 20 digits or more is masked whole; a JSON Web Token, the
//     word after Bearer or Basic, and the password of a URL are
//     "[REDACTED]";
//   - text percent-encoded, escaped (\u0034, \x34, &#52;) or in base64 or
//     hex is decoded (up to three layers) and, when the decoded text held
//     any of the above, shown decoded and masked, or, for base64 and hex,
//     cut whole.
//
// UUIDs, date-times and IPv4 addresses are kept, so an ID, a time or an
// address is never taken for a card.
const (
	maskedSecret = "[REDACTED]"
	maskedCVV    = "***"
	maxMaskDepth = 3
	// minEncodedSpan is the shortest base64 run decoded: 16 characters
	// hold 12 bytes, and a card number needs 13. A hex run needs 26.
	minEncodedSpan = 16
	minHexSpan     = 26
)

// fieldClass is what a field's name says its value is.
type fieldClass int

const (
	fieldPlain  fieldClass = iota
	fieldCard              // a card number: the last four digits stay
	fieldCVV               // a CVV, CVC, security code or PIN
	fieldSecret            // a secret, token, password, signature, key
)

// fieldNames classifies a name by what it ends with, once lowered and
// stripped of everything but letters and digits (so "card_number",
// "Card-Number", "cardNumber" and "payer.card.number" all end in
// "cardnumber").
var fieldNames = []struct {
	suffix string
	class  fieldClass
}{
	{"cardnumber", fieldCard}, {"cardno", fieldCard}, {"cardnum", fieldCard}, {"ccnumber", fieldCard},
	{"ccnum", fieldCard}, {"creditcard", fieldCard}, {"primaryaccountnumber", fieldCard},
	{"cvv", fieldCVV}, {"cvv2", fieldCVV}, {"cvc", fieldCVV}, {"cvc2", fieldCVV}, {"cvn", fieldCVV},
	{"securitycode", fieldCVV}, {"verificationvalue", fieldCVV}, {"verificationcode", fieldCVV},
	{"secret", fieldSecret}, {"token", fieldSecret}, {"password", fieldSecret}, {"passwd", fieldSecret},
	{"passphrase", fieldSecret}, {"signature", fieldSecret}, {"apikey", fieldSecret}, {"privatekey", fieldSecret},
	{"authorization", fieldSecret}, {"cookie", fieldSecret}, {"cavv", fieldSecret}, {"cryptogram", fieldSecret},
}

// exactNames are names classified only when they are the whole name:
// as a suffix they would take too much ("span", "spin", "bypass").
var exactNames = map[string]fieldClass{"pan": fieldCard, "pin": fieldCVV, "cardpin": fieldCVV, "pwd": fieldSecret}

// classify says what a field named name holds; parent is the name of the
// object it is in ("number" in a card object is a card number).
func classify(name, parent string) fieldClass {
	var buf [64]byte
	n := normalizeName(buf[:0], name)
	if len(n) == 0 {
		return fieldPlain
	}
	if c, ok := exactNames[string(n)]; ok {
		return c
	}
	for _, f := range fieldNames {
		if bytes.HasSuffix(n, []byte(f.suffix)) {
			return f.class
		}
	}
	if string(n) == "number" || string(n) == "num" {
		var pbuf [64]byte
		if bytes.Contains(normalizeName(pbuf[:0], parent), []byte("card")) {
			return fieldCard
		}
	}
	return fieldPlain
}

// normalizeName appends to dst the letters and digits of name, lowered;
// a name longer than 64 letters is no field name the fakes know.
func normalizeName(dst []byte, name string) []byte {
	if len(name) > 96 {
		return dst[:0]
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'A' && c <= 'Z':
			dst = append(dst, c+'a'-'A')
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
			dst = append(dst, c)
		case c >= utf8.RuneSelf:
			return dst[:0]
		}
	}
	return dst
}

// maskValue is the masked form of a value of a field of class c (not
// fieldPlain).
func maskValue(c fieldClass, v string) string {
	switch {
	case v == "":
		return v
	case c == fieldCVV:
		return maskedCVV
	case c == fieldCard:
		return maskCardValue(v)
	}
	return maskedSecret
}

// maskCardValue keeps the last four digits of a value named as a card
// number, Luhn or not, when it has ten digits or more; a shorter one is
// masked whole.
func maskCardValue(v string) string {
	var digits []byte
	for _, r := range v {
		if d, ok := digitValue(r); ok {
			digits = append(digits, '0'+d)
		}
	}
	if len(digits) < 10 {
		return strings.Repeat("*", max(len(digits), 4))
	}
	return strings.Repeat("*", len(digits)-4) + string(digits[len(digits)-4:])
}

// MaskText returns s with the card data and the secrets it holds masked,
// as described above; text with nothing to mask comes back unchanged.
func MaskText(s string) string { return newMasker().text(s, 0) }

// Bounds of the decoding one MaskText or MaskJSON call does: a text too
// costly to inspect is not shown (its encoded runs are cut whole).
const (
	maxMaskDecodes = 1024    // base64 and hex decodings
	maxMaskDecoded = 1 << 18 // bytes they produce
)

// masker is one MaskText or MaskJSON call and what it may still decode.
type masker struct {
	decodes, decoded int
}

func newMasker() *masker { return &masker{decodes: maxMaskDecodes, decoded: maxMaskDecoded} }

// take spends one decoding of n bytes; false once the bounds are spent.
func (m *masker) take(n int) bool {
	m.decodes--
	m.decoded -= n
	return m.decodes >= 0 && m.decoded >= 0
}

// text masks s, decoded depth layers deep already.
func (m *masker) text(s string, depth int) string {
	out := maskNamedValues(s)
	out = maskTokens(out)
	out = maskCardRuns(out)
	if depth >= maxMaskDepth {
		return out
	}
	if hasEscape(out) {
		if d := unescape(out); d != out {
			if masked := m.text(d, depth+1); masked != d {
				return masked
			}
		}
	}
	return m.encodedSpans(out, depth)
}

// ClipMasked is Clip of MaskText(s): what the request log keeps of a
// value a client sent (a path, a header). It masks no more than twice
// what Clip keeps, so a long value costs what a short one does; a card
// number past that is cut by Clip anyway.
func ClipMasked(s string) string {
	if len(s) > 2*MaxLogField {
		s = s[:2*MaxLogField]
	}
	return Clip(MaskText(s))
}

// MaskJSON returns the JSON document b, compacted, with its values masked
// by their field names and by shape; the keys, their order and every
// other value are kept, and the result is JSON again. b that is not one
// JSON value is masked as text.
func MaskJSON(b []byte) []byte {
	if !json.Valid(b) {
		return []byte(MaskText(string(b)))
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out bytes.Buffer
	out.Grow(len(b))
	if err := newMasker().jsonValue(dec, &out, "", ""); err != nil {
		return []byte(MaskText(string(b))) // not reached: b is valid
	}
	return out.Bytes()
}

// jsonValue copies the next value of dec to out, masked: name is the
// field it is the value of, parent the field of the object holding it.
func (m *masker) jsonValue(dec *json.Decoder, out *bytes.Buffer, name, parent string) error {
	class := classify(name, parent)
	if class != fieldPlain && class != fieldCard {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return err
		}
		if r := string(raw); r == `""` || r == "null" || r == "true" || r == "false" {
			out.Write(raw)
			return nil
		}
		writeJSONString(out, maskValue(class, "x"))
		return nil
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch v := tok.(type) {
	case json.Delim:
		return m.jsonContainer(dec, out, v, name, parent, class)
	case string:
		if class == fieldPlain {
			writeJSONString(out, m.text(v, 0))
		} else {
			writeJSONString(out, maskValue(class, v))
		}
	case json.Number:
		if class == fieldCard {
			writeJSONString(out, maskCardValue(v.String()))
		} else if masked := maskCardRuns(v.String()); masked != v.String() {
			writeJSONString(out, masked)
		} else {
			out.WriteString(v.String())
		}
	case bool:
		out.WriteString(strconv.FormatBool(v))
	default:
		out.WriteString("null")
	}
	return nil
}

// jsonContainer copies an object or an array whose opening delim was
// read. A card number given as an object or array is masked whole.
func (m *masker) jsonContainer(dec *json.Decoder, out *bytes.Buffer, delim json.Delim, name, parent string, class fieldClass) error {
	if class == fieldCard {
		for depth := 1; depth > 0; {
			t, err := dec.Token()
			if err != nil {
				return err
			}
			if d, ok := t.(json.Delim); ok {
				if d == '{' || d == '[' {
					depth++
				} else {
					depth--
				}
			}
		}
		writeJSONString(out, maskedSecret)
		return nil
	}
	if delim == '[' {
		out.WriteByte('[')
		for i := 0; dec.More(); i++ {
			if i > 0 {
				out.WriteByte(',')
			}
			if err := m.jsonValue(dec, out, name, parent); err != nil {
				return err
			}
		}
		_, err := dec.Token()
		out.WriteByte(']')
		return err
	}
	out.WriteByte('{')
	for i := 0; dec.More(); i++ {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := t.(string)
		if i > 0 {
			out.WriteByte(',')
		}
		writeJSONString(out, m.text(key, 0))
		out.WriteByte(':')
		if err := m.jsonValue(dec, out, key, name); err != nil {
			return err
		}
	}
	_, err := dec.Token()
	out.WriteByte('}')
	return err
}

func writeJSONString(out *bytes.Buffer, s string) {
	b, _ := json.Marshal(s) // a string always marshals
	out.Write(b)
}

// ---- names and values in text ----

// maskNamedValues masks the value after every name that says it holds
// card data or a secret: name=value, name: value, "name":"value",
// 'name': 'value', \"name\":\"value\", a path segment /name/value, and
// in prose "cvv 123", "card number 4111 ...".
func maskNamedValues(s string) string {
	if !mayNameAField(s) {
		return s
	}
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '=' && c != ':' && c != '/' && c != ' ' {
			continue
		}
		name := nameBefore(s, i)
		if name == "" {
			continue
		}
		if c == '/' && !segmentStart(s, i-len(name)) {
			continue
		}
		class := classify(name, "")
		if class == fieldPlain {
			continue
		}
		from, to, ok := valueAfter(s, i, c, class)
		if !ok || from < last {
			continue
		}
		b.WriteString(s[last:from])
		b.WriteString(maskValue(class, s[from:to]))
		last = to
		i = max(to-1, i)
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// mayNameAField reports whether s has a letter and a separator a named
// value needs: most paths and IDs have none of the names.
func mayNameAField(s string) bool {
	return strings.ContainsAny(s, "=:/ ") && strings.ContainsAny(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
}

// nameBefore returns the name that ends right before s[i] (a separator),
// past a closing quote (", ', \") and spaces before a ':' or '='.
func nameBefore(s string, i int) string {
	j := i
	if s[i] != ' ' && s[i] != '/' {
		for j > 0 && s[j-1] == ' ' {
			j--
		}
	}
	if j > 0 && (s[j-1] == '"' || s[j-1] == '\'') && s[i] != '/' {
		j--
		if j > 0 && s[j-1] == '\\' {
			j--
		}
	}
	end := j
	for j > 0 && end-j < 96 && isNameByte(s[j-1]) {
		j--
	}
	return s[j:end]
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
}

// segmentStart reports whether s[i] starts a path segment.
func segmentStart(s string, i int) bool { return i == 0 || s[i-1] == '/' }

// valueAfter finds the value after the separator sep at s[i]: [from, to).
func valueAfter(s string, i int, sep byte, class fieldClass) (from, to int, ok bool) {
	j := i + 1
	switch sep {
	case '/':
		k := j
		for k < len(s) && s[k] != '/' && s[k] != '?' && s[k] != '#' {
			k++
		}
		return j, k, k > j
	case ' ':
		// prose: only what looks like the value, never a plain word
		for j < len(s) && s[j] == ' ' {
			j++
		}
		return proseValue(s, j, class)
	}
	for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
		j++
	}
	if j < len(s) && (s[j] == '\\' && j+1 < len(s) && s[j+1] == '"') {
		k := strings.Index(s[j+2:], `\"`)
		if k < 0 {
			return j + 2, len(s), j+2 < len(s)
		}
		return j + 2, j + 2 + k, k > 0
	}
	if j < len(s) && (s[j] == '"' || s[j] == '\'') {
		q := s[j]
		k := j + 1
		for k < len(s) && s[k] != q {
			if s[k] == '\\' {
				k++
			}
			k++
		}
		return j + 1, min(k, len(s)), k > j+1
	}
	k := j
	for k < len(s) && (!isValueEnd(s[k]) || class == fieldCard && cardGap(s, k)) {
		k++
	}
	if class == fieldSecret && k < len(s) && s[k] == ' ' && isAuthScheme(s[j:k]) {
		// "Authorization: Bearer <token>": the scheme and its credential
		for k++; k < len(s) && !isValueEnd(s[k]); k++ {
		}
	}
	return j, k, k > j
}

// isAuthScheme reports an HTTP authentication scheme written before its
// credential.
func isAuthScheme(w string) bool {
	for _, s := range []string{"bearer", "basic", "token", "digest", "hmac", "hmac-sha256"} {
		if strings.EqualFold(w, s) {
			return true
		}
	}
	return false
}

// cardGap reports a space or dash at s[k] between two digits: an unquoted
// card number written in groups goes on past it.
func cardGap(s string, k int) bool {
	return (s[k] == ' ' || s[k] == '-') && k > 0 && isDigit(s[k-1]) && k+1 < len(s) && isDigit(s[k+1])
}

// isValueEnd reports a byte that ends an unquoted value.
func isValueEnd(c byte) bool {
	switch c {
	case '&', ';', ',', ' ', '\t', '\r', '\n', '"', '\'', '<', '>', ')', '}', ']', '/', '?', '#':
		return true
	}
	return false
}

// proseValue finds, at s[j], a value written after its name in prose: the
// digits of a CVV (3 or 4) or of a card number (with separators), or a
// secret of at least 8 characters holding a digit.
func proseValue(s string, j int, class fieldClass) (from, to int, ok bool) {
	k := j
	switch class {
	case fieldCVV:
		for k < len(s) && s[k] >= '0' && s[k] <= '9' {
			k++
		}
		return j, k, k-j >= 3 && k-j <= 4 && (k == len(s) || !isNameByte(s[k]))
	case fieldCard:
		digits := 0
		for k < len(s) && (s[k] >= '0' && s[k] <= '9' || (s[k] == ' ' || s[k] == '-') && k+1 < len(s) && s[k+1] >= '0' && s[k+1] <= '9') {
			if s[k] != ' ' && s[k] != '-' {
				digits++
			}
			k++
		}
		return j, k, digits >= 10
	}
	digit := false
	for k < len(s) && !isValueEnd(s[k]) {
		digit = digit || s[k] >= '0' && s[k] <= '9'
		k++
	}
	return j, k, digit && k-j >= 8
}

// ---- tokens ----

// maskTokens masks JSON Web Tokens, the credentials after Bearer or
// Basic, and the password of a URL.
func maskTokens(s string) string {
	if !strings.Contains(s, "eyJ") && !strings.Contains(s, "://") && !containsFold(s, "bearer ") && !containsFold(s, "basic ") {
		return s
	}
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); i++ {
		from, to := -1, -1
		switch {
		case strings.HasPrefix(s[i:], "eyJ") && (i == 0 || !isBase64URL(s[i-1])):
			if n := jwtLen(s[i:]); n > 0 {
				from, to = i, i+n
			}
		case hasPrefixFold(s[i:], "bearer ") || hasPrefixFold(s[i:], "basic "):
			j := i + strings.IndexByte(s[i:], ' ')
			for j < len(s) && s[j] == ' ' {
				j++
			}
			k := j
			for k < len(s) && !isValueEnd(s[k]) {
				k++
			}
			if looksLikeCredential(s[j:k]) && (i == 0 || !isNameByte(s[i-1])) {
				from, to = j, k
			}
		case strings.HasPrefix(s[i:], "://"):
			if p, e := urlPassword(s, i+3); e > p {
				from, to = p, e
			}
		}
		if from < 0 || from < last {
			continue
		}
		b.WriteString(s[last:from])
		b.WriteString(maskedSecret)
		last, i = to, to-1
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// looksLikeCredential reports whether the word after Bearer or Basic is a
// credential rather than prose ("basic information"): 8 characters or
// more, not all lower-case letters.
func looksLikeCredential(w string) bool {
	if len(w) < 8 {
		return false
	}
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return true
		}
	}
	return false
}

// jwtLen is the length of the JSON Web Token at the start of s, 0 when
// there is none: three base64url parts, the signature possibly empty.
func jwtLen(s string) int {
	n, dots := 0, 0
	for n < len(s) && (isBase64URL(s[n]) || s[n] == '.') {
		if s[n] == '.' {
			dots++
		}
		n++
	}
	if dots < 1 || n < 16 {
		return 0
	}
	return n
}

// urlPassword finds the password of the userinfo starting at s[i] (after
// "://"): [from, to), empty when there is none.
func urlPassword(s string, i int) (from, to int) {
	end := i
	for end < len(s) && s[end] != '/' && s[end] != '?' && s[end] != '#' && s[end] != ' ' && s[end] != '"' {
		end++
	}
	at := strings.LastIndexByte(s[i:end], '@')
	if at < 0 {
		return 0, 0
	}
	colon := strings.IndexByte(s[i:i+at], ':')
	if colon < 0 {
		return 0, 0
	}
	return i + colon + 1, i + at
}

func isBase64URL(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// containsFold reports whether s holds sub (lower-case ASCII) in any
// letter case.
func containsFold(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i]|0x20 == sub[0] && strings.EqualFold(s[i:i+len(sub)], sub) {
			return true
		}
	}
	return false
}

// ---- card numbers by shape ----

// digitValue returns the value of a decimal digit of any script (ASCII,
// full-width, Arabic-Indic, ...): Unicode puts each script's digits in a
// run of ten from zero.
func digitValue(r rune) (byte, bool) {
	if r >= '0' && r <= '9' {
		return byte(r - '0'), true
	}
	if r < utf8.RuneSelf || !unicode.IsDigit(r) {
		return 0, false
	}
	start := r
	for start > 0 && unicode.IsDigit(start-1) {
		start--
	}
	return byte((r - start) % 10), true
}

// isCardSeparator reports a rune that may stand between the digit groups
// of a card number as people and programs write them.
func isCardSeparator(r rune) bool {
	switch r {
	case ' ', '-', '.', '/', '_', '+', ',', ':', ';', '|', '"', '\'', '(', ')', '[', ']', 0, '\t', '\u00a0',
		'\u2010', '\u2011', '\u2012', '\u2013', '\u2014', '\u2212', '\u3000':
		return true
	}
	return unicode.Is(unicode.Zs, r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Mn, r)
}

// digitGroup is a run of digits in a text: s[from:to], digits their values.
type digitGroup struct {
	from, to int
	digits   []byte
}

// maskCardRuns masks the card numbers of s found by shape: a run, or
// groups split by at most three separators, of 13 to 19 digits that pass
// the Luhn check, keeping the last four; a group of 3 or 4 digits right
// after goes with it; a single run of 20 digits or more is masked whole.
// UUIDs, date-times and IPv4 addresses are skipped.
func maskCardRuns(s string) string {
	if !hasDigits(s, 13) {
		return s
	}
	var b strings.Builder
	last := 0
	emit := func(from, to int, repl string) {
		b.WriteString(s[last:from])
		b.WriteString(repl)
		last = to
	}
	var groups []digitGroup
	flush := func() {
		maskGroups(groups, emit)
		groups = groups[:0]
	}
	sepRun := 0
	for i := 0; i < len(s); {
		if n := protectedLen(s, i); n > 0 {
			flush()
			i += n
			sepRun = 0
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if d, ok := digitValue(r); ok {
			if len(groups) > 0 && groups[len(groups)-1].to == i {
				g := &groups[len(groups)-1]
				g.to, g.digits = i+size, append(g.digits, d)
			} else {
				groups = append(groups, digitGroup{from: i, to: i + size, digits: []byte{d}})
			}
			sepRun = 0
			i += size
			continue
		}
		if isCardSeparator(r) && len(groups) > 0 && sepRun < 3 {
			sepRun++
			i += size
			continue
		}
		flush()
		sepRun = 0
		i += size
	}
	flush()
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// hasDigits reports whether s holds at least n digits (of any script).
func hasDigits(s string, n int) bool {
	for _, r := range s {
		if _, ok := digitValue(r); ok {
			if n--; n == 0 {
				return true
			}
		}
	}
	return false
}

// maskGroups masks the card numbers in one sequence of digit groups,
// left to right, calling emit for each span replaced.
func maskGroups(groups []digitGroup, emit func(from, to int, repl string)) {
	for i := 0; i < len(groups); {
		g := groups[i]
		if len(g.digits) >= 20 {
			emit(g.from, g.to, strings.Repeat("*", len(g.digits)))
			i++
			continue
		}
		end, digits, glued := cardWindow(groups, i)
		if end < 0 {
			i++
			continue
		}
		to := groups[end].to
		masked := strings.Repeat("*", len(digits)-4) + string(digits[len(digits)-4:])
		next := end + 1
		if glued {
			masked += maskedCVV
		} else if extra := trailingCVV(groups, end); extra >= 0 {
			to = groups[extra].to
			masked += " " + maskedCVV
			next = extra + 1
		}
		emit(g.from, to, masked)
		i = next
	}
}

// cardWindow finds the longest window of whole groups from groups[i]
// whose digits are a card number (13 to 19, Luhn), or a run of 18 to 19
// digits whose head of 15 or 16 is one (glued says a CVV or expiry of 3
// or 4 digits follows it). It returns the window's last group and the
// card's digits as ASCII, or -1.
func cardWindow(groups []digitGroup, i int) (end int, digits []byte, glued bool) {
	var buf []byte
	end = -1
	for j := i; j < len(groups); j++ {
		for _, d := range groups[j].digits {
			buf = append(buf, '0'+d)
		}
		if len(buf) > 19 {
			break
		}
		if len(buf) >= 13 && luhn(buf) {
			end, digits = j, append(digits[:0], buf...)
		}
	}
	if end >= 0 {
		return end, digits, false
	}
	g := groups[i].digits
	for _, head := range []int{16, 15} {
		if rest := len(g) - head; rest >= 3 && rest <= 4 {
			ascii := make([]byte, head)
			for k := range ascii {
				ascii[k] = '0' + g[k]
			}
			if luhn(ascii) {
				return i, ascii, true
			}
		}
	}
	return -1, nil, false
}

// trailingCVV returns the group after groups[end] when it has 3 or 4
// digits (a CVV or an expiry), else -1.
func trailingCVV(groups []digitGroup, end int) int {
	if end+1 < len(groups) {
		if n := len(groups[end+1].digits); n == 3 || n == 4 {
			return end + 1
		}
	}
	return -1
}

// luhn reports whether the ASCII digits pass the Luhn check.
func luhn(digits []byte) bool {
	sum := 0
	for i := len(digits) - 1; i >= 0; i-- {
		d := int(digits[i] - '0')
		if (len(digits)-1-i)%2 == 1 {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return sum%10 == 0
}

// protectedLen is the length of a UUID, a date-time or an IPv4 address
// (with its port) starting at s[i], when one starts there and stands
// alone; 0 otherwise.
func protectedLen(s string, i int) int {
	if !isHexDigit(s[i]) || i > 0 && isHexDigit(s[i-1]) {
		return 0
	}
	if n := uuidLen(s[i:]); n > 0 {
		return n
	}
	if n := dateTimeLen(s[i:]); n > 0 {
		return n
	}
	return ipv4Len(s[i:])
}

func isHexDigit(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// uuidLen is 36 when s starts with a UUID (8-4-4-4-12 hex digits) not
// followed by another hex digit.
func uuidLen(s string) int {
	if len(s) < 36 {
		return 0
	}
	for k := 0; k < 36; k++ {
		switch k {
		case 8, 13, 18, 23:
			if s[k] != '-' {
				return 0
			}
		default:
			if !isHexDigit(s[k]) {
				return 0
			}
		}
	}
	if len(s) > 36 && isHexDigit(s[36]) {
		return 0
	}
	return 36
}

// dateTimeLen is the length of a date (YYYY-MM-DD, year 1900 to 2199)
// and the time after it (T or space, HH:MM, :SS, a fraction), when s
// starts with one not followed by another digit.
func dateTimeLen(s string) int {
	if len(s) < 10 || !(strings.HasPrefix(s, "19") || strings.HasPrefix(s, "20") || strings.HasPrefix(s, "21")) {
		return 0
	}
	if !isDigit(s[2]) || !isDigit(s[3]) || s[4] != '-' || !isDigit(s[5]) || !isDigit(s[6]) || s[7] != '-' ||
		!isDigit(s[8]) || !isDigit(s[9]) {
		return 0
	}
	n := 10
	if len(s) >= n+6 && (s[n] == 'T' || s[n] == ' ') && isDigit(s[n+1]) && isDigit(s[n+2]) && s[n+3] == ':' &&
		isDigit(s[n+4]) && isDigit(s[n+5]) {
		n += 6
		if len(s) >= n+3 && s[n] == ':' && isDigit(s[n+1]) && isDigit(s[n+2]) {
			n += 3
			if len(s) > n+1 && s[n] == '.' && isDigit(s[n+1]) {
				n++
				for n < len(s) && isDigit(s[n]) {
					n++
				}
			}
		}
	}
	if n < len(s) && isDigit(s[n]) {
		return 0
	}
	return n
}

// ipv4Len is the length of a dotted IPv4 address (each part at most 255)
// and its :port, when s starts with one not followed by another digit.
func ipv4Len(s string) int {
	n := 0
	for part := 0; part < 4; part++ {
		if part > 0 {
			if n >= len(s) || s[n] != '.' {
				return 0
			}
			n++
		}
		k := n
		for k < len(s) && k-n < 3 && isDigit(s[k]) {
			k++
		}
		if k == n {
			return 0
		}
		if v, _ := strconv.Atoi(s[n:k]); v > 255 {
			return 0
		}
		n = k
	}
	if n < len(s) && s[n] == ':' {
		k := n + 1
		for k < len(s) && k-n <= 5 && isDigit(s[k]) {
			k++
		}
		if k > n+1 {
			n = k
		}
	}
	if n < len(s) && (isDigit(s[n]) || s[n] == '.' && n+1 < len(s) && isDigit(s[n+1])) {
		return 0
	}
	return n
}

// ---- encoded text ----

// hasEscape reports whether s may hold an escape unescape decodes.
func hasEscape(s string) bool { return strings.ContainsAny(s, "%\\&") }

// unescape decodes, in one pass, percent-encoding (%34, %u0034),
// backslash escapes (\u0034, \x34) and HTML character references (&#52;,
// &#x34;). It returns s itself when nothing was decoded.
func unescape(s string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); {
		r, n := escapeAt(s, i)
		if n == 0 {
			i++
			continue
		}
		b.WriteString(s[last:i])
		if r >= 0 {
			b.WriteRune(r)
		}
		i += n
		last = i
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// escapeAt decodes the escape at s[i]: the rune it stands for (-1 for a
// byte dropped) and its length, 0 when none starts there.
func escapeAt(s string, i int) (rune, int) {
	rest := s[i:]
	hexAt := func(from, n int) (rune, bool) {
		if len(rest) < from+n {
			return 0, false
		}
		v, err := strconv.ParseUint(rest[from:from+n], 16, 32)
		return rune(v), err == nil
	}
	switch rest[0] {
	case '%':
		if len(rest) >= 2 && (rest[1] == 'u' || rest[1] == 'U') {
			if r, ok := hexAt(2, 4); ok {
				return r, 6
			}
		}
		if r, ok := hexAt(1, 2); ok {
			return escapedByte(r), 3
		}
	case '\\':
		if len(rest) >= 2 {
			switch rest[1] {
			case 'u':
				if r, ok := hexAt(2, 4); ok {
					return r, 6
				}
			case 'x':
				if r, ok := hexAt(2, 2); ok {
					return escapedByte(r), 4
				}
			}
		}
	case '&':
		if len(rest) >= 4 && rest[1] == '#' {
			j, base := 2, 10
			if rest[2] == 'x' || rest[2] == 'X' {
				j, base = 3, 16
			}
			k := j
			for k < len(rest) && k-j < 7 && (base == 10 && isDigit(rest[k]) || base == 16 && isHexDigit(rest[k])) {
				k++
			}
			if k == j {
				return 0, 0
			}
			v, err := strconv.ParseUint(rest[j:k], base, 32)
			if err != nil || v > unicode.MaxRune {
				return 0, 0
			}
			if k < len(rest) && rest[k] == ';' {
				k++
			}
			return rune(v), k
		}
	}
	return 0, 0
}

// escapedByte is a decoded byte as a rune: NUL is dropped (text in UTF-16
// read as bytes), other bytes kept.
func escapedByte(r rune) rune {
	if r == 0 {
		return -1
	}
	return r
}

// encodedSpans cuts every base64 or hex run of s whose decoding,
// masked in turn, changes: it held card data or a secret. A run holding
// '/' (a path) is cut by segment when one segment is what holds it.
func (m *masker) encodedSpans(s string, depth int) string {
	var b strings.Builder
	last := 0
	cut := func(from, to int) {
		b.WriteString(s[last:from])
		b.WriteString(maskedSecret)
		last = to
	}
	for i := 0; i < len(s); {
		if !isBase64Char(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isBase64Char(s[j]) {
			j++
		}
		for j < len(s) && s[j] == '=' {
			j++
		}
		if j-i >= minEncodedSpan && m.encodedDirty(s[i:j], depth) {
			segs := 0
			for k := i; k < j; {
				e := k
				for e < j && s[e] != '/' {
					e++
				}
				if e-k >= minEncodedSpan && m.encodedDirty(s[k:e], depth) {
					cut(k, e)
					segs++
				}
				k = e + 1
			}
			if segs == 0 {
				cut(i, j)
			}
		}
		i = j
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

func isBase64Char(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '-' || c == '_'
}

// base64URLToStd maps the URL alphabet onto the standard one.
var base64URLToStd = strings.NewReplacer("-", "+", "_", "/")

// encodedDirty reports whether run, read as base64 (either alphabet, from
// any of its first four characters: a word or a path may stand before
// it) or its hex runs read as hex, decodes to text that masking changes.
func (m *masker) encodedDirty(run string, depth int) bool {
	for i := 0; i < len(run); {
		if !isHexDigit(run[i]) {
			i++
			continue
		}
		j := i
		for j < len(run) && isHexDigit(run[j]) {
			j++
		}
		for off := 0; off < 2 && j-i-off >= minHexSpan; off++ {
			h := run[i+off : j]
			if !m.take(len(h) / 2) {
				return true
			}
			if raw, err := hex.DecodeString(h[:len(h)&^1]); err == nil && m.decodedDirty(raw, depth) {
				return true
			}
		}
		i = j
	}
	if !hasUpper(run) {
		// Base64 of text with anything to mask has an upper-case letter:
		// a digit, '=', ':' or a quote encodes as one, first of its group.
		return false
	}
	body := base64URLToStd.Replace(strings.TrimRight(run, "="))
	for off := 0; off < 4 && len(body)-off >= minEncodedSpan; off++ {
		part := body[off:]
		if len(part)%4 == 1 {
			part = part[:len(part)-1]
		}
		if !m.take(len(part) * 3 / 4) {
			return true
		}
		if raw, err := base64.RawStdEncoding.DecodeString(part); err == nil && m.decodedDirty(raw, depth) {
			return true
		}
	}
	return false
}

func hasUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 'A' && s[i] <= 'Z' {
			return true
		}
	}
	return false
}

// minTextStretch is the shortest stretch of decoded text looked at: a CVV
// with its name ("cvv=123") has 7 characters.
const minTextStretch = 7

// decodedDirty reports whether decoded bytes hold text that masking
// changes. Only the stretches of text are read, each on its own: bytes
// decoded from what stood before the encoded part (a misaligned start)
// are no text, and neither is what most runs (words, IDs) decode to.
func (m *masker) decodedDirty(raw []byte, depth int) bool {
	for i := 0; i < len(raw); {
		if !isTextByte(raw[i]) {
			i++
			continue
		}
		j := i
		for j < len(raw) && (isTextByte(raw[j]) || raw[j] == 0) {
			j++
		}
		if j-i >= minTextStretch {
			s := strings.ToValidUTF8(string(bytes.ReplaceAll(raw[i:j], []byte{0}, nil)), " ")
			if m.text(s, depth+1) != s {
				return true
			}
		}
		i = j
	}
	return false
}

// isTextByte reports a byte of text: printable, a space, or part of a
// UTF-8 sequence.
func isTextByte(c byte) bool { return c >= 0x20 && c != 0x7f || c == '\t' || c == '\n' || c == '\r' }
