package redact

import (
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Fields is what a provider's codec knows of the fields of its answers:
// which are identifiers (a card's, a charge's, a request's) and which hold
// card data (a card number, a CVV). JSONWith keeps an identifier as the
// provider sent it, digits and all: an ID of 13 to 19 digits passes the
// Luhn check about one time in ten, and masking it would lose the
// resource. It always masks card data, Luhn or not. A field it does not
// know goes through the pattern rules of JSON. Names are matched at any
// depth and as encoding/json matches them to a struct's tags, without
// regard to case. A nil *Fields knows no field.
type Fields struct {
	kinds map[string]fieldKind // by foldName
}

// fieldKind is what a Fields knows of a field.
type fieldKind uint8

const (
	unknownField fieldKind = iota
	identifier
	cardDataField
)

// NewFields returns the Fields naming identifiers and cardData. A name in
// both lists is card data.
func NewFields(identifiers, cardData []string) *Fields {
	f := &Fields{kinds: make(map[string]fieldKind, len(identifiers)+len(cardData))}
	for _, n := range identifiers {
		f.kinds[foldName(n)] = identifier
	}
	for _, n := range cardData {
		f.kinds[foldName(n)] = cardDataField
	}
	return f
}

// kind is what f knows of the field named k.
func (f *Fields) kind(k string) fieldKind {
	if f == nil || len(f.kinds) == 0 {
		return unknownField
	}
	var buf [64]byte
	if b, ok := appendFoldedASCII(buf[:0], k); ok {
		return f.kinds[string(b)] // no allocation: the conversion is only a map key
	}
	return f.kinds[foldName(k)]
}

// foldName folds a field name as encoding/json does to match it to a
// struct tag: ASCII letters upper-cased, any other rune to
// unicode.ToUpper(unicode.ToLower(r)).
func foldName(k string) string {
	var b strings.Builder
	for _, r := range k {
		if r < utf8.RuneSelf {
			if 'a' <= r && r <= 'z' {
				r -= 'a' - 'A'
			}
			b.WriteByte(byte(r))
			continue
		}
		b.WriteRune(unicode.ToUpper(unicode.ToLower(r)))
	}
	return b.String()
}

// appendFoldedASCII appends foldName(k) to b when k is ASCII; ok is false
// otherwise.
func appendFoldedASCII(b []byte, k string) ([]byte, bool) {
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c >= utf8.RuneSelf {
			return b, false
		}
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		b = append(b, c)
	}
	return b, true
}

// JSONWith is JSON, knowing the fields f names (see Fields).
func JSONWith(b []byte, f *Fields) []byte {
	var r *Redactor
	return r.JSONWith(b, f)
}

// Identifier is an identifier's value as a journal row stores it (the
// fields a codec names identifiers, redact.Fields): as sent, but for r's
// secrets and any secret, token or credential written in it. Its digits
// are kept, whatever they spell.
func (r *Redactor) Identifier(s string) string { return r.identifier(s) }

// identifier is Identifier.
func (r *Redactor) identifier(s string) string {
	s = r.cutSecrets(s)
	if !mayNeedRedaction(s) || canonicalUUID(s) {
		return s
	}
	return r.redactAt(s, 0, newDecodeBudget(), true)
}

// maskCardField is the stored value of a card data field named k: a
// secret's name (a CVV) becomes [REDACTED], any other text
// maskCardText; a number, an object or an array becomes null; null and
// booleans hold no card data.
func maskCardField(k string, v any) any {
	switch x := v.(type) {
	case nil, bool:
		return v
	case string:
		if x == "" {
			return x
		}
		if secretField(k) {
			return redacted
		}
		return maskCardText(x)
	}
	return nil
}

// maskCardText masks a card number however it is written: when it holds
// more than four digits, every rune but the last four digits, spaces and
// hyphens becomes '*' ("4111 1111 1111 1111" is "**** **** **** 1111");
// a value already masked that way is kept; anything else (a CVV, a word)
// is [REDACTED].
func maskCardText(s string) string {
	digits, stars, other := 0, 0, false
	for _, r := range s {
		switch {
		case digitValue(r) >= 0:
			digits++
		case r == '*':
			stars++
		case r != ' ' && r != '-':
			other = true
		}
	}
	if digits <= 4 {
		if !other && stars >= 4 {
			return s
		}
		return redacted
	}
	var b strings.Builder
	b.Grow(len(s))
	seen := 0
	for _, r := range s {
		switch {
		case digitValue(r) >= 0:
			if seen++; seen > digits-4 {
				b.WriteRune(r)
			} else {
				b.WriteByte('*')
			}
		case r == ' ' || r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('*')
		}
	}
	return b.String()
}

// knownField applies f's knowledge of the field k holding v: the value
// to store and true, or false when the pattern rules decide.
func (r *Redactor) knownField(f *Fields, k string, v any) (any, bool) {
	switch f.kind(k) {
	case cardDataField:
		return maskCardField(k, v), true
	case identifier:
		switch x := v.(type) {
		case string:
			return r.identifier(x), true
		case json.Number:
			return x, true // an integer ID: a number holds no secret
		}
	}
	return nil, false
}
