package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"slices"
	"strings"
	"sync"
)

// SecretHolder is implemented by a Signer that holds secrets of its own:
// an API key and its HMAC secret, an OAuth2 client secret, the access
// tokens it was given. The client cuts every value SecretValues returns,
// wherever it stands in a text and however it is encoded (as is,
// percent-encoded, base64 or base64url at any alignment, hex), from the
// errors it builds, the journal rows it writes and the records it logs:
// a server that echoes the client's own token in prose ("token expired:
// <token>") does not put it in a log line. SecretValues is called for
// every error and row, so it must be cheap and safe for concurrent use;
// it returns at most maxClientSecrets values (more are ignored), and
// values shorter than minClientSecret bytes are not cut (they would eat
// ordinary words).
type SecretHolder interface {
	SecretValues() []string
}

// Bounds on the secrets a client registers.
const (
	maxClientSecrets = 16
	minClientSecret  = 8
)

// redacted replaces a secret.
const redacted = "[REDACTED]"

// Redactor redacts text as String does, and also cuts the values a
// client holds as secrets. A nil *Redactor holds none.
type Redactor struct {
	cuts []secretForm // the secrets and their encoded forms, longest first
}

// secretForm is one text that spells a secret. A folded form (the secret
// itself, its hex) is matched without regard to ASCII letter case and is
// held lower-cased; an exact one (its base64, where case is meaning) only
// as it is.
type secretForm struct {
	text string
	fold bool
}

// newRedactor returns a Redactor cutting vals (see SecretHolder) and
// the retired values a holder returned before (at most maxClientSecrets
// of each), or nil
// when none is long enough to be cut.
func newRedactor(vals []string, retired ...string) *Redactor {
	return buildRedactor(minClientSecret, vals, retired)
}

// buildRedactor is newRedactor cutting values of at least minLen bytes.
func buildRedactor(minLen int, lists ...[]string) *Redactor {
	var cuts []secretForm
	for _, vs := range lists {
		n := 0
		for _, v := range vs {
			if len(v) < minLen || v == "" {
				continue
			}
			if n++; n > maxClientSecrets {
				break
			}
			cuts = append(cuts, secretForms(v)...)
		}
	}
	if len(cuts) == 0 {
		return nil
	}
	slices.SortFunc(cuts, func(a, b secretForm) int {
		if d := len(b.text) - len(a.text); d != 0 {
			return d
		}
		return strings.Compare(a.text, b.text)
	})
	return &Redactor{cuts: slices.Compact(cuts)}
}

// secretForms are the texts that spell v: v itself and its hex, in any
// ASCII letter case (a server may upper-case what it quotes), and the
// characters of its base64 (both alphabets) that depend on v alone, at
// each of the three alignments it may have in a longer encoded text,
// as they are. Its percent-encoded and escaped forms are decoded before
// they are compared.
func secretForms(v string) []secretForm {
	forms := []secretForm{{asciiLower(v), true}, {hex.EncodeToString([]byte(v)), true}}
	n := len(v)
	for k := range 3 {
		enc := base64.StdEncoding.EncodeToString(append(make([]byte, k), v...))
		lo, hi := (8*k+5)/6, 8*(k+n)/6 // characters whose six bits all come from v
		if hi-lo < minClientSecret {
			continue
		}
		inner := enc[lo:hi]
		forms = append(forms, secretForm{inner, false}, secretForm{strings.NewReplacer("+", "-", "/", "_").Replace(inner), false})
	}
	return forms
}

// asciiLower lower-cases the ASCII letters of s, leaving every other byte
// where it is: the result has s's length, and its indexes are s's.
func asciiLower(s string) string {
	i := strings.IndexFunc(s, func(r rune) bool { return r >= 'A' && r <= 'Z' })
	if i < 0 {
		return s
	}
	b := []byte(s)
	for ; i < len(b); i++ {
		if c := b[i]; c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// cutSecrets replaces every registered secret in s by [REDACTED], a
// folded form in any ASCII letter case.
func (r *Redactor) cutSecrets(s string) string {
	if r == nil {
		return s
	}
	lower, lowered := "", false
	for _, c := range r.cuts {
		if !c.fold {
			if strings.Contains(s, c.text) {
				s, lowered = strings.ReplaceAll(s, c.text, redacted), false
			}
			continue
		}
		if !lowered {
			lower, lowered = asciiLower(s), true
		}
		if !strings.Contains(lower, c.text) {
			continue
		}
		s, lowered = replaceAt(s, lower, c.text), false
	}
	return s
}

// replaceAt replaces in s, by [REDACTED], every span where lower (s with
// its ASCII letters lower-cased) holds sub.
func replaceAt(s, lower, sub string) string {
	var b strings.Builder
	last := 0
	for i := 0; ; {
		j := strings.Index(lower[i:], sub)
		if j < 0 {
			break
		}
		b.WriteString(s[last : i+j])
		b.WriteString(redacted)
		i += j + len(sub)
		last = i
	}
	b.WriteString(s[last:])
	return b.String()
}

// containsSecret reports whether b holds one of r's forms (a folded one
// in any ASCII letter case).
func (r *Redactor) containsSecret(b []byte) bool {
	if r == nil {
		return false
	}
	var lower []byte
	for _, c := range r.cuts {
		if !c.fold {
			if bytes.Contains(b, []byte(c.text)) {
				return true
			}
			continue
		}
		if lower == nil {
			lower = []byte(asciiLower(string(b)))
		}
		if bytes.Contains(lower, []byte(c.text)) {
			return true
		}
	}
	return false
}

// Without is String with vals cut as a client's secrets are (see
// SecretHolder), whatever their length: for a text that may quote a
// credential the caller holds, such as a token endpoint's refusal.
func Without(s string, vals ...string) string {
	return buildRedactor(1, vals).Redact(s)
}

// Secrets caches the Redactor of a client's SecretHolder, built
// anew when the values it returns change (a token was replaced); the
// last maxClientSecrets replaced values are still cut.
type Secrets struct {
	src     SecretHolder
	mu      sync.Mutex
	vals    []string
	retired []string // values the holder returned before, newest first, at most maxClientSecrets
	r       *Redactor
}

// NewSecrets returns the cache of h's secrets (nil when h is nil).
func NewSecrets(h SecretHolder) *Secrets {
	if h == nil {
		return nil
	}
	return &Secrets{src: h}
}

// Redactor returns the Redactor for the holder's current values; nil
// when c is nil.
func (c *Secrets) Redactor() *Redactor {
	if c == nil {
		return nil
	}
	vals := c.src.SecretValues()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.vals != nil && slices.Equal(vals, c.vals) {
		return c.r
	}
	for _, v := range c.vals { // a replaced value may still be echoed by a late answer
		if !slices.Contains(vals, v) && !slices.Contains(c.retired, v) {
			c.retired = append([]string{v}, c.retired...)
		}
	}
	c.retired = c.retired[:min(len(c.retired), maxClientSecrets)]
	c.vals = append(make([]string, 0, len(vals)), vals...)
	c.r = newRedactor(vals, c.retired...)
	return c.r
}
