package jsonmember

import (
	"bytes"
	"encoding/json"
)

// Last returns the value of the last member of the JSON object in
// body whose name is name as encoding/json matches a struct field's name
// (exactly, else case-insensitively: for a name of ASCII letters without
// i, k or s only ASCII letters fold onto it), and how many members
// matched. body must be valid JSON; isObject is false when it is not an
// object.
func Last(body []byte, name string) (val []byte, n int, isObject bool) {
	i := skipSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return nil, 0, false
	}
	for i++; ; {
		i = skipSpace(body, i)
		if i >= len(body) {
			return nil, 0, false
		}
		switch body[i] {
		case '}':
			return val, n, true
		case ',':
			i++
			continue
		case '"':
		default:
			return nil, 0, false
		}
		ks := i
		if i = skipString(body, i); i < 0 {
			return nil, 0, false
		}
		key := body[ks:i]
		if i = skipSpace(body, i); i >= len(body) || body[i] != ':' {
			return nil, 0, false
		}
		vs := skipSpace(body, i+1)
		if i = skipValue(body, vs); i < 0 {
			return nil, 0, false
		}
		if nameMatches(key, name) {
			val, n = body[vs:i], n+1
		}
	}
}

// nameMatches reports whether the quoted JSON string key, unescaped, is
// name (lowercase ASCII letters) under ASCII case folding.
func nameMatches(key []byte, name string) bool {
	s := key[1 : len(key)-1]
	if bytes.IndexByte(s, '\\') >= 0 {
		var u string
		if json.Unmarshal(key, &u) != nil {
			return false
		}
		s = []byte(u)
	}
	if len(s) != len(name) {
		return false
	}
	for i, c := range s {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != name[i] {
			return false
		}
	}
	return true
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] ('"'),
// -1 if it does not end.
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// skipValue returns the index after the JSON value starting at b[i], -1
// if it does not end.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				if i = skipString(b, i); i < 0 {
					return -1
				}
				i--
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return -1
	}
	for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\t' && b[i] != '\n' && b[i] != '\r' {
		i++
	}
	return i
}

// MayRepeat reports whether the JSON text body may hold more than one
// member named name (lowercase ASCII letters) as Last matches names: true
// unless it is certain that it does not, which it is when body holds no
// escape and at most one string that is name in any case. It reads body
// faster than Last walks it.
func MayRepeat(body []byte, name string) bool {
	if bytes.IndexByte(body, '\\') >= 0 {
		return true
	}
	n := 0
	for i := 0; ; {
		j := bytes.IndexByte(body[i:], '"')
		if j < 0 {
			return false
		}
		i += j + 1
		if len(body)-i > len(name) && body[i+len(name)] == '"' && nameMatches(body[i-1:i+len(name)+1], name) {
			if n++; n > 1 {
				return true
			}
		}
	}
}
