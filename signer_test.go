package payonce

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"time"
)

// hmacSigner signs each attempt as the Coinepay HMAC signer does, as far
// as the core can tell: an API key, a timestamp from its clock, a fresh
// random nonce and an HMAC-SHA256 signature over the request and body.
type hmacSigner struct {
	keyID, secret string
	now           func() time.Time
}

func newHMACSigner(keyID, secret string, now func() time.Time) *hmacSigner {
	if now == nil {
		now = time.Now
	}
	return &hmacSigner{keyID: keyID, secret: secret, now: now}
}

func (s *hmacSigner) Sign(req *http.Request, body []byte) error {
	var n [16]byte
	_, _ = rand.Read(n[:])
	nonce := hex.EncodeToString(n[:])
	ts := strconv.FormatInt(s.now().Unix(), 10)
	m := hmac.New(sha256.New, []byte(s.secret))
	m.Write([]byte(req.Method + "\n" + req.URL.EscapedPath() + "\n" + req.URL.RawQuery + "\n" + ts + "\n" + nonce + "\n"))
	m.Write(body)
	req.Header.Set("X-Api-Key", s.keyID)
	req.Header.Set("X-Timestamp", ts)
	req.Header.Set("X-Nonce", nonce)
	req.Header.Set("X-Signature", hex.EncodeToString(m.Sum(nil)))
	return nil
}
