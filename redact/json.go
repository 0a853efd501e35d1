package redact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"strings"

	"github.com/payonce/payonce/internal/luhn"
)

// JSON returns a redacted copy of a JSON document, for storage: the
// values of secret fields (cvv, cvc, security code, pin, token, secret, api key,
// password, authorization, signature, credentials) become "[REDACTED]" (null when not a
// string); card numbers, in any field and with or without separators, keep
// only their last four digits; integers of 13 to 19 digits that pass the
// Luhn check become null; every other string passes through String.
// Object names are redacted like string values (a server may key an object
// by card number). A body that is not JSON is stored as a JSON string of its redacted text.
func JSON(b []byte) []byte {
	var r *Redactor
	return r.JSON(b)
}

// JSON is JSON, cutting r's secrets too.
func (r *Redactor) JSON(b []byte) []byte { return r.JSONWith(b, nil) }

// JSONWith is JSONWith, cutting r's secrets too.
func (r *Redactor) JSONWith(b []byte, f *Fields) []byte {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		out, _ := json.Marshal(r.Stored(string(b)))
		return out
	}
	out, err := json.Marshal(r.redactValue(v, f))
	if err != nil {
		return []byte("null")
	}
	return out
}

// secretField reports whether a JSON field name marks a secret; the name
// is compared without case, underscores or hyphens.
func secretField(k string) bool {
	n := normalizeField(k)
	switch n {
	case "cvv", "cvv2", "cvc", "cvc2", "cid", "securitycode", "cardsecuritycode", "pin",
		"token", "accesstoken", "refreshtoken", "idtoken", "cardtoken", "bearer",
		"secret", "clientsecret", "apisecret", "password", "authorization",
		"signature", "xsignature", "privatekey", "apikeysecret",
		"credentials": // a provider's answer handing out an OAuth client (an A55 wallet's)
		return true
	}
	// A prefixed or suffixed CVV, security code or PIN ("card_cvv",
	// "cardCvc", "cvv_code", "card_pin") is as secret as the bare name.
	return strings.HasSuffix(n, "secret") || strings.HasSuffix(n, "password") || strings.HasSuffix(n, "token") ||
		strings.Contains(n, "cvv") || strings.Contains(n, "cvc") || strings.HasSuffix(n, "securitycode") || strings.HasSuffix(n, "cardpin") ||
		strings.HasSuffix(n, "apikey") // as String and the log handler treat it
}

// normalizeField lower-cases a field name and drops '_' and '-'.
func normalizeField(k string) string {
	b := make([]byte, 0, len(k))
	for i := 0; i < len(k); i++ {
		c := k[i]
		switch {
		case c == '_' || c == '-':
			continue
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		}
		b = append(b, c)
	}
	return string(b)
}

// identifierField reports whether a JSON field name marks a resource
// identifier (id, card_id, charge_uuid, requestId): its value is kept
// verbatim unless it is itself a card number, since hex IDs often hold
// long runs of decimal digits that are not card numbers.
func identifierField(k string) bool {
	suffix := func(sfx string) bool {
		return len(k) >= len(sfx) && strings.EqualFold(k[len(k)-len(sfx):], sfx)
	}
	return strings.EqualFold(k, "id") || suffix("_id") || suffix("-id") || suffix("uuid") ||
		strings.HasSuffix(k, "Id") || strings.HasSuffix(k, "ID")
}

// wholeCardNumber reports whether s, without spaces and hyphens, is 12 to
// 19 digits: a card number whatever field holds it.
func wholeCardNumber(s string) bool {
	n := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			n++
		case c != ' ' && c != '-':
			return false
		}
	}
	return n >= 12 && n <= 19
}

// hexLetter reports whether c is a hex digit that is not decimal.
func hexLetter(c byte) bool { return c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// canonicalUUID reports whether s is a UUID in its canonical form
// (8-4-4-4-12 hex digits). Its groups hold at most 12 digits in a row, so
// no card number is written in it; the digits of its groups read across
// the hyphens often make a Luhn-valid run, which must not mask the ID.
func canonicalUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return false
			}
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f', c >= 'A' && c <= 'F':
		default:
			return false
		}
	}
	return true
}

// plainIdentifier reports whether s, the value of an identifier field,
// can be stored as is: it holds no card number (in clear or escaped), no
// secret value, JSON Web Token, URL credentials or query string. A hex ID
// is plain; "ch_1?access_token=…" or "cvv=987" is not, and is redacted
// like any other string.
func (r *Redactor) plainIdentifier(s string) bool {
	return !wholeCardNumber(s) && !holdsCardNumber(s) && !storedSecret.MatchString(s) &&
		r.redactAt(s, 0, newDecodeBudget(), true) == s
}

// holdsCardNumber reports whether s contains a run of 13 to 19 digits
// (single spaces or hyphens allowed after groups of 4 or 6) that passes the Luhn
// check: a card number glued into an identifier ("card_4111111111111111")
// is never stored, while the shorter or non-Luhn digit runs of ordinary hex
// IDs are kept.
func holdsCardNumber(s string) bool {
	digits := make([]byte, 0, 19)
	group := 0       // digits since the last separator
	grouped := false // the run crossed a separator
	start := -1      // where the run began
	for i := 0; i <= len(s); i++ {
		if i < len(s) {
			c := s[i]
			if c >= '0' && c <= '9' {
				if len(digits) == 0 {
					start = i
				}
				digits = append(digits, c)
				group++
				continue
			}
			// A separator joins groups as a card is written (4111 1111 …,
			// 3782-822463-10005): after a group of 4 or 6 digits. Other
			// groups, such as a UUID's digits glued to its hex letters
			// (4ed1-9573-71482498dcfd), end the run.
			if (c == ' ' || c == '-') && (group == 4 || group == 6) && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9' {
				group, grouped = 0, true
				continue
			}
		}
		group = 0
		before, after := start > 0 && hexLetter(s[start-1]), i < len(s) && hexLetter(s[i])
		if len(digits) > 0 && (before && after || !grouped && (before || after)) {
			// Digits glued to hex letters (card_60fc99c4830198454379ff58,
			// or on one side only, card_830186349586224382650c29) are
			// part of a hex number, not a card number, however long their
			// run: an ID's random hex holds runs of 13 digits and more
			// often enough. Digits written in groups are only when hex
			// letters stand on both sides.
			digits, grouped = digits[:0], false
			continue
		}
		if n := len(digits); n >= 13 && n <= 19 && luhn.Valid(string(digits)) {
			return true
		} else if n > 19 {
			// a longer run may still hide a card number at any offset
			for j := 0; j+13 <= n; j++ {
				for l := 13; l <= 19 && j+l <= n; l++ {
					if luhn.Valid(string(digits[j : j+l])) {
						return true
					}
				}
			}
		}
		digits, grouped = digits[:0], false
	}
	return false
}

func (r *Redactor) redactValue(v any, f *Fields) any {
	switch t := v.(type) {
	case map[string]any:
		var renamed []string
		for k, val := range t {
			if nk := r.Stored(k); nk != k {
				renamed = append(renamed, k) // a name holding a card number or a secret
			}
			if kept, ok := r.knownField(f, k, val); ok {
				t[k] = kept // the codec knows the field (Fields)
				continue
			}
			if secretField(k) {
				if _, ok := val.(string); ok {
					t[k] = "[REDACTED]"
				} else if val != nil {
					t[k] = nil
				}
				continue
			}
			if s, ok := val.(string); ok && identifierField(k) && (canonicalUUID(s) || r.plainIdentifier(s)) {
				continue // a resource ID comes back exactly as the server sent it
			}
			t[k] = r.redactValue(val, f)
		}
		// Names are redacted like values, in a fixed order; a redacted name
		// that another name already has gets a suffix, so no value is lost.
		slices.Sort(renamed)
		for _, k := range renamed {
			val := t[k]
			delete(t, k)
			nk := r.Stored(k)
			for n, base := 2, nk; ; n++ {
				if _, taken := t[nk]; !taken {
					break
				}
				nk = fmt.Sprintf("%s#%d", base, n)
			}
			t[nk] = val
		}
		return t
	case []any:
		if digitArray(t) {
			for i := range t {
				t[i] = nil // a card number written one group per element
			}
			return t
		}
		for i := range t {
			t[i] = r.redactValue(t[i], f)
		}
		return t
	case string:
		return r.Stored(t)
	case json.Number:
		if s, ok := integerDigits(t.String()); ok && len(s) >= 13 && len(s) <= 19 && luhn.Valid(s) {
			return nil
		}
		if numberHoldsCardNumber(t.String()) {
			return nil
		}
		return t
	}
	return v
}

// numberHoldsCardNumber reports whether one of the digit runs of a JSON
// number's text (its integer part, fraction or exponent) is a card
// number on its own: "1e4111111111111111" writes one in its exponent.
func numberHoldsCardNumber(s string) bool {
	for _, run := range strings.FieldsFunc(s, func(r rune) bool { return r < '0' || r > '9' }) {
		if len(run) >= 13 && len(run) <= 19 && luhn.Valid(run) {
			return true
		}
	}
	return false
}

// integerDigits returns the digits of a JSON number that is an integer in
// any notation ("4111111111111111", "-4111111111111111",
// "4111111111111111.0", "4.111111111111111e15"), without sign; ok is false
// for a number with a fractional part or too large to be a card number.
func integerDigits(s string) (string, bool) {
	s = strings.TrimPrefix(s, "-")
	if strings.Trim(s, "0123456789") == "" {
		return s, true
	}
	if len(s) > 64 {
		return "", false
	}
	f, _, err := big.ParseFloat(s, 10, 128, big.ToNearestEven)
	if err != nil || !f.IsInt() || f.MantExp(nil) > 70 {
		return "", false
	}
	return f.Text('f', 0), true
}

// redactCardLike masks card numbers written with spaces or hyphens between
// digit groups ("4111 1111 1111 1111", also with a CVV group after it): all
// but the last four digits become '*'. A run is a card number when its 13
// to 19 digits pass the Luhn check (or do so without a last group of 3 or 4
// digits, a CVV); canonical UUIDs are never read as one, so that IDs and
// keys stored in free text come back exactly as the server sent them.
func redactCardLike(s string) string {
	b := []byte(s)
	skip := make([]bool, len(b))
	for _, m := range uuidInText.FindAllStringIndex(s, -1) {
		for k := m[0]; k < m[1]; k++ {
			skip[k] = true
		}
	}
	isDigit := func(k int) bool { return b[k] >= '0' && b[k] <= '9' && !skip[k] }
	for i := 0; i < len(b); {
		if !isDigit(i) {
			i++
			continue
		}
		// extend over digits and single separators between digits
		j, end := i, i
		var digits []byte
		lastGroup := 0
		for j < len(b) {
			if isDigit(j) {
				digits = append(digits, b[j])
				lastGroup++
				j++
				end = j
				continue
			}
			if (b[j] == ' ' || b[j] == '-') && j+1 < len(b) && isDigit(j+1) {
				lastGroup = 0
				j++
				continue
			}
			break
		}
		n := len(digits)
		card := n >= 13 && n <= 19 && luhn.Valid(string(digits))
		if !card && lastGroup >= 3 && lastGroup <= 4 && lastGroup < n {
			m := n - lastGroup
			card = m >= 13 && m <= 19 && luhn.Valid(string(digits[:m]))
		}
		if card {
			keep := 4
			for k := end - 1; k >= i; k-- {
				if isDigit(k) {
					if keep > 0 {
						keep--
					} else {
						b[k] = '*'
					}
				}
			}
		}
		i = end
	}
	return string(b)
}

// uuidInText finds canonical UUIDs (8-4-4-4-12 hex digits) in free text.
var uuidInText = regexp.MustCompile(`\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b`)

// storedSecret matches a secret field written in text with any quoting
// (double, single or none) and ':' or '=', as a server may echo a request.
var storedSecret = regexp.MustCompile(`(?i)(\b(?:[a-z_]*(?:cvv2?|cvc2?|security_?code)|(?:card_?)?pin|[a-z_]*token|[a-z_]*secret|password|authorization|signature)['"]?\s*[:=]\s*['"]?)((?:bearer\s+)?[^'"&,\s}]+)`)

// Stored redacts free text before it is stored: String, then
// secret fields in any quoting, then card numbers written with separators.
func Stored(s string) string {
	var r *Redactor
	return r.Stored(s)
}

// Stored is Stored, cutting r's secrets too.
func (r *Redactor) Stored(s string) string {
	if s == "" {
		return s
	}
	s = r.Redact(s)
	s = storedSecret.ReplaceAllString(s, "${1}[REDACTED]")
	return redactCardLike(s)
}

// digitArray reports whether a, a JSON array, writes a card number one
// digit group per element ([4,1,1,1,...], ["4111","1111",...]): its
// elements are numbers or strings of digits whose groups, read in order,
// hold one (maskDigitRuns).
func digitArray(a []any) bool {
	if len(a) < 2 {
		return false
	}
	var b strings.Builder
	for i, e := range a {
		var s string
		switch x := e.(type) {
		case json.Number:
			s = x.String()
		case string:
			s = x
		default:
			return false
		}
		if s == "" || strings.Trim(s, "0123456789 -") != "" {
			return false
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(s)
	}
	j := b.String()
	return maskDigitRuns(j) != j
}
