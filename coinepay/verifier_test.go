package coinepay

import (
	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/corekit"

	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
		r.Header.Set(corekit.HeaderIdempotencyKey, "anything-at-all")
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
		assertSigCode(t, err, CodeAPIKeyInvalid, payonce.ErrUnauthorized)
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
