package redact

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Encoders a hostile server may apply to a card number, one layer each.
var testEncoders = []struct {
	name string
	enc  func(string) string
}{
	{"percent", func(s string) string { return eachByte(s, "%%%02X") }},
	{"percent-lower", func(s string) string { return eachByte(s, "%%%02x") }},
	{"percent-u", func(s string) string { return eachRune(s, "%%u%04X") }},
	{"base64", func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }},
	{"base64-raw", func(s string) string { return base64.RawStdEncoding.EncodeToString([]byte(s)) }},
	{"base64url", func(s string) string { return base64.URLEncoding.EncodeToString([]byte(s)) }},
	{"base64url-raw", func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }},
	{"hex", func(s string) string { return hex.EncodeToString([]byte(s)) }},
	{"quoted-printable", func(s string) string { return eachByte(s, "=%02X") }},
	{"utf16le", func(s string) string { return string(utf16LE(s)) }},
	{"html-groups", func(s string) string { return "<i>" + strings.Join(strings.Split(s, ""), "</i><i>") + "</i>" }},
	{"entity-dec", func(s string) string { return eachRune(s, "&#%d;") }},
	{"entity-dec-padded", func(s string) string { return eachRune(s, "&#%07d;") }},
	{"entity-hex", func(s string) string { return eachRune(s, "&#x%x;") }},
	{"entity-hex-nosemi", func(s string) string { return eachRune(s, "&#X%X") }},
	{"octal", func(s string) string { return eachByte(s, `\%03o`) }},
	{"u-brace", func(s string) string { return eachRune(s, `\u{%x}`) }},
	{"u4", func(s string) string { return eachRune(s, `\u%04x`) }},
	{"u4-double", func(s string) string { return eachRune(s, `\\u%04x`) }},
	{"x2", func(s string) string { return eachByte(s, `\x%02x`) }},
	{"fullwidth", func(s string) string { return mapDigits(s, '０') }},
	{"arabic-indic", func(s string) string { return mapDigits(s, '٠') }},
	{"devanagari", func(s string) string { return mapDigits(s, '०') }},
	{"math-bold", func(s string) string { return mapDigits(s, '𝟎') }},
	{"subscript", func(s string) string { return mapDigits(s, '₀') }},
	{"superscript", func(s string) string {
		sup := []rune("⁰¹²³⁴⁵⁶⁷⁸⁹")
		return strings.Map(func(r rune) rune {
			if r >= '0' && r <= '9' {
				return sup[r-'0']
			}
			return r
		}, s)
	}},
}

func eachByte(s, format string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		fmt.Fprintf(&b, format, s[i])
	}
	return b.String()
}

func eachRune(s, format string) string {
	var b strings.Builder
	for _, r := range s {
		if r > 0xffff && strings.Contains(format, "%04") { // UTF-16, as JSON and %u write it
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&b, format, r1)
			r = r2
		}
		fmt.Fprintf(&b, format, r)
	}
	return b.String()
}

func mapDigits(s string, zero rune) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return zero + r - '0'
		}
		return r
	}, s)
}

// cardTexts are texts that hold a card number; each is encoded whole.
var cardTexts = []string{
	"4111111111111111",
	"5555555555554444",
	"378282246310005",
	"4111 1111 1111 1111",
	`{"card":{"number":"4111111111111111","cvv":"123"},"amount":"10.00"}`,
	"number=4111111111111111&cvv=123",
}

// encodedArounds are the places an encoded card number stands in a text:
// alone, after prose, after a '=' (which quoted-printable reads), in a
// JSON string, and glued to letters on both sides (which shift base64).
var encodedArounds = []string{"%s", "declined: %s", "card=%s; retry", `{"message":"%s"}`, "x%sy"}

// outerEncoders are the encoders applied as a third layer: percent,
// base64, quoted-printable and padded decimal entities, the layers that
// grow the text most.
var outerEncoders = []int{0, 3, 8, 12}

// exhaustive runs every combination of card text, layers and place in
// TestRedactEncodedCardNumbers (some 35,000 texts) rather than a table
// that covers each encoder, pair and place.
var exhaustive = flag.Bool("exhaustive", false, "redact every encoded card text in every combination")

// checkEncodedCard asserts that enc, the card text encoded, placed in a
// text as around says, reaches no redacted text: neither the encoded form
// nor the number in clear; and that redacting again changes nothing.
func checkEncodedCard(t *testing.T, name, enc, around string) {
	t.Helper()
	text := fmt.Sprintf(around, enc)
	out := String(text)
	if !assert.NotContains(t, out, enc, "%s: %q", name, text) {
		return
	}
	digits := digitsOf(out)
	assert.NotContains(t, digits, "41111111", name)
	assert.NotContains(t, digits, "55555555", name)
	assert.NotContains(t, digits, "37828224", name)
	assert.Equal(t, out, String(out), "idempotent: %s", name)
}

// A card number a server sent encoded once, twice or three times, with
// text around it, reaches no redacted text: neither the encoded form nor
// the number in clear. Every text is tried in every encoding at every
// place; every pair of layers, in either order, alone and under one of
// the outer encoders, with the texts, places and outer encoders taken in
// turn so that each outer layer meets each text and place. -exhaustive
// tries every combination; FuzzRedactEncodedCardTexts explores the same
// space.
func TestRedactEncodedCardNumbers(t *testing.T) {
	if *exhaustive {
		sweepEncodedCards(t)
		return
	}
	for _, in := range cardTexts {
		for _, e1 := range testEncoders {
			enc := e1.enc(in)
			for _, around := range encodedArounds {
				checkEncodedCard(t, e1.name, enc, around)
			}
		}
	}
	for i1, e1 := range testEncoders {
		for i2, e2 := range testEncoders {
			if !layerAllowed(e1.name, e2.name) {
				continue
			}
			in := cardTexts[(i1+i2)%len(cardTexts)]
			checkEncodedCard(t, e1.name+"/"+e2.name, e2.enc(e1.enc(in)), encodedArounds[i1%len(encodedArounds)])
			e3 := testEncoders[outerEncoders[(i1+i2)%len(outerEncoders)]]
			in = cardTexts[i1%2]
			around := encodedArounds[i2%len(encodedArounds)]
			checkEncodedCard(t, e1.name+"/"+e2.name+"/"+e3.name, e3.enc(e2.enc(e1.enc(in))), around)
		}
	}
}

// sweepEncodedCards is TestRedactEncodedCardNumbers over every
// combination: each text under one and two layers, the first two texts
// under three, each at every place.
func sweepEncodedCards(t *testing.T) {
	check := func(name, enc string) {
		t.Helper()
		for _, around := range encodedArounds {
			checkEncodedCard(t, name, enc, around)
		}
	}
	for n, in := range cardTexts {
		for _, e1 := range testEncoders {
			check(e1.name, e1.enc(in))
			for _, e2 := range testEncoders {
				if !layerAllowed(e1.name, e2.name) {
					continue
				}
				check(e1.name+"/"+e2.name, e2.enc(e1.enc(in)))
				if n >= 2 {
					continue
				}
				for _, i3 := range outerEncoders {
					e3 := testEncoders[i3]
					check(e1.name+"/"+e2.name+"/"+e3.name, e3.enc(e2.enc(e1.enc(in))))
				}
			}
		}
	}
}

// A card text encoded in up to three layers (the outermost of the third
// among outerEncoders) at any place in a text: what
// TestRedactEncodedCardNumbers checks, over any combination.
func FuzzRedactEncodedCardTexts(f *testing.F) {
	f.Add(uint8(4), uint8(4), []byte{25, 3})
	f.Add(uint8(5), uint8(2), []byte{8, 9})
	f.Add(uint8(0), uint8(3), []byte{12, 19, 1})
	f.Add(uint8(1), uint8(4), []byte{20, 6, 2})
	f.Fuzz(func(t *testing.T, text, place uint8, layers []byte) {
		in := cardTexts[int(text)%len(cardTexts)]
		around := encodedArounds[int(place)%len(encodedArounds)]
		enc, name, prev, n := in, "", "", 0
		for _, l := range layers {
			if n == maxDecodeDepth {
				break
			}
			e := testEncoders[int(l)%len(testEncoders)]
			if n == 2 {
				e = testEncoders[outerEncoders[int(l)%len(outerEncoders)]]
			}
			if !layerAllowed(prev, e.name) {
				continue
			}
			enc, name, prev, n = e.enc(enc), name+"/"+e.name, e.name, n+1
		}
		if n == 0 {
			return
		}
		checkEncodedCard(t, name, enc, around)
	})
}

func isDigitMap(name string) bool {
	switch name {
	case "fullwidth", "arabic-indic", "devanagari", "math-bold", "subscript", "superscript":
		return true
	}
	return false
}

// layerAllowed reports whether encoder next may be applied on top of
// prev: digits written otherwise and tags around groups stand for digits
// only in clear text, and UTF-16 is read for ASCII text only.
func layerAllowed(prev, next string) bool {
	switch {
	case prev == "":
		return true
	case isDigitMap(next) || next == "html-groups":
		return false
	case next == "utf16le":
		return !isDigitMap(prev)
	}
	return true
}

// Encodings mixed digit by digit, base64 glued to a word, a CVV next to an
// encoded number, a card number in a JSON digit array or split by the
// punctuation a template puts between groups: none survives.
func TestRedactMixedEncodings(t *testing.T) {
	b64 := base64.StdEncoding.EncodeToString
	for _, in := range []string{
		"%34&#49;\\u0031\\061%31&#x31;1\\x31%31%31%31%31%31%31%31%31",
		"card" + b64([]byte("4111111111111111")),
		"xy" + base64.RawURLEncoding.EncodeToString([]byte(`{"pan":"4111111111111111"}`)),
		"pan " + b64([]byte("4111111111111111")) + " cvv " + b64([]byte("123")),
		b64([]byte(eachByte("4111111111111111", "%%%02X"))),
		eachByte(b64([]byte("4111111111111111")), "%%%02X"),
		"&amp;#52;&amp;#49;&amp;#49;&amp;#49;&amp;#49;&amp;#49;&amp;#49;&amp;#49;&amp;#49;&amp;#49;&amp;#49;&amp;#49;&amp;#49;&amp;#49;&amp;#49;&amp;#49;",
		"%2534%2531%2531%2531%2531%2531%2531%2531%2531%2531%2531%2531%2531%2531%2531%2531",
		"[4,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]",
		"[4, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]",
		`["4111","1111","1111","1111"]`,
		"4111,1111,1111,1111", "4111:1111:1111:1111", "4111|1111|1111|1111", "4111  -  1111  -  1111  -  1111",
		"4111; 1111; 1111; 1111", "(4111) 1111 1111 1111",
		"4111%201111%201111%201111", "4111+1111+1111+1111", "4111&#32;1111&#32;1111&#32;1111",
		"⁴¹¹¹ ¹¹¹¹ ¹¹¹¹ ¹¹¹¹", "₄₁₁₁₁₁₁₁₁₁₁₁₁₁₁₁", "④①①①①①①①①①①①①①①①",
		"0004111111111111111", "4111111111111111123", "4111 1111 1111 1111 123",
		hex.EncodeToString([]byte(`{"number":"4111111111111111"}`)),
		strings.ToUpper(hex.EncodeToString([]byte("4111111111111111"))),
		"4\u03321\u03321\u03321\u03321\u03321\u03321\u03321\u03321\u03321\u03321\u03321\u03321\u03321\u03321\u03321\u0332",
		"4\ufe0f\u20e31\ufe0f\u20e311 1111 1111 1111",
		"<b>4111</b> <b>1111</b> <b>1111</b> <b>1111</b>", "<td>4111</td><td>1111</td><td>1111</td><td>1111</td>",
		"=34=31=31=31=31=31=31=31=31=31=31=31=31=31=31=31",
		base64.StdEncoding.EncodeToString(utf16LE(`{"number":"4111111111111111"}`)),
		mimeWrap(base64.StdEncoding.EncodeToString([]byte(strings.Repeat("x", 50) + `{"number":"4111111111111111","cvv":"123"}`))),
	} {
		out := String("declined " + in + " now")
		assert.NotContains(t, digitsOf(decodeAllForTest(out)), "41111111", "%q -> %q", in, out)
		assert.NotContains(t, out, in, "%q", in)
		assert.Equal(t, out, String(out), "idempotent: %q", in)
	}
}

// utf16LE is s as UTF-16 little-endian bytes.
func utf16LE(s string) []byte {
	var b []byte
	for _, u := range utf16.Encode([]rune(s)) {
		b = append(b, byte(u), byte(u>>8))
	}
	return b
}

// mimeWrap breaks s into lines of 76 characters, as MIME writes base64.
func mimeWrap(s string) string {
	var lines []string
	for len(s) > 76 {
		lines, s = append(lines, s[:76]), s[76:]
	}
	return strings.Join(append(lines, s), "\r\n")
}

// Shapes that look like the new decodings and separators but hide
// nothing stay as they are.
func TestRedactKeepsLookalikes(t *testing.T) {
	for _, s := range []string{
		"page=31&size=20", "a <b>bold</b> word at 2026-11-29 18:49:12.123456789 +0000 UTC",
		"amount=1234.56&currency=BRL", "order 1234567890123456 shipped", "café ñandú 2026",
		"see RFC 4648", "x=A1=B2", base64.StdEncoding.EncodeToString([]byte("nothing to see in this body at all")),
	} {
		assert.Equal(t, s, String(s))
	}
}

// decodeAllForTest undoes the escapes of s over and over (an independent,
// simpler decoder than the one under test), so a test can see what a
// reader could recover from a redacted text.
func decodeAllForTest(s string) string {
	for range 4 {
		s = decodeEscapes(s)
	}
	return s
}

// A base64 body holding a secret field or the number and its CVV becomes
// [REDACTED]; one that holds nothing to hide stays as sent.
func TestRedactBase64Bodies(t *testing.T) {
	b64 := base64.StdEncoding.EncodeToString
	secret := b64([]byte(`{"client_secret":"cs_live_51x","grant_type":"client_credentials"}`))
	body := b64([]byte(`{"card":{"number":"4111111111111111","cvv":"123"}}`))
	clean := b64([]byte(`{"status":"confirmed","amount":"100.00"}`))
	assert.Equal(t, "bad body [REDACTED]", String("bad body "+body))
	assert.Equal(t, "bad body [REDACTED]", String("bad body "+secret))
	assert.Equal(t, "ok "+clean, String("ok "+clean))
}

// The redacting handler and the journal's redaction decode too: an
// encoded card number reaches neither a log line nor a stored row.
func TestRedactEncodedInLogsAndRows(t *testing.T) {
	enc := base64.StdEncoding.EncodeToString([]byte("4111111111111111"))
	pct := eachByte("4111111111111111", "%%%02X")
	var buf strings.Builder
	log := slog.New(NewHandler(slog.NewJSONHandler(&buf, nil)))
	log.Info("declined "+pct, "note", enc, "err", fmt.Errorf("card %s", pct))
	assert.NotContains(t, buf.String(), enc)
	assert.NotContains(t, buf.String(), pct[:12])
	row := string(JSON([]byte(`{"id":"ch_` + enc + `","note":"` + pct + `","digits":[4,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1],` +
		`"groups":["4111","1111","1111","1111"],"ok":[1,2,3]}`)))
	assert.NotContains(t, row, enc)
	assert.NotContains(t, row, pct[:12])
	assert.NotContains(t, row, "1,1,1,1,1")
	assert.NotContains(t, row, `"1111","1111"`)
	assert.Contains(t, row, `"ok":[1,2,3]`)
}

// The work is bounded: a text of many base64 runs costs at most the
// budget, and runs past it are cut rather than shown undecoded.
func TestRedactDecodeBudget(t *testing.T) {
	run := base64.StdEncoding.EncodeToString([]byte("harmless text, no card here"))
	in := strings.Repeat(run+" ", maxCandidateSpans+10)
	out := String(in)
	assert.Contains(t, out, run, "runs within the budget are kept")
	assert.Contains(t, out, redacted, "runs past the budget are cut")
	big := strings.Repeat("QUJDZGVm", 80<<10) // 640 KiB of base64: its decoded bytes are past the budget
	require.NotEqual(t, big, String(big))
}

// fuzzCards are the card numbers the encoding fuzz target hides.
var fuzzCards = []string{"4111111111111111", "5555555555554444", "378282246310005", "6011000990139424", "4222222222222"}

// A card number (grouped or not, with a CVV or not) encoded up to three
// times in any of the encodings the decoder reads, with any text around
// it: the encoded form never survives redaction, in a text or in a JSON
// document.
func FuzzRedactEncoded(f *testing.F) {
	f.Add("declined", "retry", uint8(0), []byte{3})
	f.Add("", "", uint8(1), []byte{0, 3, 8})
	f.Add("card=", "; cvv", uint8(2), []byte{12, 7})
	f.Add(`{"a":"`, `"}`, uint8(3), []byte{17, 4})
	f.Add("x", "y", uint8(4), []byte{5, 5, 5})
	f.Fuzz(func(t *testing.T, prefix, suffix string, shape uint8, layers []byte) {
		card := fuzzCards[int(shape)%len(fuzzCards)]
		switch shape / 8 % 4 {
		case 1:
			card = card[:4] + " " + card[4:8] + " " + card[8:12] + " " + card[12:]
		case 2:
			card = card + " 123"
		case 3:
			card = strings.Join(strings.Split(card, ""), ",")
		}
		enc, prev := card, ""
		for i, l := range layers {
			if i == maxDecodeDepth {
				break
			}
			e := testEncoders[int(l)%len(testEncoders)]
			if !layerAllowed(prev, e.name) {
				continue
			}
			enc, prev = e.enc(enc), e.name
		}
		if strings.Contains(prefix, enc) || strings.Contains(suffix, enc) {
			return
		}
		text := prefix + " " + enc + " " + suffix
		if out := String(text); strings.Contains(out, enc) {
			t.Fatalf("%q survives: %q -> %q", enc, text, out)
		}
		doc, err := json.Marshal(map[string]string{"message": text})
		if err != nil {
			return
		}
		var back map[string]string
		if err := json.Unmarshal(JSON(doc), &back); err != nil {
			t.Fatalf("JSON gave no JSON object: %v", err)
		}
		if strings.Contains(back["message"], enc) {
			t.Fatalf("%q survives in JSON: %q -> %q", enc, text, back["message"])
		}
	})
}

// String masks a card number written as escaped digits, with one
// backslash or more (JSON quoted in JSON), in \u, \U and \x forms, and
// stays idempotent.
func TestRedactStringMasksEscapedDigits(t *testing.T) {
	for _, in := range []string{
		`pan \u0034\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031`,
		`pan \\u0034\\u0031\\u0031\\u0031\\u0031\\u0031\\u0031\\u0031\\u0031\\u0031\\u0031\\u0031\\u0031\\u0031\\u0031\\u0031`,
		`pan \x34\x31\x31\x31\x31\x31\x31\x31\x31\x31\x31\x31\x31\x31\x31\x31`,
		`pan \U00000034\U00000031\U00000031\U00000031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031`,
		`pan 4111\u00311111\u0031111111`,
		`pan \u003\u00304111111111111111`,
	} {
		out := String(in)
		assert.Contains(t, out, "1111", in)
		assert.NotContains(t, out, "41111", in)
		assert.NotRegexp(t, `(\\+(u00|U000000|x)3\d.*){8}`, out, in)
		assert.Equal(t, out, String(out), in)
	}
	assert.Equal(t, `a \u0041 b`, String(`a \u0041 b`), "other escapes stay")
}
