package fakeserver

import (
	"bytes"
	"encoding/json"
	"io"
	"unicode"
	"unicode/utf8"
)

// maxDupKeyDepth is the deepest nesting duplicateKey walks: encoding/json
// refuses a deeper body anyway, so the handler answers it as malformed.
const maxDupKeyDepth = 10000

// duplicateKey reports whether body is JSON holding an object with the
// same key twice, compared as Go's decoding compares them: after escapes
// are decoded and case-insensitively (Unicode simple folding, so "Amount"
// and "amount", or KELVIN SIGN and "k", are one key). Go keeps the last
// of such keys while the fingerprint sorts them, so such a body could be
// one payload for the fingerprint and another for the handler. A body that
// is not JSON is not reported (the handler refuses it).
func duplicateKey(body []byte) bool {
	if len(bytes.TrimSpace(body)) == 0 || !json.Valid(body) {
		return false
	}
	type frame struct {
		object    bool
		expectKey bool
		seen      map[string]struct{}
	}
	var stack []frame
	valueDone := func() {
		if n := len(stack); n > 0 && stack[n-1].object {
			stack[n-1].expectKey = true
		}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return false
		}
		if err != nil || len(stack) > maxDupKeyDepth {
			return false
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				stack = append(stack, frame{object: true, expectKey: true})
			case '[':
				stack = append(stack, frame{})
			default:
				stack = stack[:len(stack)-1]
				valueDone()
			}
		case string:
			if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].expectKey {
				top := &stack[n-1]
				k := foldKey(t)
				if _, dup := top.seen[k]; dup {
					return true
				}
				if top.seen == nil {
					top.seen = map[string]struct{}{}
				}
				top.seen[k] = struct{}{}
				top.expectKey = false
				continue
			}
			valueDone()
		default:
			valueDone()
		}
	}
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
