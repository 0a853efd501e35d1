package coinepay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payonce/payonce/internal/corekit"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
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
	assert.Empty(t, req.Header.Get(corekit.HeaderIdempotencyKey), "the key is not part of signing")
}

func TestHMACSignerNeverPrintsSecret(t *testing.T) {
	s, err := NewHMACSigner("demo-key", "sup3r-s3cret")
	require.NoError(t, err)
	for _, f := range []string{"%v", "%+v", "%#v", "%s"} {
		assert.NotContains(t, fmt.Sprintf(f, s), "sup3r-s3cret")
	}
	_, err = NewHMACSigner("", "x")
	assert.ErrorIs(t, err, payonce.ErrInvalidConfig)
}

func TestHMACSignerRecoverLearnsServerClock(t *testing.T) {
	local := time.Unix(1767225600, 0)
	s, err := NewHMACSigner("k", "s", WithSignerClock(func() time.Time { return local }))
	require.NoError(t, err)
	h := http.Header{}
	h.Set("Date", local.Add(10*time.Minute).UTC().Format(http.TimeFormat))
	assert.False(t, s.Recover(t.Context(), h, &payonce.APIError{Kind: ErrSignatureInvalid}))
	assert.True(t, s.Recover(t.Context(), h, &payonce.APIError{Kind: ErrTimestampExpired}))
	assert.InDelta(t, float64(10*time.Minute), float64(s.ClockOffset()), float64(time.Second))
	r := httptest.NewRequest(http.MethodGet, "http://x/p", nil)
	require.NoError(t, s.Sign(r, nil))
	assert.Equal(t, fmt.Sprint(local.Add(10*time.Minute).Unix()), r.Header.Get(HeaderTimestamp))
	assert.False(t, s.Recover(t.Context(), http.Header{}, &payonce.APIError{Kind: ErrTimestampExpired}), "no Date, no recovery")
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
	c, err := payonce.NewClient(payonce.WithBaseURL("https://api.example"), payonce.WithSigner(s))
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

func TestDocsSigningVectorIsTheRealOne(t *testing.T) {
	raw, err := os.ReadFile("../docs/signing.md")
	require.NoError(t, err)
	page := string(raw)
	v := loadVectors(t)[0]
	assert.Contains(t, page, "secret    "+v.Secret+"\n")
	assert.Contains(t, page, "canonical "+strings.ReplaceAll(v.Canonical, "\n", `\n`)+"\n")
	assert.Contains(t, page, "(body "+v.Body+")")
	assert.Contains(t, page, "signature "+v.Signature+"\n")
}

// The signer reuses keyed HMAC states: signatures made concurrently and
// one after the other stay exactly Sign(secret, canonical), and the four
// header values it sets stay apart.
func TestHMACSignerReusedStatesSignLikeSign(t *testing.T) {
	s, err := NewHMACSigner("demo-key", "demo-secret")
	require.NoError(t, err)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				body := fmt.Sprintf(`{"card_id":"c%d","amount":"%d.00"}`, g, i)
				req := httptest.NewRequest("POST", "http://x/api/v1/openapi/card/recharge?b=2&a=1", strings.NewReader(body))
				if !assert.NoError(t, s.Sign(req, []byte(body))) {
					return
				}
				h := req.Header
				canonical := CanonicalString("POST", "/api/v1/openapi/card/recharge", "b=2&a=1", h.Get(HeaderTimestamp), h.Get(HeaderNonce), []byte(body))
				assert.Equal(t, Sign([]byte("demo-secret"), canonical), h.Get(HeaderSignature))
				assert.Equal(t, "demo-key", h.Get(HeaderAPIKey))
				h.Add(HeaderAPIKey, "second")
				assert.Len(t, h.Get(HeaderTimestamp), 10, "an append to one header leaves the next alone")
				assert.Len(t, h.Get(HeaderNonce), 32)
			}
		}()
	}
	wg.Wait()
}
