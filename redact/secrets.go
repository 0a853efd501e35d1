package redact

import (
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
	cuts []string // the secrets and their encoded forms, longest first
}

// newRedactor returns a Redactor cutting vals (see SecretHolder) and
// the retired values a holder returned before (at most maxClientSecrets
// of each), or nil
// when none is long enough to be cut.
func newRedactor(vals []string, retired ...string) *Redactor {
	var cuts []string
	for _, vs := range [][]string{vals, retired} {
		n := 0
		for _, v := range vs {
			if len(v) < minClientSecret {
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
	slices.SortFunc(cuts, func(a, b string) int { return len(b) - len(a) })
	return &Redactor{cuts: slices.Compact(cuts)}
}

// secretForms are the texts that spell v: v itself, its hex in both
// cases, and the characters of its base64 (both alphabets) that depend
// on v alone, at each of the three alignments it may have in a longer
// encoded text. Its percent-encoded and escaped forms are decoded before
// they are compared.
func secretForms(v string) []string {
	forms := []string{v, hex.EncodeToString([]byte(v)), strings.ToUpper(hex.EncodeToString([]byte(v)))}
	n := len(v)
	for k := range 3 {
		enc := base64.StdEncoding.EncodeToString(append(make([]byte, k), v...))
		lo, hi := (8*k+5)/6, 8*(k+n)/6 // characters whose six bits all come from v
		if hi-lo < minClientSecret {
			continue
		}
		inner := enc[lo:hi]
		forms = append(forms, inner, strings.NewReplacer("+", "-", "/", "_").Replace(inner))
	}
	return forms
}

// cutSecrets replaces every registered secret in s by [REDACTED].
func (r *Redactor) cutSecrets(s string) string {
	if r == nil {
		return s
	}
	for _, c := range r.cuts {
		if strings.Contains(s, c) {
			s = strings.ReplaceAll(s, c, redacted)
		}
	}
	return s
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
