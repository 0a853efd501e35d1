package corekit

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"hash"
	"strings"

	"github.com/payonce/payonce/redact"
)

// The two forms of a stored fingerprint, told apart by their prefix.
const (
	// FingerprintKeyedPrefix starts a fingerprint keyed with the client's
	// fingerprint key: HMAC-SHA256 of method, path and the body bytes.
	FingerprintKeyedPrefix = "hmac-sha256:"
	// FingerprintRedactedPrefix starts a fingerprint of a client without a
	// fingerprint key: SHA-256 of method, path and the body as redact.JSON
	// stores it, card numbers cut to their last four digits and CVVs out.
	FingerprintRedactedPrefix = "sha256-redacted:"
)

// Fingerprint is the fingerprint a client without a fingerprint key
// records: FingerprintRedactedPrefix and the hex SHA-256 of the upper-case
// method, path and the body as redact.JSON stores it, so that it holds
// nothing derived from a card number (beyond its last four digits) or a
// CVV. Another body that differs only in the card's hidden digits or CVV
// gets the same fingerprint. payonce.Client.Fingerprint gives the fingerprint a
// client records, keyed when it has a key.
func Fingerprint(method, path string, body []byte) string {
	return FingerprintRedactedPrefix + fingerprintHex(sha256.New(), method, path, redact.JSON(body))
}

// KeyedFingerprint is the fingerprint a client with the fingerprint key
// key records: FingerprintKeyedPrefix and the hex HMAC-SHA256 under key of
// the upper-case method, path and the exact body bytes.
func KeyedFingerprint(key []byte, method, path string, body []byte) string {
	return FingerprintKeyedPrefix + fingerprintHex(hmac.New(sha256.New, key), method, path, body)
}

func fingerprintHex(h hash.Hash, method, path string, body []byte) string {
	h.Write([]byte(strings.ToUpper(method)))
	h.Write([]byte{0})
	h.Write([]byte(path))
	h.Write([]byte{0})
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// SameFingerprint reports whether two fingerprints are the same, in time
// that does not depend on where they differ (crypto/subtle): a stored
// fingerprint is never compared byte by byte up to the first difference.
func SameFingerprint(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}
