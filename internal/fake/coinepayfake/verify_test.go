package coinepayfake

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type vector struct {
	Name, Secret, Method, Path, Query, Timestamp, Nonce, Body string
	CanonicalQuery                                            string `json:"canonical_query"`
	Canonical, Signature                                      string
}

func loadVectors(t *testing.T) []vector {
	b, err := os.ReadFile("../../../coinepay/testdata/signing_vectors.json")
	require.NoError(t, err)
	var v struct{ Vectors []vector }
	require.NoError(t, json.Unmarshal(b, &v))
	require.NotEmpty(t, v.Vectors)
	return v.Vectors
}

// The fake's verifier agrees with the published vectors on its own, with
// no code shared with the client's signer.
func TestVerifierAgreesWithVectors(t *testing.T) {
	for _, tv := range loadVectors(t) {
		t.Run(tv.Name, func(t *testing.T) {
			assert.Equal(t, tv.CanonicalQuery, canonicalQuery(tv.Query))
			c := Canonical(tv.Method, tv.Path, tv.Query, tv.Timestamp, tv.Nonce, []byte(tv.Body))
			assert.Equal(t, tv.Canonical, c)
			assert.Equal(t, tv.Signature, Signature(tv.Secret, c))

			target := tv.Path
			if tv.Query != "" {
				target += "?" + tv.Query
			}
			req := httptest.NewRequest(strings.ToUpper(tv.Method), target, strings.NewReader(tv.Body))
			req.Header.Set(HeaderAPIKey, "k")
			req.Header.Set(HeaderTimestamp, tv.Timestamp)
			req.Header.Set(HeaderNonce, tv.Nonce)
			req.Header.Set(HeaderSignature, strings.ToUpper(tv.Signature))
			var sec int64
			require.NoError(t, json.Unmarshal([]byte(tv.Timestamp), &sec))
			now := time.Unix(sec, 0)
			v := newVerifier(map[string]string{"k": tv.Secret}, func() time.Time { return now }, 300*time.Second, 600*time.Second)
			id, code := v.verify(req, []byte(tv.Body))
			assert.Empty(t, code)
			assert.Equal(t, "k", id)
			_, code = v.verify(req, []byte(tv.Body))
			assert.Equal(t, CodeNonceReplayed, code)

			req.Header.Set(HeaderNonce, strings.Repeat("0", 32))
			_, code = v.verify(req, []byte(tv.Body+" "))
			assert.Equal(t, CodeSignatureInvalid, code, "another body")
			now = now.Add(301 * time.Second)
			_, code = v.verify(req, []byte(tv.Body))
			assert.Equal(t, CodeTimestampExpired, code)
		})
	}
}

func TestVerifierRefusals(t *testing.T) {
	now := time.Unix(1767225600, 0)
	v := newVerifier(map[string]string{"k": "s"}, func() time.Time { return now }, 300*time.Second, 600*time.Second)
	req := func(h map[string]string) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/api/v1/openapi/card/list", nil)
		for k, val := range h {
			r.Header.Set(k, val)
		}
		return r
	}
	_, code := v.verify(req(nil), nil)
	assert.Equal(t, CodeSignatureRequired, code)
	full := map[string]string{HeaderAPIKey: "nope", HeaderTimestamp: "1767225600", HeaderNonce: strings.Repeat("a", 32), HeaderSignature: "00"}
	_, code = v.verify(req(full), nil)
	assert.Equal(t, CodeAPIKeyInvalid, code)
	full[HeaderAPIKey] = "k"
	_, code = v.verify(req(full), nil)
	assert.Equal(t, CodeSignatureInvalid, code)
	full[HeaderNonce] = "short"
	_, code = v.verify(req(full), nil)
	assert.Equal(t, CodeSignatureInvalid, code)
	full[HeaderTimestamp] = "99999999999999999999"
	_, code = v.verify(req(full), nil)
	assert.Equal(t, CodeSignatureInvalid, code)
}

func TestCoinepayKeyRules(t *testing.T) {
	r := KeyRules()
	for key, ok := range map[string]bool{"": false, "a": true, strings.Repeat("a", 128): true, strings.Repeat("a", 129): false,
		"abc-._~:XYZ09": true, "a/b": false, "a b": false, "a+b": false} {
		p, _ := r.Check(key)
		assert.Equal(t, ok, p == 0, "%q", key)
	}
}

// signRequest signs req by the scheme as the fake spells it (Canonical,
// Signature), with a fresh nonce at now: the fake's tests sign without the
// client's signer.
func signRequest(t *testing.T, req *http.Request, apiKey, secret string, body []byte, now time.Time) {
	t.Helper()
	raw := make([]byte, 16)
	_, err := rand.Read(raw)
	require.NoError(t, err)
	nonce, ts := hex.EncodeToString(raw), strconv.FormatInt(now.Unix(), 10)
	req.Header.Set(HeaderAPIKey, apiKey)
	req.Header.Set(HeaderTimestamp, ts)
	req.Header.Set(HeaderNonce, nonce)
	req.Header.Set(HeaderSignature, Signature(secret, Canonical(req.Method, req.URL.EscapedPath(), req.URL.RawQuery, ts, nonce, body)))
}
