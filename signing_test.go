package payonce

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type signingVector struct {
	Name           string `json:"name"`
	Secret         string `json:"secret"`
	Method         string `json:"method"`
	Path           string `json:"path"`
	Query          string `json:"query"`
	Timestamp      string `json:"timestamp"`
	Nonce          string `json:"nonce"`
	Body           string `json:"body"`
	CanonicalQuery string `json:"canonical_query"`
	BodySHA256     string `json:"body_sha256"`
	Canonical      string `json:"canonical"`
	Signature      string `json:"signature"`
}

func loadVectors(t testing.TB) []signingVector {
	t.Helper()
	raw, err := os.ReadFile("testdata/signing_vectors.json")
	require.NoError(t, err)
	var file struct {
		Vectors []signingVector `json:"vectors"`
	}
	require.NoError(t, json.Unmarshal(raw, &file))
	require.NotEmpty(t, file.Vectors)
	return file.Vectors
}

// The vectors were computed with openssl, independently of this code.
func TestSigningVectors(t *testing.T) {
	for _, v := range loadVectors(t) {
		t.Run(v.Name, func(t *testing.T) {
			assert.Equal(t, v.CanonicalQuery, CanonicalQuery(v.Query))
			canonical := CanonicalString(v.Method, v.Path, v.Query, v.Timestamp, v.Nonce, []byte(v.Body))
			assert.Equal(t, v.Canonical, canonical)
			assert.Equal(t, v.Signature, Sign([]byte(v.Secret), canonical))
		})
	}
}

// fixedNonces yields the vector's nonce bytes.
func TestHMACSignerMatchesVector(t *testing.T) {
	v := loadVectors(t)[0]
	nonce := make([]byte, 16)
	_, err := fmt.Sscanf(v.Nonce, "%x", &nonce)
	require.NoError(t, err)
	ts, err := time.Parse(time.RFC3339, "2026-01-01T00:00:00Z")
	require.NoError(t, err)
	s, err := NewHMACSigner("demo-key", v.Secret, WithSignerClock(func() time.Time { return ts }), WithNonceReader(bytes.NewReader(nonce)))
	require.NoError(t, err)
	req := httptest.NewRequest(v.Method, "http://x"+v.Path, strings.NewReader(v.Body))
	require.NoError(t, s.Sign(req, []byte(v.Body)))
	assert.Equal(t, "demo-key", req.Header.Get(HeaderAPIKey))
	assert.Equal(t, v.Timestamp, req.Header.Get(HeaderTimestamp))
	assert.Equal(t, v.Nonce, req.Header.Get(HeaderNonce))
	assert.Equal(t, v.Signature, req.Header.Get(HeaderSignature))
	assert.Empty(t, req.Header.Get(HeaderIdempotencyKey), "the key is not part of signing")
}

func TestHMACSignerNeverPrintsSecret(t *testing.T) {
	s, err := NewHMACSigner("demo-key", "sup3r-s3cret")
	require.NoError(t, err)
	for _, f := range []string{"%v", "%+v", "%#v", "%s"} {
		assert.NotContains(t, fmt.Sprintf(f, s), "sup3r-s3cret")
	}
	_, err = NewHMACSigner("", "x")
	assert.ErrorIs(t, err, ErrInvalidConfig)
}

func TestVerifier(t *testing.T) {
	now := time.Unix(1767225600, 0)
	clock := func() time.Time { return now }
	secrets := func(k string) (string, bool) { return "demo-secret", k == "demo-key" }
	signer, err := NewHMACSigner("demo-key", "demo-secret", WithSignerClock(clock))
	require.NoError(t, err)
	body := []byte(`{"card_id":"c1","amount":"1.00"}`)
	newReq := func() *http.Request {
		r := httptest.NewRequest(http.MethodPost, "http://x/api/v1/openapi/card/recharge?b=2&a=1", bytes.NewReader(body))
		require.NoError(t, signer.Sign(r, body))
		return r
	}

	t.Run("valid, then the same nonce is a replay", func(t *testing.T) {
		v := NewVerifier(secrets, clock)
		r := newReq()
		key, err := v.Verify(r, body)
		require.NoError(t, err)
		assert.Equal(t, "demo-key", key)
		_, err = v.Verify(r, body)
		assertSigCode(t, err, CodeNonceReplayed, ErrNonceReplayed)
	})
	t.Run("key header does not matter", func(t *testing.T) {
		v := NewVerifier(secrets, clock)
		r := newReq()
		r.Header.Set(HeaderIdempotencyKey, "anything-at-all")
		_, err := v.Verify(r, body)
		require.NoError(t, err)
	})
	t.Run("tampered body", func(t *testing.T) {
		v := NewVerifier(secrets, clock)
		_, err := v.Verify(newReq(), []byte(`{"card_id":"c1","amount":"9.00"}`))
		assertSigCode(t, err, CodeSignatureInvalid, ErrSignatureInvalid)
	})
	t.Run("missing header", func(t *testing.T) {
		v := NewVerifier(secrets, clock)
		r := newReq()
		r.Header.Del(HeaderNonce)
		_, err := v.Verify(r, body)
		assertSigCode(t, err, CodeSignatureRequired, ErrSignatureInvalid)
	})
	t.Run("unknown key", func(t *testing.T) {
		v := NewVerifier(secrets, clock)
		r := newReq()
		r.Header.Set(HeaderAPIKey, "other")
		_, err := v.Verify(r, body)
		assertSigCode(t, err, CodeAPIKeyInvalid, ErrUnauthorized)
	})
	t.Run("stale and future timestamps", func(t *testing.T) {
		for _, skew := range []time.Duration{301 * time.Second, -301 * time.Second} {
			v := NewVerifier(secrets, func() time.Time { return now.Add(skew) })
			_, err := v.Verify(newReq(), body)
			assertSigCode(t, err, CodeTimestampExpired, ErrTimestampExpired)
		}
	})
	t.Run("a nonce is remembered while its timestamp is acceptable", func(t *testing.T) {
		// Signed 300 s ahead of the server (the most the window allows),
		// the request's timestamp stays acceptable until now+600 s: the
		// nonce must be remembered at least that long.
		cur := now.Add(-300 * time.Second)
		v := NewVerifier(secrets, func() time.Time { return cur })
		r := newReq()
		_, err := v.Verify(r, body)
		require.NoError(t, err)
		cur = now.Add(300 * time.Second)
		_, err = v.Verify(r, body)
		assertSigCode(t, err, CodeNonceReplayed, ErrNonceReplayed)
	})
	t.Run("nonces are swept after the window", func(t *testing.T) {
		cur := now
		v := NewVerifier(secrets, func() time.Time { return cur })
		for i := 0; i < 20; i++ {
			_, err := v.Verify(newReq(), body)
			require.NoError(t, err)
		}
		assert.Equal(t, 20, v.NonceCount())
		cur = now.Add(11 * time.Minute)
		signer2, _ := NewHMACSigner("demo-key", "demo-secret", WithSignerClock(func() time.Time { return cur }))
		r := httptest.NewRequest(http.MethodGet, "http://x/p", nil)
		require.NoError(t, signer2.Sign(r, nil))
		_, err := v.Verify(r, nil)
		require.NoError(t, err)
		assert.Equal(t, 1, v.NonceCount())
	})
}

func assertSigCode(t *testing.T, err error, code string, kind error) {
	t.Helper()
	var se *SignatureError
	require.True(t, errors.As(err, &se), "want *SignatureError, got %v", err)
	assert.Equal(t, code, se.Code)
	assert.ErrorIs(t, err, kind)
}

func TestHMACSignerRecoverLearnsServerClock(t *testing.T) {
	local := time.Unix(1767225600, 0)
	s, err := NewHMACSigner("k", "s", WithSignerClock(func() time.Time { return local }))
	require.NoError(t, err)
	h := http.Header{}
	h.Set("Date", local.Add(10*time.Minute).UTC().Format(http.TimeFormat))
	assert.False(t, s.Recover(t.Context(), h, &APIError{Kind: ErrSignatureInvalid}))
	assert.True(t, s.Recover(t.Context(), h, &APIError{Kind: ErrTimestampExpired}))
	assert.InDelta(t, float64(10*time.Minute), float64(s.ClockOffset()), float64(time.Second))
	r := httptest.NewRequest(http.MethodGet, "http://x/p", nil)
	require.NoError(t, s.Sign(r, nil))
	assert.Equal(t, fmt.Sprint(local.Add(10*time.Minute).Unix()), r.Header.Get(HeaderTimestamp))
	assert.False(t, s.Recover(t.Context(), http.Header{}, &APIError{Kind: ErrTimestampExpired}), "no Date, no recovery")
}

func FuzzCanonicalString(f *testing.F) {
	f.Add("POST", "/api/v1/openapi/card/apply", "", "1767225600", "00112233445566778899aabbccddeeff", []byte(`{"a":1}`))
	f.Add("get", "/p%20q", "b=2&a=1&a=0", "1", "n", []byte(nil))
	f.Add("GET", "/", "%zz=1&;=2", "x", "y", []byte("\x00"))
	f.Fuzz(func(t *testing.T, method, path, query, ts, nonce string, body []byte) {
		c := CanonicalString(method, path, query, ts, nonce, body)
		if c != CanonicalString(method, path, query, ts, nonce, body) {
			t.Fatal("not deterministic")
		}
		cq := CanonicalQuery(query)
		if CanonicalQuery(cq) != cq {
			t.Fatalf("canonical query not stable: %q -> %q -> %q", query, cq, CanonicalQuery(cq))
		}
		if len(Sign([]byte("k"), c)) != 64 {
			t.Fatal("signature not 64 hex chars")
		}
	})
}

// No fmt verb prints the HMAC secret, neither of the signer nor of a core
// client holding it in an unexported field, where String and GoString are
// out of fmt's reach.
func TestSignerSecretNeverPrinted(t *testing.T) {
	const secret = "hmac-s3cr3t-value"
	s, err := NewHMACSigner("kid", secret)
	require.NoError(t, err)
	c, err := NewClient(WithBaseURL("https://api.example"), WithSigner(s))
	require.NoError(t, err)
	for _, v := range []any{s, c} {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%d", "%x", "%X"} {
			out := fmt.Sprintf(verb, v)
			for _, form := range []string{secret, fmt.Sprint([]byte(secret)), fmt.Sprintf("%x", secret), fmt.Sprintf("%X", secret)} {
				assert.NotContains(t, out, form, "%T %s", v, verb)
			}
		}
	}
}
