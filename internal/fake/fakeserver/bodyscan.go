package fakeserver

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"sync"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// maxBodyDepth is the deepest nesting the scan accepts, as encoding/json
// does: a deeper body is not JSON for the fingerprint, and the handler
// refuses it as malformed.
const maxBodyDepth = 10000

var errNotJSON = errors.New("not one JSON value")

// bodyScan is what one pass over a request body learns: the canonical
// form the fingerprint hashes and whether an object holds a key twice.
// canonical may live in a pooled scanner's buffer: release hands it back,
// after which canonical must not be read.
type bodyScan struct {
	canonical []byte
	dupKey    bool
	sc        *scanner // the scanner whose buffers hold canonical, or nil
}

// maxPooledScan is the largest buffer a scanner keeps for the next body:
// a rare large body leaves no large buffer behind.
const maxPooledScan = 64 << 10

// maxPooledMembers is the longest member stack a pooled scanner keeps.
const maxPooledMembers = 1024

var scanners = sync.Pool{New: func() any { return new(scanner) }}

// release returns the scan's buffers to the pool; the scan must not be
// used after it.
func (s *bodyScan) release() {
	sc := s.sc
	if sc == nil {
		return
	}
	s.sc, s.canonical = nil, nil
	if cap(sc.out) > maxPooledScan || cap(sc.tmp) > maxPooledScan || cap(sc.esc) > maxPooledScan || cap(sc.hash) > maxPooledScan ||
		cap(sc.members) > maxPooledMembers {
		return
	}
	// A body holds card numbers: none stays in a pooled buffer, and no
	// member left by a body that stopped being JSON points into it.
	for _, b := range [...][]byte{sc.out, sc.tmp, sc.esc, sc.hash} {
		clear(b[:cap(b)])
	}
	clear(sc.members[:cap(sc.members)])
	*sc = scanner{members: sc.members[:0], out: sc.out[:0], tmp: sc.tmp[:0], esc: sc.esc[:0], hash: sc.hash[:0]}
	scanners.Put(sc)
}

// scanBody reads body once, in place of decoding it into interface values
// twice (once for duplicate keys, once for the canonical form).
//
// The canonical form: "empty:" for a body of only white space; "raw:" and
// the body as sent for one that is not valid UTF-8 or not exactly one JSON
// value; otherwise "json:" and a binary encoding of the value with object
// members sorted by their decoded keys (the last of two identical keys
// wins, as for a Go map), strings decoded (a lone surrogate escape reads
// as U+FFFD) and numbers as written. Two bodies get one form exactly when
// encoding/json with UseNumber decodes them to equal values.
//
// dupKey: the body is JSON and an object holds two keys equal after
// escapes are decoded, compared case-insensitively (Unicode simple
// folding, as encoding/json matches struct fields).
func scanBody(body []byte) bodyScan {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return bodyScan{canonical: []byte("empty:")}
	}
	if !utf8.Valid(body) {
		// Not JSON text, but encoding/json reads it, each bad byte as
		// U+FFFD: its keys are compared as the handler would see them.
		inner := scanBody(eachBadByteReplaced(body))
		inner.release()
		return bodyScan{canonical: rawCanonical(body), dupKey: inner.dupKey}
	}
	p := scanners.Get().(*scanner)
	p.b = trimmed
	out, err := p.value(append(p.out[:0], "json:"...), 0)
	p.out = out
	if err == nil {
		p.space()
	}
	if err != nil || p.i != len(p.b) {
		scan := bodyScan{sc: p}
		scan.release()
		return bodyScan{canonical: rawCanonical(body)}
	}
	// A body that only Unicode white space (not JSON's) around it made
	// one JSON value is no JSON for the handler: it has no duplicate key.
	dup := p.dup && len(bytes.Trim(body, " \t\r\n")) == len(trimmed)
	return bodyScan{canonical: out, dupKey: dup, sc: p}
}

// rawCanonical is the canonical form of a body that is not one JSON value.
func rawCanonical(body []byte) []byte {
	return append(append(make([]byte, 0, len(body)+4), "raw:"...), body...)
}

// scanner reads one body. Its buffers are reused from body to body: out
// holds the canonical form, built in place (an object's or an array's
// members are written where they are read, then rewritten in order
// through tmp), members is the stack of the members of the objects being
// read, esc holds the decoded keys and strings that had escapes (only
// appended to during a scan, so a key read earlier stays valid).
type scanner struct {
	b       []byte
	i       int
	dup     bool
	members []member
	out     []byte
	tmp     []byte
	esc     []byte
	hash    []byte // what fingerprint hashes
}

func (p *scanner) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\r', '\n':
			p.i++
		default:
			return
		}
	}
}

// value appends the canonical form of the value at p.i to out.
func (p *scanner) value(out []byte, depth int) ([]byte, error) {
	p.space()
	if p.i >= len(p.b) {
		return out, errNotJSON
	}
	switch c := p.b[p.i]; {
	case c == '{':
		return p.object(out, depth+1)
	case c == '[':
		return p.array(out, depth+1)
	case c == '"':
		s, err := p.str()
		if err != nil {
			return out, err
		}
		return appendTagged(out, 's', s), nil
	case c == '-' || (c >= '0' && c <= '9'):
		start := p.i
		if err := p.number(); err != nil {
			return out, err
		}
		return appendTagged(out, 'n', p.b[start:p.i]), nil
	}
	for _, lit := range [...]struct {
		text string
		tag  byte
	}{{"true", 't'}, {"false", 'f'}, {"null", 'z'}} {
		if bytes.HasPrefix(p.b[p.i:], []byte(lit.text)) {
			p.i += len(lit.text)
			return append(out, lit.tag), nil
		}
	}
	return out, errNotJSON
}

func appendTagged(out []byte, tag byte, s []byte) []byte {
	out = append(out, tag)
	out = binary.AppendUvarint(out, uint64(len(s)))
	return append(out, s...)
}

type member struct {
	key      []byte // decoded: a slice of the body or of the scanner's esc
	from, to int    // its value's canonical form in out
}

func (p *scanner) object(out []byte, depth int) ([]byte, error) {
	if depth > maxBodyDepth {
		return out, errNotJSON
	}
	p.i++ // {
	p.space()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		return append(out, 'o', 0), nil
	}
	start, base := len(out), len(p.members)
	for {
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != '"' {
			return out, errNotJSON
		}
		k, err := p.str()
		if err != nil {
			return out, err
		}
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return out, errNotJSON
		}
		p.i++
		from := len(out)
		if out, err = p.value(out, depth); err != nil {
			return out, err
		}
		p.members = append(p.members, member{key: k, from: from, to: len(out)})
		more, err := p.separator('}')
		if err != nil {
			return out, err
		}
		if !more {
			break
		}
	}
	members := p.members[base:]
	if !p.dup {
		p.dup = foldDuplicate(members)
	}
	// Sorted by key, identical keys in the order read: the last of them
	// is the one kept.
	slices.SortStableFunc(members, func(a, b member) int { return bytes.Compare(a.key, b.key) })
	kept := 0
	for j := range members {
		if j+1 == len(members) || !bytes.Equal(members[j].key, members[j+1].key) {
			kept++
		}
	}
	tmp := append(p.tmp[:0], 'o')
	tmp = binary.AppendUvarint(tmp, uint64(kept))
	for j, m := range members {
		if j+1 == len(members) || !bytes.Equal(m.key, members[j+1].key) {
			tmp = appendTagged(tmp, 's', m.key)
			tmp = append(tmp, out[m.from:m.to]...)
		}
	}
	p.tmp = tmp
	clear(members) // no key of this body stays reachable from the pool
	p.members = p.members[:base]
	return append(out[:start], tmp...), nil
}

// foldDuplicate reports whether two of the keys are equal under Unicode
// simple case folding.
func foldDuplicate(members []member) bool {
	if len(members) <= 16 {
		for i := range members {
			for j := i + 1; j < len(members); j++ {
				if bytes.EqualFold(members[i].key, members[j].key) {
					return true
				}
			}
		}
		return false
	}
	seen := make(map[string]struct{}, len(members))
	for _, m := range members {
		k := foldKey(string(m.key))
		if _, dup := seen[k]; dup {
			return true
		}
		seen[k] = struct{}{}
	}
	return false
}

func (p *scanner) array(out []byte, depth int) ([]byte, error) {
	if depth > maxBodyDepth {
		return out, errNotJSON
	}
	p.i++ // [
	p.space()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		return append(out, 'a', 0), nil
	}
	start := len(out)
	n := 0
	for {
		var err error
		if out, err = p.value(out, depth); err != nil {
			return out, err
		}
		n++
		more, err := p.separator(']')
		if err != nil {
			return out, err
		}
		if !more {
			break
		}
	}
	tmp := append(p.tmp[:0], 'a')
	tmp = binary.AppendUvarint(tmp, uint64(n))
	tmp = append(tmp, out[start:]...)
	p.tmp = tmp
	return append(out[:start], tmp...), nil
}

// separator moves past the ',' or the closing end that follows a member
// or an element; more is true after a ','.
func (p *scanner) separator(end byte) (more bool, err error) {
	p.space()
	if p.i >= len(p.b) {
		return false, errNotJSON
	}
	switch p.b[p.i] {
	case ',':
		p.i++
		return true, nil
	case end:
		p.i++
		return false, nil
	}
	return false, errNotJSON
}

// number checks a JSON number at p.i and moves past it.
func (p *scanner) number() error {
	b, i := p.b, p.i
	digits := func() int {
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i - start
	}
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case digits() == 0:
		return errNotJSON
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return errNotJSON
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return errNotJSON
		}
	}
	p.i = i
	return nil
}

// str reads the JSON string at p.i and returns it decoded: a slice of the
// body when it has no escape, else of esc. The body is valid UTF-8, so
// unescaped bytes are copied as they are.
func (p *scanner) str() ([]byte, error) {
	b := p.b
	i := p.i + 1
	start := i
	for i < len(b) && b[i] != '"' && b[i] != '\\' && b[i] >= 0x20 {
		i++
	}
	if i < len(b) && b[i] == '"' {
		p.i = i + 1
		return b[start:i], nil // no escape: the bytes themselves
	}
	// Decoded at the end of esc, which only grows during a scan: a key
	// decoded earlier is never overwritten.
	mark := len(p.esc)
	out := append(p.esc, b[start:i]...)
	for i < len(b) {
		c := b[i]
		switch {
		case c == '"':
			p.i = i + 1
			p.esc = out
			return out[mark:len(out):len(out)], nil
		case c < 0x20:
			return nil, errNotJSON
		case c != '\\':
			out = append(out, c)
			i++
			continue
		}
		if i+1 >= len(b) {
			return nil, errNotJSON
		}
		switch b[i+1] {
		case '"', '\\', '/':
			out = append(out, b[i+1])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(b, i+2)
			if !ok {
				return nil, errNotJSON
			}
			i += 6
			if utf16.IsSurrogate(r) {
				// As encoding/json: a valid pair is one rune, anything
				// else makes this escape U+FFFD and leaves the next.
				if r2, ok := hex4(b, i+2); ok && i+1 < len(b) && b[i] == '\\' && b[i+1] == 'u' {
					if dec := utf16.DecodeRune(r, r2); dec != unicode.ReplacementChar {
						out = utf8.AppendRune(out, dec)
						i += 6
						continue
					}
				}
				r = unicode.ReplacementChar
			}
			out = utf8.AppendRune(out, r)
			continue
		default:
			return nil, errNotJSON
		}
		i += 2
	}
	return nil, errNotJSON
}

// hex4 reads four hex digits at b[i:].
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r*16 + rune(c)
	}
	return r, true
}

// eachBadByteReplaced is body with each byte that is not part of a valid
// UTF-8 sequence replaced by U+FFFD, one for one, as encoding/json reads
// a string (bytes.ToValidUTF8 would make a run of bad bytes one U+FFFD,
// and "\xc2\xc2" the same key as "\xaa").
func eachBadByteReplaced(body []byte) []byte {
	out := make([]byte, 0, len(body)+8)
	for len(body) > 0 {
		r, n := utf8.DecodeRune(body)
		if r == utf8.RuneError && n == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, body[:n]...)
		}
		body = body[n:]
	}
	return out
}
