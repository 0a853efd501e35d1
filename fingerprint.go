package payonce

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"strings"

	"github.com/payonce/payonce/redact"
)

// The two forms of a stored fingerprint, told apart by their prefix.
const (
	// fingerprintKeyedPrefix starts a fingerprint keyed with the client's
	// fingerprint key: HMAC-SHA256 of method, path and the body bytes.
	fingerprintKeyedPrefix = "hmac-sha256:"
	// fingerprintRedactedPrefix starts a fingerprint of a client without a
	// fingerprint key: SHA-256 of method, path and the body as redact.JSON
	// stores it, card numbers cut to their last four digits and CVVs out.
	fingerprintRedactedPrefix = "sha256-redacted:"
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
// (fingerprintRedactedPrefix), see docs/journal.md.
func WithFingerprintKey(key []byte) Option {
	return func(c *Client) error {
		if len(key) == 0 {
			return fmt.Errorf("%w: empty fingerprint key", ErrInvalidConfig)
		}
		m := hmac.New(sha256.New, key)
		m.Write([]byte(fingerprintKeyLabel))
		c.ident.fpKey = m.Sum(nil)
		return nil
	}
}

// Fingerprint is the fingerprint a client without a fingerprint key
// records: fingerprintRedactedPrefix and the hex SHA-256 of the upper-case
// method, path and the body as redact.JSON stores it, so that it holds
// nothing derived from a card number (beyond its last four digits) or a
// CVV. Another body that differs only in the card's hidden digits or CVV
// gets the same fingerprint. Client.Fingerprint gives the fingerprint a
// client records, keyed when it has a key.
func Fingerprint(method, path string, body []byte) string {
	return fingerprintRedactedPrefix + fingerprintHex(sha256.New(), method, path, redact.JSON(body))
}

// Fingerprint returns the fingerprint the client records for a request
// (method, escaped path, the exact body bytes): keyed with its fingerprint
// key when it has one (fingerprintKeyedPrefix), else payonce.Fingerprint.
// Give it to ReserveTx to have the journal check the body of the first
// run.
func (c *Client) Fingerprint(method, path string, body []byte) string {
	if c.ident.fpKey == nil {
		return Fingerprint(method, path, body)
	}
	return fingerprintKeyedPrefix + fingerprintHex(hmac.New(sha256.New, c.ident.fpKey), method, path, body)
}

// fingerprintLike returns the fingerprint of the request in the form of
// stored, a fingerprint recorded earlier (by ReserveTx, or by a client
// with or without a key), so that the two compare; a form this client
// cannot compute (keyed, and the client has no key) gives its own.
func (c *Client) fingerprintLike(stored, method, path string, body []byte) string {
	if strings.HasPrefix(stored, fingerprintRedactedPrefix) {
		return Fingerprint(method, path, body)
	}
	return c.Fingerprint(method, path, body)
}

func fingerprintHex(h hash.Hash, method, path string, body []byte) string {
	h.Write([]byte(strings.ToUpper(method)))
	h.Write([]byte{0})
	h.Write([]byte(path))
	h.Write([]byte{0})
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// RequestMatches reports whether a request (method, escaped path and the
// exact body bytes Do sends: the JSON encoding of Request.Body) is the one
// e was recorded with: the same fingerprint, in the form e holds it
// (compared in constant time), or, for an entry reserved without one, the
// same method and path. A settle lookup checks it before it searches the
// provider for the operation the request describes.
func (c *Client) RequestMatches(e JournalEntry, method, path string, body []byte) bool {
	if e.Fingerprint == "" {
		return strings.EqualFold(e.Method, method) && redact.Stored(e.Path) == redact.Stored(path)
	}
	return hmac.Equal([]byte(c.fingerprintLike(e.Fingerprint, method, path, body)), []byte(e.Fingerprint))
}
