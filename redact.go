package payonce

import (
	"context"
	"log/slog"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// secretNames are the names whose values RedactString hides. A name
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
// "cvv 123". Credentials are ASCII; values that are plain words
// (stopWords) are kept: "the token endpoint" names no token, nor does
// "API Key 无效".
var spokenValue = regexp.MustCompile(`(?i)(^|[^\p{L}\p{N}])(bearer|basic|token|secret|password|passwd|` +
	`api[ _-]?key|client[ _-]?secret|access[ _-]?token|cvv2?|cvc2?|cvn|csc|security code|pin)(\s+)([A-Za-z0-9._~+/=:@!$%*#-]+)`)

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

// RedactString masks what must never reach a log or an error, whatever a
// server echoes:
//
//   - card numbers: a run of 13 to 19 digits keeps only its last four; a
//     run of 13 or more digits in groups split by one to three
//     separators (any space or dash, an invisible character such as a
//     zero-width space, a dot, slash, underscore or plus:
//     "4111 1111 1111 1111", "4111.1111...") keeps only its last group
//     when that group has four digits and the run is at most 19 digits,
//     and nothing otherwise (a CVV written after the number is masked
//     with it); runs of 20 or more digits are masked whole; letters
//     glued to a run change nothing, but a UUID holding a hex letter is
//     never masked;
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
//   - digits written as escape sequences (\u0034, \\u0034, \x34) are
//     written as digits first, so an escaped card number is masked too.
//
// It is idempotent: redacting twice gives the same text.
func RedactString(s string) string {
	if s == "" {
		return s
	}
	if strings.IndexByte(s, '\\') >= 0 {
		s = unescapeDigits(s)
	}
	s = maskDigitRuns(s)
	return redactSecrets(s)
}

// redactSecrets is RedactString but for card numbers: secret values,
// JSON Web Tokens, URL credentials and query strings.
func redactSecrets(s string) string {
	if strings.ContainsAny(s, ":=? \t\n\f\r") { // every pattern here needs one (a request ID, a code has none)
		s = namedValue.ReplaceAllStringFunc(s, redactNamed)
		s = camelValue.ReplaceAllStringFunc(s, redactCamel)
		s = spokenValue.ReplaceAllStringFunc(s, redactSpoken)
		if strings.Contains(s, "://") {
			s = urlUserinfo.ReplaceAllString(s, "${1}[REDACTED]@")
		}
		s = urlQuery.ReplaceAllString(s, "${1}?[REDACTED]")
		s = bareQuery.ReplaceAllString(s, "?[REDACTED]")
	}
	if strings.Contains(s, "eyJ") {
		s = bareJWT.ReplaceAllLiteralString(s, "[REDACTED]")
	}
	return s
}

// escapedDigit matches a decimal digit written as an escape sequence, as
// JSON, JavaScript, Go or C write them: \u0034, \U00000034, \x34, with
// any number of backslashes (JSON quoted in JSON doubles them).
var escapedDigit = regexp.MustCompile(`\\+(?:[uU]00|U000000|[xX])3([0-9])`)

// unescapeDigits writes escaped decimal digits as digits, so that a card
// number a server sent escaped ("\\u0034\\u0031...") is masked like
// one in clear. It repeats until no escaped digit is left: decoding one
// may complete another.
func unescapeDigits(s string) string {
	for strings.IndexByte(s, '\\') >= 0 {
		t := escapedDigit.ReplaceAllString(s, "${1}")
		if t == s {
			break
		}
		s = t
	}
	return s
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
	if stopWords[strings.ToLower(g[4])] {
		return m
	}
	return g[1] + g[2] + g[3] + "[REDACTED]"
}

// isSeparator reports a rune that may split the digit groups of a card
// number: any space (tabs, line breaks, NBSP, ideographic space), any
// dash, an invisible format character (zero-width space, joiner, soft
// hyphen, BOM), and the dots, slashes, underscores and plus signs a
// template or an encoder may put between groups.
func isSeparator(r rune) bool {
	switch r {
	case '.', '/', '_', '+', '\u2212', '\u2043':
		return true
	}
	return unicode.IsSpace(r) || unicode.Is(unicode.Pd, r) || unicode.Is(unicode.Cf, r)
}

// uuidPattern matches a canonical UUID. One holding a hex letter is an
// identifier (a charge, wallet or key) and is never masked: its digit
// groups could otherwise add up to a card-number-like run.
var uuidPattern = regexp.MustCompile(`[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}`)

// uuidRunes marks, by rune index, the runes of s inside a UUID holding a
// hex letter; nil when s has none.
func uuidRunes(s string, n int) []bool {
	locs := uuidPattern.FindAllStringIndex(s, -1)
	var marked []bool
	for _, l := range locs {
		if !strings.ContainsAny(s[l[0]:l[1]], "abcdefABCDEF") {
			continue // all digits: it may be a card number in disguise
		}
		if marked == nil {
			marked = make([]bool, n)
		}
		first := utf8.RuneCountInString(s[:l[0]])
		for i := range l[1] - l[0] { // a UUID is ASCII: one rune per byte
			marked[first+i] = true
		}
	}
	return marked
}

// maskDigitRuns masks card-number-like digit runs (see RedactString).
// Digits are any Unicode decimal digits (full-width ones included). It
// reads each rune at most twice, whatever the input.
func maskDigitRuns(s string) string {
	digits := 0
	for i := 0; i < len(s) && digits < 13; i++ {
		switch c := s[i]; {
		case c >= 0x80:
			digits = 13 // non-ASCII: may hold other digits, take the slow path
		case c >= '0' && c <= '9':
			digits++
		}
	}
	if digits < 13 {
		return s // too few digits for a card number
	}
	rs := []rune(s)
	inUUID := uuidRunes(s, len(rs))
	isDigit := func(p int) bool { return unicode.IsDigit(rs[p]) && (inUUID == nil || !inUUID[p]) }
	changed := false
	var groups [][2]int // [start, end) of each group of the current run
	for i := 0; i < len(rs); {
		if !isDigit(i) {
			i++
			continue
		}
		// A run: digit groups split by 1 to 3 separators. Letters around
		// it change nothing: "pan4111 1111 1111 1111x" is a card number.
		groups = groups[:0]
		j := i
		for {
			k := j
			for k < len(rs) && isDigit(k) {
				k++
			}
			groups = append(groups, [2]int{j, k})
			n := k
			for n < len(rs) && n-k < 3 && isSeparator(rs[n]) {
				n++
			}
			if n == k || n >= len(rs) || !isDigit(n) {
				j = k
				break
			}
			j = n
		}
		digits := 0
		for _, g := range groups {
			digits += g[1] - g[0]
		}
		last := groups[len(groups)-1]
		keep := -1 // start of the digits left in clear
		switch {
		case len(groups) == 1 && digits >= 13 && digits <= 19:
			keep = last[1] - 4
		case len(groups) > 1 && digits >= 13 && digits <= 19 && last[1]-last[0] == 4:
			keep = last[0]
		case len(groups) == 1 && digits < 20, len(groups) > 1 && digits < 13:
			// not a card number: keep it, but look again at its last
			// group, which may start a run of its own
			if len(groups) > 1 {
				j = last[0]
			}
			i = j
			continue
		default:
			keep = j // 20 digits or more, or groups ending oddly: mask all
		}
		for _, g := range groups {
			for p := g[0]; p < g[1] && p < keep; p++ {
				rs[p] = '*'
			}
		}
		changed = true
		i = j
	}
	if !changed {
		return s
	}
	return string(rs)
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

// RedactingHandler wraps a slog.Handler so that no record it passes on holds
// a secret: attributes named like secrets are replaced by [REDACTED], every
// string is passed through RedactString, but for the idempotency_key
// attribute, which the client fills with the operation's own key. Clients wrap any logger they are
// given in one.
type RedactingHandler struct {
	next slog.Handler
}

// NewRedactingHandler returns h wrapped in redaction.
func NewRedactingHandler(h slog.Handler) *RedactingHandler {
	if r, ok := h.(*RedactingHandler); ok {
		return r
	}
	return &RedactingHandler{next: h}
}

// Enabled implements slog.Handler.
func (h *RedactingHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.next.Enabled(ctx, l)
}

// Handle implements slog.Handler.
func (h *RedactingHandler) Handle(ctx context.Context, r slog.Record) error {
	nr := slog.NewRecord(r.Time, r.Level, RedactString(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		nr.AddAttrs(redactAttr(a))
		return true
	})
	return h.next.Handle(ctx, nr)
}

// WithAttrs implements slog.Handler.
func (h *RedactingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	out := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		out[i] = redactAttr(a)
	}
	return &RedactingHandler{next: h.next.WithAttrs(out)}
}

// WithGroup implements slog.Handler.
func (h *RedactingHandler) WithGroup(name string) slog.Handler {
	return &RedactingHandler{next: h.next.WithGroup(name)}
}

func redactAttr(a slog.Attr) slog.Attr {
	a.Value = a.Value.Resolve()
	if sensitiveAttr(a.Key) {
		return slog.String(a.Key, "[REDACTED]")
	}
	switch a.Value.Kind() {
	case slog.KindString:
		if a.Key == "idempotency_key" {
			return a // the client's own handle on the operation, kept readable
		}
		return slog.String(a.Key, RedactString(a.Value.String()))
	case slog.KindGroup:
		g := a.Value.Group()
		out := make([]slog.Attr, len(g))
		for i, ga := range g {
			out[i] = redactAttr(ga)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(out...)}
	case slog.KindAny:
		if err, ok := a.Value.Any().(error); ok {
			return slog.String(a.Key, RedactString(err.Error()))
		}
		return slog.String(a.Key, RedactString(slog.AnyValue(a.Value.Any()).String()))
	}
	return a
}
