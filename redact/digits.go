package redact

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Card numbers in text. A card number is 13 to 19 decimal digits that
// pass the Luhn check and do not start with 0. Digits are any Unicode
// decimal digit (ASCII, full-width, Arabic-Indic, Devanagari,
// mathematical...) and the superscript, subscript, circled and
// parenthesized digits (digitValue); the digits may be written in one run
// or in groups split by short runs of separators (isSeparator, at most
// maxSeparatorRun runes between two groups).

// maxSeparatorRun is the most separator runes that may stand between two
// digit groups of one card number: "4111  -  1111" has five.
const maxSeparatorRun = 5

// isSeparator reports a rune that may split the digit groups of a card
// number: any space (tabs, line breaks, NBSP, ideographic space), any
// dash, an invisible format character (zero-width space, joiner, soft
// hyphen, BOM), a combining mark (an underline or a keycap drawn on a
// digit), NUL (UTF-16 text read as bytes), and the punctuation a
// template, an encoder or a JSON array may put between groups:
// any punctuation (. / \\ _ , : ; & * # quotes, brackets, the Arabic
// thousands separator) and + | = ~ ^. An HTML or XML tag between two
// groups counts as one separator (markupAt).
func isSeparator(r rune) bool {
	switch r {
	case '+', '|', '=', '~', '^', '`', 0, '\u2212':
		return true
	}
	return unicode.IsSpace(r) || unicode.IsPunct(r) || invisible(r)
}

// invisible reports a format character (zero-width space, joiner, soft
// hyphen, direction mark, BOM) or a combining mark: a run of them between
// two digit groups does not count against maxSeparatorRun.
func invisible(r rune) bool {
	return unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r)
}

// otherDigits are the runes that stand for a decimal digit without being
// Unicode decimal digits (Nd): superscripts, subscripts, circled,
// parenthesized and dotted digits. Each range [lo, hi] holds the digits
// from value v on, in order.
var otherDigits = []struct {
	lo, hi rune
	v      int
}{
	{0x00b2, 0x00b3, 2}, {0x00b9, 0x00b9, 1}, {0x2070, 0x2070, 0}, {0x2074, 0x2079, 4}, // superscripts
	{0x2080, 0x2089, 0},                                           // subscripts
	{0x2460, 0x2468, 1}, {0x24ea, 0x24ea, 0}, {0x24ff, 0x24ff, 0}, // circled
	{0x2474, 0x247c, 1}, {0x2488, 0x2490, 1}, {0x24f5, 0x24fd, 1}, // parenthesized, dotted, double circled
	{0x2776, 0x277e, 1}, {0x2780, 0x2788, 1}, {0x278a, 0x2792, 1}, // dingbats
	{0x1f100, 0x1f100, 0}, {0x1f101, 0x1f10a, 0}, // digit full stop, digit comma
}

// digitValue returns the value (0 to 9) of a rune that stands for a
// decimal digit, or -1.
func digitValue(r rune) int {
	if r < utf8.RuneSelf {
		if r >= '0' && r <= '9' {
			return int(r - '0')
		}
		return -1
	}
	if unicode.IsDigit(r) {
		return ndValue(r)
	}
	for _, d := range otherDigits {
		if r >= d.lo && r <= d.hi {
			return d.v + int(r-d.lo)
		}
	}
	return -1
}

// ndValue is the value of a Unicode decimal digit: Nd digits come in
// blocks of ten, zero first, and each range of the Nd table starts with a
// zero.
func ndValue(r rune) int {
	for _, rg := range unicode.Nd.R16 {
		if r >= rune(rg.Lo) && r <= rune(rg.Hi) {
			return int(r-rune(rg.Lo)) % 10
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if r >= rune(rg.Lo) && r <= rune(rg.Hi) {
			return int(r-rune(rg.Lo)) % 10
		}
	}
	return 0
}

// uuidPattern matches a canonical UUID. One holding a hex letter is an
// identifier (a charge, wallet or key) and is never masked: its digit
// groups could otherwise add up to a card-number-like run.
var uuidPattern = regexp.MustCompile(`[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}`)

// timestampPattern matches a date and time as Go, RFC 3339 and SQL print
// them ("2026-11-29 18:49:12.123456789 +0000", "2026-11-29T18:49:12Z"),
// with a valid month, day, hour, minute and second and a year from 1900
// to 2199: its digits, read across the separators, often make a
// Luhn-valid run that is no card number.
var timestampPattern = regexp.MustCompile(`(?:19|20|21)[0-9]{2}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])[T ]` +
	`(?:[01][0-9]|2[0-3]):[0-5][0-9](?::(?:[0-5][0-9]|60)(?:[.,][0-9]{1,9})?)?(?:Z| ?[+-](?:[01][0-9]|2[0-3]):?[0-5][0-9])?`)

// ipv4Pattern matches an IPv4 address (four octets of at most 255): its
// digits and a port after it often make a Luhn-valid run.
var ipv4Pattern = regexp.MustCompile(`\b(?:(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\b`)

// exemptRunes marks, by rune index, the runes of s inside a UUID holding a
// hex letter, a timestamp (timestampPattern) or an IPv4 address; nil
// when s has none.
func exemptRunes(s string, n int) []bool {
	var marked []bool
	mark := func(l []int) {
		if marked == nil {
			marked = make([]bool, n)
		}
		first := utf8.RuneCountInString(s[:l[0]])
		for i := range l[1] - l[0] { // both patterns are ASCII: one rune per byte
			marked[first+i] = true
		}
	}
	// A match glued to more of its own characters is not one: the digits
	// around it would otherwise hide in it ("...-a716-4111111111111111").
	glued := func(l []int, more func(byte) bool) bool {
		return l[0] > 0 && more(s[l[0]-1]) || l[1] < len(s) && more(s[l[1]])
	}
	isDigit := func(c byte) bool { return c >= '0' && c <= '9' }
	alnum := func(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
	for _, l := range uuidPattern.FindAllStringIndex(s, -1) {
		if strings.ContainsAny(s[l[0]:l[1]], "abcdefABCDEF") && !glued(l, alnum) { // all digits: it may be a card number in disguise
			mark(l)
		}
	}
	if strings.IndexByte(s, ':') >= 0 {
		for _, l := range timestampPattern.FindAllStringIndex(s, -1) {
			if !glued(l, isDigit) {
				mark(l)
			}
		}
	}
	if strings.Count(s, ".") >= 3 {
		for _, l := range ipv4Pattern.FindAllStringIndex(s, -1) {
			// An address is four octets, neither more nor less: digit
			// groups split by dots that go on ("41.1.1.1.1...") are not one.
			before := l[0] > 0 && s[l[0]-1] == '.'
			after := l[1]+1 < len(s) && s[l[1]] == '.' && isDigit(s[l[1]+1])
			if !before && !after && !glued(l, isDigit) {
				mark(l)
			}
		}
	}
	return marked
}

// mayHoldCardNumber reports whether s has 13 ASCII digits or any
// non-ASCII rune that stands for a digit: without them it holds no card
// number in clear.
func mayHoldCardNumber(s string) bool {
	digits := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			if digits++; digits >= 13 {
				return true
			}
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRuneInString(s[i:])
			if digitValue(r) >= 0 {
				digits++
			}
			i += size - 1
		}
	}
	return digits >= 13
}

// maskDigitRuns masks the card numbers of s (see String): a run of
// digit groups that holds a card number aligned on its groups is masked
// whole, but for a last group of exactly four digits ending the card
// number, which is kept; a single run of 20 digits or more is masked
// whole (a card number may hide at any offset in it). UUIDs holding a
// hex letter and timestamps are never read as digits. Each rune is read
// a bounded number of times: a run's windows are checked in constant
// time each, from prefix sums.
func maskDigitRuns(s string) string {
	if !mayHoldCardNumber(s) {
		return s
	}
	rs := []rune(s)
	// Exemptions cost a regular expression: they are looked for only
	// once some run would be masked without them.
	out := maskRunes(rs, nil)
	if out == nil {
		return s
	}
	exempt := exemptRunes(s, len(rs))
	if exempt == nil {
		return string(out)
	}
	if out = maskRunes([]rune(s), exempt); out == nil {
		return s
	}
	return string(out)
}

// maskRunes masks the card numbers of rs (see maskDigitRuns) in place,
// reading no digit at an exempt index; it returns rs, or nil when it
// masked nothing.
func maskRunes(rs []rune, exempt []bool) []rune {
	val := func(p int) int {
		if exempt != nil && exempt[p] {
			return -1
		}
		return digitValue(rs[p])
	}
	changed := false
	var groups [][2]int // [start, end) of each group of the current run, by rune index
	var vals []int      // the run's digit values
	for i := 0; i < len(rs); {
		if val(i) < 0 {
			i++
			continue
		}
		groups, vals = groups[:0], vals[:0]
		j := i
		for {
			k := j
			for k < len(rs) {
				v := val(k)
				if v < 0 {
					break
				}
				vals = append(vals, v)
				k++
			}
			groups = append(groups, [2]int{j, k})
			n, seps := k, 0
			for n < len(rs) && seps < maxSeparatorRun {
				if invisible(rs[n]) {
					n++
					continue
				}
				if isSeparator(rs[n]) {
					n++
				} else if m := markupAt(rs, n); m > 0 {
					n += m
				} else {
					break
				}
				seps++
			}
			if n == k || n >= len(rs) || val(n) < 0 {
				j = k
				break
			}
			j = n
		}
		mask, keepLast := cardRun(groups, vals)
		if mask {
			end := len(groups)
			if keepLast {
				end--
			}
			for _, g := range groups[:end] {
				for p := g[0]; p < g[1]; p++ {
					rs[p] = '*'
				}
			}
			if keepLast && len(groups) == 1 { // one run: keep its last four digits
				for p := groups[0][0]; p < groups[0][1]-4; p++ {
					rs[p] = '*'
				}
			}
			changed = true
		}
		i = j
	}
	if !changed {
		return nil
	}
	return rs
}

// maxMarkup is the longest tag markupAt reads as a separator.
const maxMarkup = 32

// markupAt returns the length of an HTML or XML tag starting at rs[i]
// ("<b>", "</span>", "<br/>"), or 0: a server's HTML page may wrap each
// digit group of a card number in one.
func markupAt(rs []rune, i int) int {
	if rs[i] != '<' {
		return 0
	}
	for j := i + 1; j < len(rs) && j-i < maxMarkup; j++ {
		switch rs[j] {
		case '>':
			if j > i+1 {
				return j - i + 1
			}
			return 0
		case '<', '\n':
			return 0
		}
	}
	return 0
}

// cardRun decides for a run of digit groups (vals are its digits in
// order) whether it is masked, and whether its last group may stay in
// clear (a single run keeps its last four digits). It is masked when one
// group holds 20 digits or more, or when a window of digits passes the
// Luhn check and holds 13 to 19 digits after its leading zeros (not all
// zeros): a window starts where a group starts and ends where one ends,
// or 3 or 4 digits before (a card number of 15 or 16 digits with a CVV
// or an expiry glued to it). The last group stays when it is four digits
// and ends such a window; a group after the card number, a CVV, goes with
// it.
func cardRun(groups [][2]int, vals []int) (mask, keepLast bool) {
	if len(vals) < 13 {
		return false, false
	}
	// a[i], b[i]: sums of the first i digits, doubling (Luhn's way) the
	// digits at even (a) or odd (b) indexes; z[i]: the index of the first
	// non-zero digit from i on.
	a := make([]int, len(vals)+1)
	b := make([]int, len(vals)+1)
	for i, d := range vals {
		dd := d * 2
		if dd > 9 {
			dd -= 9
		}
		if i%2 == 0 {
			a[i+1], b[i+1] = a[i]+dd, b[i]+d
		} else {
			a[i+1], b[i+1] = a[i]+d, b[i]+dd
		}
	}
	z := make([]int, len(vals)+1)
	z[len(vals)] = len(vals)
	for i := len(vals) - 1; i >= 0; i-- {
		z[i] = z[i+1]
		if vals[i] != 0 {
			z[i] = i
		}
	}
	card := func(x, y int) bool { // digits [x, y): the last one is never doubled
		if n := y - z[x]; n < 13 || n > 19 {
			return false
		}
		if (y-1)%2 == 0 {
			return (b[y]-b[x])%10 == 0
		}
		return (a[y]-a[x])%10 == 0
	}
	starts := make([]int, len(groups)+1) // digit index where each group starts
	for g, gr := range groups {
		starts[g+1] = starts[g] + gr[1] - gr[0]
		if gr[1]-gr[0] >= 20 {
			return true, false
		}
	}
	lastEnds := false
	for first := range groups {
		x := starts[first]
		for last := first; last < len(groups); last++ {
			y := starts[last+1]
			if y-z[x] > 20 { // 16 digits and a glued expiry at most
				break
			}
			if card(x, y) {
				mask = true
				lastEnds = lastEnds || last == len(groups)-1
				continue
			}
			for _, glued := range []int{3, 4} { // a CVV or an expiry glued to the number
				if n := y - glued - z[x]; (n == 15 || n == 16) && y-glued > starts[last] && card(x, y-glued) {
					mask = true
				}
			}
		}
	}
	if len(groups) == 1 {
		return mask, mask && lastEnds
	}
	lastLen := groups[len(groups)-1][1] - groups[len(groups)-1][0]
	return mask, mask && lastEnds && lastLen == 4
}
