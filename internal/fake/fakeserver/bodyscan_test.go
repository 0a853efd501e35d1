package fakeserver

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// decodedCanonical is the fingerprint's reference: the body decoded by
// encoding/json (UseNumber) and encoded again, keys sorted. scanBody must
// put two bodies in one class exactly when this does.
func decodedCanonical(body []byte) string {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return "empty:"
	}
	if !utf8.Valid(body) {
		return "raw:" + string(body)
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.UseNumber()
	var v any
	// Anything after the value, even a lone '}' that dec.More would not
	// report, makes the body not JSON.
	if err := dec.Decode(&v); err != nil || dec.InputOffset() != int64(len(trimmed)) {
		return "raw:" + string(body)
	}
	out, err := json.Marshal(v)
	if err != nil {
		return "raw:" + string(body)
	}
	return "json:" + string(out)
}

// tokenDuplicateKey is the duplicate-key reference: a walk of
// encoding/json's tokens, keys folded by foldKey.
func tokenDuplicateKey(body []byte) bool {
	if len(bytes.TrimSpace(body)) == 0 || !json.Valid(body) {
		return false
	}
	type frame struct {
		object, expectKey bool
		seen              map[string]bool
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
		if err == io.EOF || err != nil {
			return false
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				stack = append(stack, frame{object: true, expectKey: true, seen: map[string]bool{}})
			case '[':
				stack = append(stack, frame{})
			default:
				stack = stack[:len(stack)-1]
				valueDone()
			}
		case string:
			if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].expectKey {
				k := foldKey(t)
				if stack[n-1].seen[k] {
					return true
				}
				stack[n-1].seen[k], stack[n-1].expectKey = true, false
				continue
			}
			valueDone()
		default:
			valueDone()
		}
	}
}

var bodyScanSeeds = []string{
	``, ` `, "\u00a0{}", `{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `1.5e+3`, `1E2`, `01`, `1.`, `-`, `.5`,
	`"a"`, `"\u00e9"`, `"é"`, `"\ud83d\ude00"`, `"😀"`, `"\ud800"`, `"\ufffd"`, `"\ud800\u0041"`, `"\/\b\f\n\r\t\"\\"`,
	`"\x"`, "\"a\tb\"", `{"a":1,"b":2}`, `{"b":2,"a":1}`, ` { "a" : [ 1 , 2 ] } `, `{"a":1,"a":2}`, `{"a":2}`,
	`{"Amount":1,"amount":2}`, "{\"\u212a\":1,\"k\":2}", `{"a\u0062":1,"ab":2}`, `{"a":1}x`, `{"a":1}{}`, `{"a":1`,
	`[1,2,]`, `{"a":1,}`, `{,}`, `[{"x":1},{"X":2}]`, `{"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"K1":17}`,
	"\xff", `{"amount":"100.00","currency":"BRL","payer":{"name":"张伟"}}`, strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001), `nul`, `tru`, `[true,false,null]`, "{\"a\":\"\\u0000\"}",
}

// FuzzScanBody checks scanBody against encoding/json: the same
// duplicate keys, and the same payload classes for two bodies, or for a
// body and its re-encoding.
func FuzzScanBody(f *testing.F) {
	for i, s := range bodyScanSeeds {
		f.Add(s, bodyScanSeeds[(i+1)%len(bodyScanSeeds)])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		sa, sb := scanBody([]byte(a)), scanBody([]byte(b))
		require.Equal(t, tokenDuplicateKey([]byte(a)), sa.dupKey, "duplicate key of %q", a)
		ra, rb := decodedCanonical([]byte(a)), decodedCanonical([]byte(b))
		require.Equal(t, ra == rb, bytes.Equal(sa.canonical, sb.canonical), "%q and %q", a, b)
		if rest, ok := strings.CutPrefix(ra, "json:"); ok {
			require.Equal(t, sa.canonical, scanBody([]byte(rest)).canonical, "%q and its re-encoding %q", a, rest)
		}
	})
}

func TestScanBodyClasses(t *testing.T) {
	same := [][2]string{
		{`{"a":1,"b":[1,2]}`, " {\"b\" : [1,2],\n\"a\":1} "},
		{`{"a":"é"}`, `{"a":"\u00e9"}`},
		{`{"a":1,"a":2}`, `{"a":2}`},
		{`"\ud800"`, `"\ufffd"`},
	}
	for _, p := range same {
		assert.Equal(t, scanBody([]byte(p[0])).canonical, scanBody([]byte(p[1])).canonical, p)
	}
	other := [][2]string{{`{"a":1}`, `{"a":1.0}`}, {`{"a":"1"}`, `{"a":1}`}, {`[1,2]`, `[2,1]`}, {`{"a":1}x`, `{"a":1}`}, {`{"A":1}`, `{"a":1}`}}
	for _, p := range other {
		assert.NotEqual(t, scanBody([]byte(p[0])).canonical, scanBody([]byte(p[1])).canonical, p)
	}
}

// A scanner goes back to the pool holding nothing of the body it read,
// even when the body stopped being JSON halfway through an object: no
// card number in its buffers, no key still pointing into the body.
func TestReleasedScannerKeepsNothingOfTheBody(t *testing.T) {
	for _, body := range []string{
		`{"card":{"number":"4111111111111111","cvv":"123"},"amount":"1.00"}`,
		`{"card":{"number":"4111111111111111","cvv":"123","holder":`,
		`{"a\u0041":{"number":"4111111111111111", "x" "y"}}`,
	} {
		p := &scanner{b: []byte(body)}
		_, _ = p.value(nil, 0)
		scan := bodyScan{sc: p}
		scan.release()
		for _, m := range p.members[:cap(p.members)] {
			assert.Nil(t, m.key, "%s: a member still points into the body", body)
		}
		for _, b := range [][]byte{p.out, p.tmp, p.esc, p.hash} {
			assert.NotContains(t, string(b[:cap(b)]), "4111", body)
			assert.Empty(t, strings.Trim(string(b[:cap(b)]), "\x00"), body)
		}
		assert.Nil(t, p.b, body)
	}
}
