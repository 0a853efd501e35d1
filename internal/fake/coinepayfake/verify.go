package coinepayfake

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Headers of the signing scheme, spelled out by the fake itself.
const (
	HeaderAPIKey    = "X-Api-Key"
	HeaderTimestamp = "X-Timestamp"
	HeaderNonce     = "X-Nonce"
	HeaderSignature = "X-Signature"
)

// Message keys the fake answers for signature failures (HTTP 401).
const (
	CodeSignatureRequired = "openapi_signature_required"
	CodeAPIKeyInvalid     = "openapi_api_key_invalid"
	CodeTimestampExpired  = "openapi_timestamp_expired"
	CodeNonceReplayed     = "openapi_nonce_replayed"
	CodeSignatureInvalid  = "openapi_signature_invalid"
)

// Canonical returns the string a request signature covers:
//
//	METHOD \n escaped-path \n canonical-query \n timestamp \n nonce \n hex(sha256(body))
//
// with the method upper cased and the query parameters sorted by name,
// then value, each name and value query-escaped and joined with "&".
func Canonical(method, escapedPath, rawQuery, timestamp, nonce string, body []byte) string {
	sum := sha256.Sum256(body)
	return strings.ToUpper(method) + "\n" + escapedPath + "\n" + canonicalQuery(rawQuery) + "\n" +
		timestamp + "\n" + nonce + "\n" + hex.EncodeToString(sum[:])
}

func canonicalQuery(raw string) string {
	if raw == "" {
		return ""
	}
	vals, _ := url.ParseQuery(raw) // what parses counts, as on the server
	pairs := make([]string, 0, len(vals))
	for k, vs := range vals {
		for _, v := range vs {
			pairs = append(pairs, url.QueryEscape(k)+"="+url.QueryEscape(v))
		}
	}
	sort.Slice(pairs, func(i, j int) bool {
		ki, vi, _ := strings.Cut(pairs[i], "=")
		kj, vj, _ := strings.Cut(pairs[j], "=")
		if ki != kj {
			return ki < kj
		}
		return vi < vj
	})
	return strings.Join(pairs, "&")
}

// Signature returns lowercase hex HMAC-SHA256(secret, canonical).
func Signature(secret, canonical string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(canonical))
	return hex.EncodeToString(m.Sum(nil))
}

// verifier checks signed requests: the four headers, a known key, a
// timestamp within the window of the fake clock, the signature under a
// constant-time compare, and a nonce not seen within the nonce window.
// Seen nonces are swept as they expire. Safe for concurrent use.
type verifier struct {
	secrets         map[string]string
	now             func() time.Time
	timestampWindow time.Duration
	nonceWindow     time.Duration

	mu        sync.Mutex
	nonces    map[string]time.Time // key id + "\x00" + nonce -> expiry
	lastSweep time.Time
}

func newVerifier(secrets map[string]string, now func() time.Time, tw, nw time.Duration) *verifier {
	return &verifier{secrets: secrets, now: now, timestampWindow: tw, nonceWindow: nw, nonces: make(map[string]time.Time)}
}

// verify returns the API key id, or "" and the message key of the failure.
func (v *verifier) verify(r *http.Request, body []byte) (keyID, code string) {
	keyID = r.Header.Get(HeaderAPIKey)
	ts := r.Header.Get(HeaderTimestamp)
	nonce := r.Header.Get(HeaderNonce)
	sig := r.Header.Get(HeaderSignature)
	if keyID == "" || ts == "" || nonce == "" || sig == "" {
		return "", CodeSignatureRequired
	}
	secret, known := v.secrets[keyID]
	if !known {
		return "", CodeAPIKeyInvalid
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || sec < 0 || sec > 1<<40 {
		return "", CodeSignatureInvalid
	}
	now := v.now()
	signed := time.Unix(sec, 0)
	if d := now.Sub(signed); d > v.timestampWindow || d < -v.timestampWindow {
		return "", CodeTimestampExpired
	}
	if len(nonce) < 32 || len(nonce) > 128 {
		return "", CodeSignatureInvalid
	}
	want := Signature(secret, Canonical(r.Method, r.URL.EscapedPath(), r.URL.RawQuery, ts, nonce, body))
	if !hmac.Equal([]byte(want), []byte(strings.ToLower(sig))) {
		return "", CodeSignatureInvalid
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if now.Sub(v.lastSweep) > v.nonceWindow/10 || now.Before(v.lastSweep) {
		for k, exp := range v.nonces {
			if !now.Before(exp) {
				delete(v.nonces, k)
			}
		}
		v.lastSweep = now
	}
	nk := keyID + "\x00" + nonce
	if exp, seen := v.nonces[nk]; seen && now.Before(exp) {
		return "", CodeNonceReplayed
	}
	// Keep the nonce at least as long as its timestamp stays acceptable,
	// or the captured request could be sent again once it was forgotten.
	exp := now.Add(v.nonceWindow)
	if until := signed.Add(v.timestampWindow + time.Second); exp.Before(until) {
		exp = until
	}
	v.nonces[nk] = exp
	return keyID, ""
}

func (v *verifier) count() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.nonces)
}
