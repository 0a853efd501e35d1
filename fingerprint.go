package payonce

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/payonce/payonce/internal/corekit"
	"github.com/payonce/payonce/redact"
)

// fingerprintKeyLabel separates the fingerprint key derived from a
// credential secret from every other use of that secret.
const fingerprintKeyLabel = "payonce journal fingerprint key v1"

// WithFingerprintKey keys the body fingerprints the journal stores
// (HMAC-SHA256 under a key derived from key), so that no row holds a value
// from which a card number or CVV could be recovered offline, while a
// second call with another card under the same reference is still refused.
// key is never stored; use 32 random bytes of your own, the same in every
// process that shares the journal. Typed clients default to their
// credential secret (the A55 client secret, the Coinepay API secret), so
// rotating that secret makes pending entries look recorded with another
// body unless this option keeps the key. Without a key (an A55 access
// token, a core client) the fingerprint leaves card data out
// (the "sha256-redacted:" form), see docs/journal.md.
func WithFingerprintKey(key []byte) Option {
	return option(func(c *Client) error {
		if len(key) == 0 {
			return fmt.Errorf("%w: empty fingerprint key", ErrInvalidConfig)
		}
		m := hmac.New(sha256.New, key)
		m.Write([]byte(fingerprintKeyLabel))
		c.ident.fpKey = m.Sum(nil)
		return nil
	})
}

// Fingerprint returns the fingerprint the client records for a request
// (method, escaped path, the exact body bytes): keyed with its fingerprint
// key when it has one ("hmac-sha256:" and the HMAC-SHA256 of the upper-case
// method, path and body), else the "sha256-redacted:" form that leaves
// card data out.
// Give it to ReserveTx to have the journal check the body of the first
// run.
func (c *Client) Fingerprint(method, path string, body []byte) string {
	if c.ident.fpKey == nil {
		return corekit.Fingerprint(method, path, body)
	}
	return corekit.KeyedFingerprint(c.ident.fpKey, method, path, body)
}

// fingerprintLike returns the fingerprint of the request in the form of
// stored, a fingerprint recorded earlier (by ReserveTx, or by a client
// with or without a key), so that the two compare; a form this client
// cannot compute (keyed, and the client has no key) gives its own.
func (c *Client) fingerprintLike(stored, method, path string, body []byte) string {
	switch {
	case strings.HasPrefix(stored, corekit.FingerprintRedactedPrefix):
		return corekit.Fingerprint(method, path, body)
	case isPlainFingerprint(stored):
		return plainFingerprint(method, path, body)
	}
	return c.Fingerprint(method, path, body)
}

// plainFingerprint is the fingerprint payonce recorded before fingerprints
// were keyed: the hex SHA-256 of the upper-case method, the path and the
// exact body bytes, with no prefix. It holds an unkeyed digest of the card
// number and CVV, so a client verifies an old entry's fingerprint in this
// form once and then replaces it with its own (upgradeFingerprint).
func plainFingerprint(method, path string, body []byte) string {
	h := sha256.New()
	h.Write([]byte(strings.ToUpper(method)))
	h.Write([]byte{0})
	h.Write([]byte(path))
	h.Write([]byte{0})
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// isPlainFingerprint reports a fingerprint of plainFingerprint's form: 64
// lower-case hex digits, no prefix. Today's forms all have a prefix.
func isPlainFingerprint(fp string) bool {
	if len(fp) != 2*sha256.Size {
		return false
	}
	for i := 0; i < len(fp); i++ {
		if (fp[i] < '0' || fp[i] > '9') && (fp[i] < 'a' || fp[i] > 'f') {
			return false
		}
	}
	return true
}

// upgradeFingerprint replaces the plain fingerprint of e, just verified
// against the request the client holds (own, its fingerprint in the
// client's form), so that no row keeps an unkeyed digest of a body once a
// client has seen it again. A journal that cannot (not a JournalUpgrader)
// keeps the old form, which is still compared in that form: replaced is
// false then.
func (c *Client) upgradeFingerprint(ctx context.Context, e JournalEntry, own string) (replaced bool, err error) {
	u, ok := c.journal.(JournalUpgrader)
	if !ok || !isPlainFingerprint(e.Fingerprint) {
		return false, nil
	}
	if _, err := u.ReplaceFingerprint(ctx, e.Scope, e.Reference, e.Fingerprint, own); err != nil {
		return false, fmt.Errorf("replace the plain fingerprint of reference %q: %w", e.Reference, err)
	}
	return true, nil
}

// requestMatches reports whether a request (method, escaped path and the
// exact body bytes Do sends: the JSON encoding of Request.Body) is the one
// e was recorded with: the same fingerprint, in the form e holds it
// (compared in constant time), or, for an entry reserved without one, the
// same method and path. A settle lookup checks it before it searches the
// provider for the operation the request describes.
//
// An entry holding a plain fingerprint (an earlier payonce's) that matches
// gets the client's own form in its place, the journal written with a
// context of its own, bounded as an outcome's write is: the caller of a
// settle lookup gives none.
func (c *Client) requestMatches(e JournalEntry, method, path string, body []byte) bool {
	if e.Fingerprint == "" {
		return strings.EqualFold(e.Method, method) && redact.Stored(e.Path) == redact.Stored(path)
	}
	if !corekit.SameFingerprint(c.fingerprintLike(e.Fingerprint, method, path, body), e.Fingerprint) {
		return false
	}
	if isPlainFingerprint(e.Fingerprint) {
		ctx, cancel := context.WithTimeout(context.Background(), journalWriteTimeout)
		defer cancel()
		// A failure leaves the old form, verified again next time.
		_, _ = c.upgradeFingerprint(ctx, e, c.Fingerprint(method, path, body))
	}
	return true
}
