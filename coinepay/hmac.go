package coinepay

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/payonce/payonce"
)

// Headers of the Coinepay signing scheme, the project's own decision since
// Coinepay publishes none (docs/signing.md describes it, with test vectors).
const (
	HeaderAPIKey    = "X-Api-Key"
	HeaderTimestamp = "X-Timestamp"
	HeaderNonce     = "X-Nonce"
	HeaderSignature = "X-Signature"
)

// HMACSigner signs requests with HMAC-SHA256 as the Coinepay OpenAPI
// expects under the project's scheme:
//
//	canonical = METHOD \n escaped-path \n canonical-query \n timestamp \n nonce \n hex(sha256(body))
//	X-Signature = lowercase hex(HMAC-SHA256(secret, canonical))
//
// with X-Api-Key, X-Timestamp (Unix seconds) and X-Nonce (16 random bytes,
// hex). The Idempotency-Key header is not signed. It is safe for concurrent
// use; its printed forms never show the secret.
type HMACSigner struct {
	keyID string
	// secret is held in a closure: fmt prints a func as an address under
	// every verb, while a []byte (or a pointer to one, under a verb such as
	// %s) would be printed whole by %d, %x or %s of the core client, which
	// holds the signer in an unexported field out of reach of String.
	secret func() []byte
	values func() []string // the secret and the API key, for SecretValues
	now    func() time.Time
	rand   io.Reader
	offset atomic.Int64 // server clock minus local clock, in nanoseconds
	states sync.Pool    // *signState
}

// HMACOption configures an HMACSigner.
type HMACOption func(*HMACSigner)

// WithSignerClock sets the signer's clock (default time.Now).
func WithSignerClock(now func() time.Time) HMACOption {
	return func(s *HMACSigner) {
		if now != nil {
			s.now = now
		}
	}
}

// WithNonceReader sets the nonce source (default crypto/rand.Reader). Only
// tests with fixed vectors should change it.
func WithNonceReader(r io.Reader) HMACOption {
	return func(s *HMACSigner) {
		if r != nil {
			s.rand = r
		}
	}
}

// NewHMACSigner returns a signer for the API key id and its secret.
func NewHMACSigner(keyID, secret string, opts ...HMACOption) (*HMACSigner, error) {
	if keyID == "" || secret == "" {
		return nil, fmt.Errorf("%w: api key and secret are required", payonce.ErrInvalidConfig)
	}
	key := []byte(secret)
	vals := []string{secret, keyID}
	s := &HMACSigner{keyID: keyID, secret: func() []byte { return key }, values: func() []string { return vals },
		now: time.Now, rand: rand.Reader}
	s.states.New = func() any { return &signState{mac: hmac.New(sha256.New, key), buf: make([]byte, 0, 256)} }
	for _, o := range opts {
		o(s)
	}
	return s, nil
}

// String hides the secret.
func (s *HMACSigner) String() string {
	return "HMACSigner{keyID: " + s.keyID + ", secret: [REDACTED]}"
}

// GoString hides the secret.
func (s *HMACSigner) GoString() string { return s.String() }

// SecretValues implements redact.SecretHolder: the HMAC secret and the API key,
// which the client cuts from every error text, journal row and log
// record. The slice is shared: callers must not change it.
func (s *HMACSigner) SecretValues() []string { return s.values() }

// ClockOffset returns the server-minus-local clock offset the signer learned.
func (s *HMACSigner) ClockOffset() time.Duration { return time.Duration(s.offset.Load()) }

// Sign sets the four signing headers on req for body.
func (s *HMACSigner) Sign(req *http.Request, body []byte) error {
	st := s.states.Get().(*signState)
	defer s.putState(st)
	if _, err := io.ReadFull(s.rand, st.nonce[:]); err != nil {
		return fmt.Errorf("coinepay: nonce: %w", err)
	}
	// The timestamp, the nonce and the signature share one string: one
	// allocation, not three.
	var vb [20 + 2*len(st.nonce) + 2*sha256.Size]byte
	ts := strconv.AppendInt(vb[:0], s.now().Add(s.ClockOffset()).Unix(), 10)
	nts := len(ts)
	nonce := vb[nts : nts+2*len(st.nonce)]
	hex.Encode(nonce, st.nonce[:])
	st.buf = appendCanonical(st.buf[:0], req.Method, req.URL.EscapedPath(), req.URL.RawQuery, ts, nonce, body)
	st.mac.Reset() // what Sign(s.secret(), canonical) computes, on a keyed state
	_, _ = st.mac.Write(st.buf)
	end := nts + len(nonce)
	hex.Encode(vb[end:end+2*sha256.Size], st.mac.Sum(st.sum[:0]))
	vals := string(vb[:end+2*sha256.Size])
	// The four values share one array; each slice is capped, so an append
	// copies instead of overwriting a neighbour.
	v := []string{s.keyID, vals[:nts], vals[nts:end], vals[end:]}
	h := req.Header
	h[HeaderAPIKey], h[HeaderTimestamp], h[HeaderNonce], h[HeaderSignature] = v[0:1:1], v[1:2:2], v[2:3:3], v[3:4:4]
	return nil
}

// putState returns st to the pool, unless a long path left its buffer
// large.
func (s *HMACSigner) putState(st *signState) {
	if cap(st.buf) <= 4<<10 {
		s.states.Put(st)
	}
}

// signState is what one signature needs besides its inputs: an HMAC state
// keyed with the secret (keying one costs more than signing) and buffers,
// pooled so that signing allocates only the header values.
type signState struct {
	mac   hash.Hash
	nonce [16]byte
	sum   [sha256.Size]byte
	buf   []byte // the canonical string
}

// Recover learns the server's clock from the answer's Date header after an
// openapi_timestamp_expired rejection, so the repeated attempt is signed
// with a corrected timestamp (the way the AWS SDK corrects clock skew).
func (s *HMACSigner) Recover(_ context.Context, header http.Header, err *payonce.APIError) bool {
	if !errors.Is(err, ErrTimestampExpired) {
		return false
	}
	date, perr := http.ParseTime(header.Get("Date"))
	if perr != nil {
		return false
	}
	// Date has one-second resolution; keep half a second of slack.
	off := date.Sub(s.now()) + 500*time.Millisecond
	s.offset.Store(int64(off))
	return true
}

// CanonicalString builds the string the signature covers. method is upper
// cased; escapedPath is the path as sent; rawQuery is canonicalised by
// CanonicalQuery; bodyHash is the hex SHA-256 of body (of zero bytes when
// body is empty).
func CanonicalString(method, escapedPath, rawQuery, timestamp, nonce string, body []byte) string {
	return string(appendCanonical(nil, method, escapedPath, rawQuery, timestamp, nonce, body))
}

// appendCanonical appends the canonical string (see CanonicalString) to
// dst.
func appendCanonical[T string | []byte](dst []byte, method, escapedPath, rawQuery string, timestamp, nonce T, body []byte) []byte {
	sum := sha256.Sum256(body)
	dst = slices.Grow(dst, len(method)+len(escapedPath)+len(rawQuery)+len(timestamp)+len(nonce)+5+2*sha256.Size)
	dst = append(dst, strings.ToUpper(method)...)
	dst = append(dst, '\n')
	dst = append(dst, escapedPath...)
	dst = append(dst, '\n')
	dst = append(dst, CanonicalQuery(rawQuery)...)
	dst = append(dst, '\n')
	dst = append(dst, timestamp...)
	dst = append(dst, '\n')
	dst = append(dst, nonce...)
	dst = append(dst, '\n')
	return hex.AppendEncode(dst, sum[:])
}

// CanonicalQuery sorts the query parameters by name, then by value, and
// encodes them as url.Values.Encode does; "" when there are none.
func CanonicalQuery(rawQuery string) string {
	if rawQuery == "" {
		return ""
	}
	vals, _ := url.ParseQuery(rawQuery) // keeps what parses, as servers do
	for _, vs := range vals {
		sort.Strings(vs)
	}
	return vals.Encode()
}

// Sign returns lowercase hex HMAC-SHA256(secret, canonical).
func Sign(secret []byte, canonical string) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(canonical))
	return hex.EncodeToString(m.Sum(nil))
}
