package fakeserver

import (
	"unicode"
	"unicode/utf8"
)

// duplicateKey reports whether body is JSON holding an object with the
// same key twice, compared as Go's decoding compares them: after escapes
// are decoded and case-insensitively (Unicode simple folding, so "Amount"
// and "amount", or KELVIN SIGN and "k", are one key). Go keeps the last
// of such keys while the fingerprint sorts them, so such a body could be
// one payload for the fingerprint and another for the handler. A body that
// is not JSON is not reported (the handler refuses it).
func duplicateKey(body []byte) bool {
	scan := scanBody(body)
	defer scan.release()
	return scan.dupKey
}

// foldKey maps s to one representative of its case-folding class: each
// rune becomes the smallest rune of its unicode.SimpleFold orbit, so two
// keys that strings.EqualFold (and encoding/json) match fold alike.
func foldKey(s string) string {
	b := make([]byte, 0, len(s))
	for _, r := range s {
		m := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			m = min(m, f)
		}
		b = utf8.AppendRune(b, m)
	}
	return string(b)
}
