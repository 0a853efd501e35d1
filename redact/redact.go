// Package redact hides what no log line, error, journal row or span may
// hold: card numbers, CVVs, secrets, tokens and query strings, in any
// encoding. String redacts a text, JSON a JSON document (as a journal
// stores it), Header an HTTP header, and NewHandler wraps a slog.Handler so
// that every record it passes on is redacted. The payonce client runs all
// of its errors, journal rows and log records through this package; use it
// for the lines you log yourself.
package redact

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// secretNames are the names whose values String hides. A name
// matches on its own or as the end of a longer one (my_token, x-api-key),
// never inside a word (Japan is not a pan).
const secretNames = `cvv2?|cvc2?|cvn|csc|security[_ -]?code|card[_ -]?verification(?:[_ -]?(?:value|code))?|pin|` +
	`client[_-]?secret|api[_-]?secret|app[_-]?secret|secret[_-]?key|secret|api[_-]?key|apikey|private[_-]?key|` +
	`password|passwd|pwd|access[_-]?token|refresh[_-]?token|id[_-]?token|auth[_-]?token|token|` +
	`authorization|proxy-authorization|x-signature|signature|card[_-]?number|pan`

// namedValue matches name=value, name: value, "name":"value" (also with
// escaped quotes, as in JSON quoted inside a message) and 'name': 'value'.
// A quoted value runs to its closing quote; a bare one to the next space
// or delimiter, after an optional Bearer or Basic scheme.
var namedValue = regexp.MustCompile(`(?i)(^|[^\p{L}\p{N}])(` + secretNames + `)` + secretValue)

// secretValue is what follows a secret's name: the separator, then the
// value (see namedValue).
const secretValue = `(\\?["']?\s*[:=]\s*)` +
	`(?:(\\?")((?:[^"\\]|\\[^"])*)|(')([^']*)|((?i:bearer\s+|basic\s+)?[^\s"'\\&,;}\])\[]+))`

// camelValue matches a secret name ending a camelCase word, as JavaScript
// and Java servers write them: hmacSecret, sessionToken, userPassword,
// cardCvv. A word ending in Key is not taken (idempotencyKey).
var camelValue = regexp.MustCompile(`([\p{Ll}\p{N}])((?:Secret|Token|Password|Passwd|Pwd|Cvv2?|Cvc2?|Cvn|Signature|Pin)(?:Key|Value|Code)?)` +
	secretValue)

// spokenValue matches a secret named in prose: "token abc", "Bearer abc",
// "cvv 123", "the token 'abc' is expired". Credentials are ASCII; values that are plain words
// (stopWords) are kept: "the token endpoint" names no token, nor does
// "API Key 无效".
var spokenValue = regexp.MustCompile(`(?i)(^|[^\p{L}\p{N}])(bearer|basic|token|secret|password|passwd|` +
	`api[ _-]?key|client[ _-]?secret|access[ _-]?token|cvv2?|cvc2?|cvn|csc|security code|pin)(\s+)(['"\x60\x{2018}\x{201c}]?)([A-Za-z0-9._~+/=:@!$%*#-]+)`)

// stopWords are words that follow "token", "secret" or "password" in
// prose and are never a credential.
var stopWords = map[string]bool{
	"a": true, "an": true, "the": true, "and": true, "or": true, "is": true, "are": true, "was": true, "were": true,
	"be": true, "been": true, "has": true, "have": true, "had": true, "not": true, "no": true, "in": true, "on": true,
	"of": true, "for": true, "from": true, "to": true, "with": true, "without": true, "by": true, "at": true, "as": true,
	"if": true, "it": true, "its": true, "this": true, "that": true, "than": true, "then": true, "into": true,
	"when": true, "while": true, "which": true, "endpoint": true, "endpoints": true, "request": true, "requests": true,
	"url": true, "uri": true, "refused": true, "rejected": true, "expired": true, "invalid": true, "missing": true,
	"required": true, "unknown": true, "revoked": true, "failed": true, "answered": true, "error": true,
	"mismatch": true, "too": true, "may": true, "must": true, "can": true, "cannot": true, "could": true,
	"would": true, "should": true, "will": true, "used": true, "given": true, "sent": true, "type": true,
	"format": true, "header": true, "field": true, "value": true, "ended": true, "fetch": true, "fetched": true,
	"refresh": true, "cache": true, "cached": true, "auth": true, "authentication": true,
}

// bareJWT matches a JSON Web Token (header.payload.signature, the header
// base64url of '{"'), a bearer token whatever name stands before it.
var bareJWT = regexp.MustCompile(`eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*`)

// bareQuery matches a query string without its URL: "?a=b&c=d".
var bareQuery = regexp.MustCompile(`\?[^\s"'?#=&]+=[^\s"']*`)

// urlUserinfo matches the credentials of a URL (scheme://user:password@).
var urlUserinfo = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://)[^\s/?#@"'\[\]]+@`)

// urlQuery matches the query string of a URL.
var urlQuery = regexp.MustCompile(`(https?://[^\s?"]*)\?[^\s"]*`)

// String masks what must never reach a log or an error, whatever a
// server echoes:
//
//   - card numbers: 13 to 19 digits that pass the Luhn check and do not
//     start with 0, in one run (they keep their last four) or in groups
//     split by up to five separators ("4111 1111 1111 1111",
//     "4111.1111.1111.1111", "4111, 1111", "[4,1,1,1,...]", "4111  -  1111":
//     spaces, dashes, invisible characters, combining marks, NUL, . / _ +
//     , : ; | quotes, brackets and HTML tags). A run of groups holding such a number on its group
//     boundaries is masked whole, but for a last group of four digits that
//     ends the number; a group after the number (a CVV) goes with it. A
//     single run of 20 digits or more is masked whole. Any Unicode decimal
//     digit counts, and so do superscript, subscript and circled digits.
//     Letters glued to a run change nothing; UUIDs holding a hex letter and
//     date-times (years 1900 to 2199) are not read as digits, and runs that
//     fail the Luhn check (order numbers, timestamps, amounts) are kept;
//   - the values of secret-looking names in name=value, name: value and
//     "name":"value" forms (cvv, cvc, pin, secret, client_secret,
//     api_key, password, token, access_token, authorization, signature,
//     card_number..., also ending a camelCase word: hmacSecret,
//     sessionToken) and in prose ("Bearer abc", "token abc",
//     "cvv 123") become [REDACTED], except an unquoted plain word of prose
//     ("client_secret: required", "card.cvv: must be 3 or 4 digits");
//   - JSON Web Tokens ("eyJ...") become [REDACTED] wherever they stand;
//   - the credentials of a URL (scheme://user:password@host) and query
//     strings, of a URL or bare ("?a=b"), are cut;
//   - encoded text: percent-encoding, quoted-printable, HTML character
//     references, escape sequences (\u0034, \x34, \064, \u{34}), base64
//     and base64url runs of 16 characters or more (also wrapped at a fixed
//     width) and hex runs of 26 or more are decoded, up to three encodings
//     deep, and redacted in turn; a base64 or hex run
//     whose decoding holds anything above becomes [REDACTED], and a text
//     whose escapes do is shown decoded, with what it holds masked.
//
// Its cost is linear in the length of s: a bounded number of passes, and
// at most 1024 encoded runs and 256 KiB of decoded bytes per call (a run
// past these bounds is cut whole). It is idempotent: redacting twice gives
// the same text.
func String(s string) string {
	var r *Redactor
	return r.Redact(s)
}

// Redact is String, cutting r's secrets too.
func (r *Redactor) Redact(s string) string {
	s = r.cutSecrets(s)
	if !mayNeedRedaction(s) || canonicalUUID(s) && strings.ContainsAny(s, "abcdefABCDEF") {
		return s // the common cases: an ID, a code, a short word; a request ID that is a UUID
	}
	return r.redactAt(s, 0, newDecodeBudget(), false)
}

// redactAt redacts s found depth decodings deep. keepDigits leaves the
// digit runs of s itself in clear (not those of a text decoded from it),
// for identifiers whose digits were checked otherwise.
func (r *Redactor) redactAt(s string, depth int, b *decodeBudget, keepDigits bool) string {
	if s == "" {
		return s
	}
	s = r.cutSecrets(s)
	if !mayNeedRedaction(s) {
		return s
	}
	if hasEscape(s) {
		if d := decodeDigitEscapes(s); d != s && mayHoldCardNumber(d) {
			s = r.cutSecrets(d)
		}
	}
	lit := s
	if depth < maxDecodeDepth {
		lit = r.maskEncodedSpans(lit, depth, b)
	}
	if !keepDigits {
		lit = maskDigitRuns(lit)
	}
	lit = redactSecrets(lit)
	if depth >= maxDecodeDepth || !hasEscape(lit) {
		return lit
	}
	dec := decodeEscapes(lit)
	if dec == lit {
		return lit
	}
	red := r.redactAt(dec, depth+1, b, false)
	if red == dec {
		return lit // the escapes hide nothing: the text is kept as sent
	}
	return strings.ToValidUTF8(red, "\ufffd")
}

// mayNeedRedaction reports whether s holds anything String may
// change: 13 digits, a non-ASCII rune, an escape, a character some secret
// pattern needs, a JSON Web Token or a run long enough to be base64.
func mayNeedRedaction(s string) bool {
	digits, run := 0, 0
	for i := 0; i < len(s); i++ {
		switch byteClass[s[i]] {
		case classTrigger:
			return true
		case classDigit:
			if digits++; digits >= 13 {
				return true
			}
			fallthrough
		case classBase64:
			if run++; run >= minBase64Span {
				return true
			}
			continue
		}
		run = 0
	}
	return false
}

// Byte classes for mayNeedRedaction.
const (
	classOther   = iota
	classTrigger // a non-ASCII byte, an escape, a character some secret pattern needs, a space or control
	classDigit
	classBase64 // a base64 character that is no digit
)

// byteClass is the class of each byte.
var byteClass = func() (t [256]uint8) {
	for c := range 256 {
		switch {
		case c >= utf8.RuneSelf, c == '%', c == '&', c == '\\', c == ':', c == '=', c == '?', c <= ' ':
			t[c] = classTrigger
		case c >= '0' && c <= '9':
			t[c] = classDigit
		case base64Char(byte(c)):
			t[c] = classBase64
		}
	}
	return t
}()

// redactSecrets is String but for card numbers and encoded text:
// secret values, JSON Web Tokens, URL credentials and query strings. Each
// pattern runs only when a cheap test finds what it needs.
func redactSecrets(s string) string {
	if strings.ContainsAny(s, ":=? \t\n\f\r") { // every pattern here needs one (a request ID, a code has none)
		if namedCandidate(s) {
			s = namedValue.ReplaceAllStringFunc(s, redactNamed)
			s = camelValue.ReplaceAllStringFunc(s, redactCamel)
		}
		if spokenCandidate(s) {
			s = spokenValue.ReplaceAllStringFunc(s, redactSpoken)
		}
		if strings.Contains(s, "://") {
			s = urlUserinfo.ReplaceAllString(s, "${1}[REDACTED]@")
		}
		if strings.IndexByte(s, '?') >= 0 {
			s = urlQuery.ReplaceAllString(s, "${1}?[REDACTED]")
			s = bareQuery.ReplaceAllString(s, "?[REDACTED]")
		}
	}
	if strings.Contains(s, "eyJ") {
		s = bareJWT.ReplaceAllLiteralString(s, redacted)
	}
	return s
}

// secretNameEnds are the ends of the names namedValue and camelValue take
// (lowercased, without '_', '-' or spaces), with an optional Key, Value
// or Code after them.
var secretNameEnds = []string{"cvv", "cvv2", "cvc", "cvc2", "cvn", "csc", "securitycode", "cardverification",
	"pin", "secret", "apikey", "privatekey", "password", "passwd", "pwd", "token", "authorization", "signature",
	"cardnumber", "pan"}

// namedCandidate reports whether some ':' or '=' of s follows (past
// quotes, backslashes and spaces) a word ending like a secret's name: the
// test namedValue and camelValue need to be worth running.
func namedCandidate(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != ':' && s[i] != '=' {
			continue
		}
		j := i
		for j > 0 && strings.IndexByte("\"'\\ \t", s[j-1]) >= 0 {
			j--
		}
		var w []byte
		for k := j - 1; k >= 0 && j-k <= 48; k-- {
			c := s[k]
			switch {
			case c >= 'A' && c <= 'Z':
				w = append(w, c+'a'-'A')
			case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
				w = append(w, c)
			case c == '_' || c == '-' || c == ' ':
				continue
			default:
				k = -1
				continue
			}
		}
		slices.Reverse(w)
		word := string(w)
		for _, sfx := range []string{"key", "value", "code"} {
			if t, ok := strings.CutSuffix(word, sfx); ok && endsLikeSecret(t) {
				return true
			}
		}
		if endsLikeSecret(word) {
			return true
		}
	}
	return false
}

func endsLikeSecret(w string) bool {
	for _, e := range secretNameEnds {
		if strings.HasSuffix(w, e) {
			return true
		}
	}
	return false
}

// spokenWords are the words spokenValue starts with, lowercased.
var spokenWords = []string{"bearer", "basic", "token", "secret", "passw", "api", "cvv", "cvc", "cvn", "csc", "security", "pin"}

// spokenCandidate reports whether s holds a word spokenValue starts with.
func spokenCandidate(s string) bool {
	l := strings.ToLower(s)
	for _, w := range spokenWords {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}

func redactNamed(m string) string { return redactMatch(namedValue, m) }

func redactCamel(m string) string { return redactMatch(camelValue, m) }

// redactMatch replaces the value of the secret re matched in m.
func redactMatch(re *regexp.Regexp, m string) string {
	g := re.FindStringSubmatch(m)
	switch {
	case g[4] != "": // double-quoted (maybe escaped): keep the quote
		return g[1] + g[2] + g[3] + g[4] + "[REDACTED]"
	case g[6] != "":
		return g[1] + g[2] + g[3] + g[6] + "[REDACTED]"
	case stopWords[strings.ToLower(g[8])]:
		return m // prose, as in "card.cvv: must be 3 or 4 digits"
	}
	return g[1] + g[2] + g[3] + "[REDACTED]"
}

func redactSpoken(m string) string {
	g := spokenValue.FindStringSubmatch(m)
	if stopWords[strings.ToLower(g[5])] {
		return m
	}
	return g[1] + g[2] + g[3] + g[4] + "[REDACTED]"
}

// sensitiveAttr reports whether a log attribute's name marks a secret,
// in any casing or spelling: the name, lowercased and without '_', '-',
// '.' or spaces, is one of the secret names or ends like one
// (clientSecret, X-Api-Key, hmac_secret, sessionToken, userPassword,
// Set-Cookie).
func sensitiveAttr(key string) bool {
	k := strings.Map(func(r rune) rune {
		switch r {
		case '_', '-', '.', ' ':
			return -1
		}
		return unicode.ToLower(r)
	}, key)
	switch k {
	case "authorization", "proxyauthorization", "cvv", "cvv2", "cvc", "cvc2", "cvn", "csc", "pin", "pan",
		"cardnumber", "securitycode":
		return true
	}
	for _, end := range []string{"secret", "secretkey", "token", "apikey", "password", "passwd", "signature", "privatekey", "cookie", "cookie2"} {
		if strings.HasSuffix(k, end) {
			return true
		}
	}
	return false
}
