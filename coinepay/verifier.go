package coinepay

import (
	"crypto/hmac"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/payonce/payonce"
)

// Message keys the Coinepay server answers for signature failures (401).
const (
	CodeSignatureRequired = "openapi_signature_required"
	CodeAPIKeyInvalid     = "openapi_api_key_invalid"
	CodeTimestampExpired  = "openapi_timestamp_expired"
	CodeNonceReplayed     = "openapi_nonce_replayed"
	CodeSignatureInvalid  = "openapi_signature_invalid"
)

// SignatureError is a verification failure: Code is the message_key the
// server answers (with HTTP 401), Err its sentinel.
type SignatureError struct {
	Code string
	Err  error
}

// Error names the sentinel and the message_key.
func (e *SignatureError) Error() string { return e.Err.Error() + " (" + e.Code + ")" }

// Unwrap returns the sentinel.
func (e *SignatureError) Unwrap() error { return e.Err }

// Verifier checks signed requests on the server side: the four headers are
// present, the key is known, the timestamp is within TimestampWindow of the
// server clock, the signature matches under a constant-time compare, and the
// nonce was not seen in the last NonceWindow for that key. Seen nonces are
// swept when they expire, so memory stays bounded. Safe for concurrent use.
type Verifier struct {
	secrets         func(keyID string) (secret string, ok bool)
	now             func() time.Time
	timestampWindow time.Duration
	nonceWindow     time.Duration

	mu        sync.Mutex
	nonces    map[string]time.Time // keyID + "\x00" + nonce -> expiry
	lastSweep time.Time
}

// NewVerifier returns a Verifier that looks secrets up with secrets, reads
// the time from now (time.Now when nil), and uses the scheme's windows:
// 300 s for timestamps and 600 s for nonces.
func NewVerifier(secrets func(keyID string) (string, bool), now func() time.Time) *Verifier {
	if now == nil {
		now = time.Now
	}
	return &Verifier{secrets: secrets, now: now, timestampWindow: 300 * time.Second,
		nonceWindow: 600 * time.Second, nonces: make(map[string]time.Time)}
}

// SetWindows changes the timestamp and nonce windows.
func (v *Verifier) SetWindows(timestamp, nonce time.Duration) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.timestampWindow, v.nonceWindow = timestamp, nonce
}

// Verify checks r, whose body bytes are body, and returns the API key id.
// Errors are *SignatureError.
func (v *Verifier) Verify(r *http.Request, body []byte) (string, error) {
	keyID := r.Header.Get(HeaderAPIKey)
	ts := r.Header.Get(HeaderTimestamp)
	nonce := r.Header.Get(HeaderNonce)
	sig := r.Header.Get(HeaderSignature)
	if keyID == "" || ts == "" || nonce == "" || sig == "" {
		return "", &SignatureError{Code: CodeSignatureRequired, Err: ErrSignatureInvalid}
	}
	secret, ok := v.secrets(keyID)
	if !ok {
		return "", &SignatureError{Code: CodeAPIKeyInvalid, Err: payonce.ErrUnauthorized}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return keyID, &SignatureError{Code: CodeSignatureInvalid, Err: ErrSignatureInvalid}
	}
	now := v.now()
	v.mu.Lock()
	tw, nw := v.timestampWindow, v.nonceWindow
	v.mu.Unlock()
	if d := now.Sub(time.Unix(sec, 0)); d > tw || d < -tw {
		return keyID, &SignatureError{Code: CodeTimestampExpired, Err: ErrTimestampExpired}
	}
	if len(nonce) < 32 || len(nonce) > 128 {
		return keyID, &SignatureError{Code: CodeSignatureInvalid, Err: ErrSignatureInvalid}
	}
	want := Sign([]byte(secret), CanonicalString(r.Method, r.URL.EscapedPath(), r.URL.RawQuery, ts, nonce, body))
	if !hmac.Equal([]byte(want), []byte(strings.ToLower(sig))) {
		return keyID, &SignatureError{Code: CodeSignatureInvalid, Err: ErrSignatureInvalid}
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if now.Sub(v.lastSweep) > nw/10 {
		for k, exp := range v.nonces {
			if !now.Before(exp) {
				delete(v.nonces, k)
			}
		}
		v.lastSweep = now
	}
	nk := keyID + "\x00" + nonce
	if exp, seen := v.nonces[nk]; seen && now.Before(exp) {
		return keyID, &SignatureError{Code: CodeNonceReplayed, Err: ErrNonceReplayed}
	}
	// Remember the nonce at least as long as its timestamp stays
	// acceptable (a timestamp up to tw ahead is valid until ts+tw), or a
	// captured request could be replayed, with a fresh unsigned
	// Idempotency-Key, once its nonce was forgotten.
	exp := now.Add(nw)
	if until := time.Unix(sec, 0).Add(tw + time.Second); exp.Before(until) {
		exp = until
	}
	v.nonces[nk] = exp
	return keyID, nil
}

// NonceCount returns how many nonces the verifier remembers (for tests of
// the sweep).
func (v *Verifier) NonceCount() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.nonces)
}
