package coinepay_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payonce/payonce/internal/corekit"
	"github.com/payonce/payonce/payoncetest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/coinepay"
)

// skewServer verifies signatures against a clock ahead of the local one by
// skew and sends that clock in its Date header, as a real server would.
func skewServer(t *testing.T, skew time.Duration) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	now := func() time.Time { return time.Now().Add(skew) }
	v := coinepay.NewVerifier(func(k string) (string, bool) { return testSecret, k == testAPIKey }, now)
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Date", now().UTC().Format(http.TimeFormat))
		if _, err := v.Verify(r, body); err != nil {
			var se *coinepay.SignatureError
			require.True(t, errors.As(err, &se))
			writeEnvelope(w, http.StatusUnauthorized, se.Code, "时间戳过期或签名无效", nil)
			return
		}
		writeEnvelope(w, http.StatusOK, "success", "成功", map[string]any{"card_id": "card_skew"})
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func TestClockSkewCorrectedOnce(t *testing.T) {
	srv, n := skewServer(t, 10*time.Minute)
	c, err := coinepay.NewClient(testAPIKey, testSecret, payonce.WithBaseURL(srv.URL), payonce.WithRetryPolicy(fastPolicy()))
	require.NoError(t, err)

	res, err := c.Cards.Apply(context.Background(), &coinepay.ApplyRequest{HeaderID: "h", PackageID: "p"})
	require.NoError(t, err)
	assert.Equal(t, "card_skew", res.CardID)
	assert.Equal(t, 2, res.Meta.Attempts, "stale first attempt, corrected second")
	assert.EqualValues(t, 2, n.Load())
	assert.InDelta(t, (10 * time.Minute).Seconds(), c.ClockOffset().Seconds(), 2)

	// The offset is kept: the next call is right the first time.
	info, err := c.Cards.Info(context.Background(), "card_skew")
	require.NoError(t, err)
	assert.Equal(t, 1, info.Meta.Attempts)
}

// The default signer reads the client's clock (payoncetest.ClientClock in tests): a
// client given the server's clock signs right the first time.
func TestDefaultSignerReadsTheClientClock(t *testing.T) {
	srv, n := skewServer(t, 2*time.Hour)
	serverNow := func() time.Time { return time.Now().Add(2 * time.Hour) }
	c, err := coinepay.NewClient(testAPIKey, testSecret, payonce.WithBaseURL(srv.URL),
		payonce.WithRetryPolicy(fastPolicy()), payoncetest.ClientClock(serverNow))
	require.NoError(t, err)
	res, err := c.Cards.Apply(context.Background(), &coinepay.ApplyRequest{HeaderID: "h", PackageID: "p"})
	require.NoError(t, err)
	assert.Equal(t, 1, res.Meta.Attempts)
	assert.EqualValues(t, 1, n.Load())
	assert.Zero(t, c.ClockOffset())
}

func TestClockSkewWithoutDateFails(t *testing.T) {
	now := func() time.Time { return time.Now().Add(-10 * time.Minute) }
	v := coinepay.NewVerifier(func(string) (string, bool) { return testSecret, true }, now)
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		body, _ := io.ReadAll(r.Body)
		w.Header()["Date"] = nil // suppress the Date header
		_, err := v.Verify(r, body)
		require.Error(t, err)
		writeEnvelope(w, http.StatusUnauthorized, "openapi_timestamp_expired", "时间戳过期", nil)
	}))
	t.Cleanup(srv.Close)
	c, err := coinepay.NewClient(testAPIKey, testSecret, payonce.WithBaseURL(srv.URL), payonce.WithRetryPolicy(fastPolicy()))
	require.NoError(t, err)
	_, err = c.Cards.Apply(context.Background(), &coinepay.ApplyRequest{HeaderID: "h", PackageID: "p"})
	require.ErrorIs(t, err, coinepay.ErrTimestampExpired)
	assert.EqualValues(t, 1, n.Load(), "no Date header, nothing to learn, no repeat")
}

func TestCustomSignerReplacesDefault(t *testing.T) {
	var got http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		writeEnvelope(w, http.StatusOK, "success", "成功", map[string]any{"card_id": "c"})
	}))
	t.Cleanup(srv.Close)
	signer := corekit.SignerFunc(func(r *http.Request, _ []byte) error {
		r.Header.Set("Authorization", "Custom scheme")
		return nil
	})
	c, err := coinepay.NewClient(testAPIKey, testSecret, payonce.WithBaseURL(srv.URL), payonce.WithSigner(signer))
	require.NoError(t, err)
	_, err = c.Cards.Info(context.Background(), "c")
	require.NoError(t, err)
	assert.Equal(t, "Custom scheme", got.Get("Authorization"))
	assert.Empty(t, got.Get(coinepay.HeaderSignature))
}

// TestSecretsNeverLogged runs calls that succeed, retry and fail with a
// debug logger and checks that neither the secret, a signature, a nonce nor
// a query string reaches the log or the errors.
func TestSecretsNeverLogged(t *testing.T) {
	var logBuf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logBuf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c, mux, seen := setup(t, payonce.WithLogger(logger))
	var calls atomic.Int32
	mux.HandleFunc("GET "+coinepay.PathCardInfo, func(w http.ResponseWriter, _ *http.Request) {
		if calls.Add(1) == 1 {
			writeEnvelope(w, http.StatusServiceUnavailable, "openapi_internal_error", "稍后重试", nil)
			return
		}
		writeEnvelope(w, http.StatusNotFound, "openapi_card_not_found", "卡片不存在", nil)
	})
	_, err := c.Cards.Info(context.Background(), "card-secret-query-value")
	require.ErrorIs(t, err, payonce.ErrNotFound)

	reqs := seen()
	require.Len(t, reqs, 2)
	text := logBuf.String() + "\n" + err.Error() + "\n" + fmt.Sprintf("%+v %#v", err, err)
	assert.NotEmpty(t, logBuf.String(), "the debug logger was used")
	assert.NotContains(t, text, testSecret)
	assert.NotContains(t, text, "card-secret-query-value")
	for _, r := range reqs {
		assert.NotContains(t, text, r.Header.Get(coinepay.HeaderSignature))
		assert.NotContains(t, text, r.Header.Get(coinepay.HeaderNonce))
	}
	assert.False(t, strings.Contains(text, "card_id="), "no query string")
}
