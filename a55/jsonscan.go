package a55

import (
	"unicode/utf8"
)

// jsonScan walks a JSON document for the fast decoders (decodeCharge):
// it accepts only what encoding/json accepts, and reports anything it
// does not handle itself as not ok, leaving the document to
// encoding/json, which then decodes it or says what is wrong.
type jsonScan struct {
	b []byte
	i int
}

// maxScanDepth bounds the nesting the scanner follows; deeper documents
// are left to encoding/json.
const maxScanDepth = 64

func (s *jsonScan) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// byte consumes c after whitespace.
func (s *jsonScan) byte(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// plainString reads a string without escapes, control characters or
// invalid UTF-8, and returns its contents; ok is false for any other
// string (which encoding/json then reads).
func (s *jsonScan) plainString() (str []byte, ok bool) {
	if !s.byte('"') {
		return nil, false
	}
	start, ascii := s.i, true
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			str = s.b[start:s.i]
			s.i++
			if !ascii && !utf8.Valid(str) {
				return nil, false
			}
			return str, true
		case c == '\\' || c < 0x20:
			return nil, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
		s.i++
	}
	return nil, false
}

// value skips one value and returns its bytes; ok is false for a value
// that is not valid JSON, or one the scanner leaves to encoding/json (an
// escaped or non-UTF-8 string, a deep nesting).
func (s *jsonScan) value(depth int) (v []byte, ok bool) {
	if depth > maxScanDepth {
		return nil, false
	}
	s.ws()
	start := s.i
	if s.i >= len(s.b) {
		return nil, false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		if _, ok := s.plainString(); !ok {
			return nil, false
		}
	case c == '{':
		s.i++
		if !s.byte('}') {
			for {
				if _, ok := s.plainString(); !ok || !s.byte(':') {
					return nil, false
				}
				if _, ok := s.value(depth + 1); !ok {
					return nil, false
				}
				if s.byte('}') {
					break
				}
				if !s.byte(',') {
					return nil, false
				}
			}
		}
	case c == '[':
		s.i++
		if !s.byte(']') {
			for {
				if _, ok := s.value(depth + 1); !ok {
					return nil, false
				}
				if s.byte(']') {
					break
				}
				if !s.byte(',') {
					return nil, false
				}
			}
		}
	case c == 't':
		return s.literal(start, "true")
	case c == 'f':
		return s.literal(start, "false")
	case c == 'n':
		return s.literal(start, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		if !s.number() {
			return nil, false
		}
	default:
		return nil, false
	}
	return s.b[start:s.i], true
}

func (s *jsonScan) literal(start int, lit string) ([]byte, bool) {
	if len(s.b)-s.i < len(lit) || string(s.b[s.i:s.i+len(lit)]) != lit {
		return nil, false
	}
	s.i += len(lit)
	return s.b[start:s.i], true
}

// number reads a number by JSON's grammar.
func (s *jsonScan) number() bool {
	b, i := s.b, s.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			return false
		}
	}
	s.i = i
	return true
}

// end reports whether only whitespace is left.
func (s *jsonScan) end() bool {
	s.ws()
	return s.i == len(s.b)
}

// foldsTo reports whether key, ASCII, equals name without regard to case:
// encoding/json would read it into name's field.
func foldsTo(key []byte, name string) bool {
	if len(key) != len(name) {
		return false
	}
	for i := range len(key) {
		a, b := key[i], name[i]
		if 'A' <= a && a <= 'Z' {
			a += 'a' - 'A'
		}
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		if a != b {
			return false
		}
	}
	return true
}
