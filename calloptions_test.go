package payonce

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payonce/payonce/internal/corekit"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// One client, two policies: a per-call retry policy, attempt timeout and
// header apply to that call only.
func TestCallOptionsApplyToOneCall(t *testing.T) {
	t.Parallel() // waits out real attempt timeouts: overlap them
	rec := &recorder{statuses: []int{503}}
	c := setup(t, rec)
	p := fastPolicy()
	p.MaxAttempts = 2
	_, err := c.Do(context.Background(), postReq(), nil, WithCallRetryPolicy(p))
	require.Error(t, err)
	assert.Len(t, rec.seen(), 2, "the call's policy")
	_, err = c.Do(context.Background(), postReq(), nil)
	require.Error(t, err)
	assert.Len(t, rec.seen(), 2+5, "the client's policy again")

	slow := httptest.NewServer(hangFirst())
	defer slow.Close()
	slowPolicy := hangPolicy()
	slowPolicy.AttemptTimeout = generousAttemptTimeout // only the call's timeout can end the hang
	var first AttemptResult
	obs := Observer{EndAttempt: func(_ context.Context, r AttemptResult) {
		if r.Attempt == 1 {
			first = r
		}
	}}
	c, err = NewClient(WithBaseURL(slow.URL), WithRetryPolicy(slowPolicy), WithObserver(obs))
	require.NoError(t, err)
	meta, err := c.Do(context.Background(), postReq(), nil, WithCallTimeout(hangTimeout))
	require.NoError(t, err)
	assert.GreaterOrEqual(t, meta.Attempts, 2, "the first attempt timed out and was retried")
	require.Error(t, first.Err)
	assert.Contains(t, first.Err.Error(), fmt.Sprint("attempt timed out after ", hangTimeout), "the call's timeout")
}

// A per-call header is on every attempt, set before signing, and never
// logged.
func TestWithHeaderIsSentSignedAndNotLogged(t *testing.T) {
	var got []string
	var atSign atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("X-Correlation-Id"))
		if len(got) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, `{}`)
	}))
	defer srv.Close()
	signer := corekit.SignerFunc(func(r *http.Request, _ []byte) error {
		if r.Header.Get("X-Correlation-Id") == "corr-SECRETVALUE" {
			atSign.Add(1)
		}
		return nil
	})
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c, err := NewClient(WithBaseURL(srv.URL), WithRetryPolicy(fastPolicy()), WithSigner(signer), WithLogger(logger))
	require.NoError(t, err)
	_, err = c.Do(context.Background(), postReq(), nil, WithHeader("x-correlation-id", "corr-SECRETVALUE"))
	require.NoError(t, err)
	assert.Equal(t, []string{"corr-SECRETVALUE", "corr-SECRETVALUE"}, got)
	assert.Equal(t, int32(2), atSign.Load(), "the signer sees the header")
	assert.NotEmpty(t, logs.String())
	assert.NotContains(t, logs.String(), "SECRETVALUE")
}

// Invalid per-call options are refused before any byte is sent, with a
// typed error that carries the key and never the header's value.
func TestBadCallOptionsAreRefusedBeforeSending(t *testing.T) {
	rec := &recorder{}
	c := setup(t, rec)
	for _, tc := range []struct {
		opt  CallOption
		kind error
	}{
		{WithHeader("Idempotency-Key", "SECRETVALUE"), ErrInvalidRequest},
		{WithHeader("authorization", "Bearer SECRETVALUE"), ErrInvalidRequest},
		{WithHeader("X-Api-Key", "SECRETVALUE"), ErrInvalidRequest},
		{WithHeader("X-Timestamp", "SECRETVALUE"), ErrInvalidRequest},
		{WithHeader("X-Nonce", "SECRETVALUE"), ErrInvalidRequest},
		{WithHeader("x-signature", "SECRETVALUE"), ErrInvalidRequest},
		{WithHeader("Host", "SECRETVALUE"), ErrInvalidRequest},
		{WithHeader("Content-Type", "SECRETVALUE"), ErrInvalidRequest},
		{WithHeader("Content-Length", "SECRETVALUE"), ErrInvalidRequest},
		{WithHeader("Transfer-Encoding", "SECRETVALUE"), ErrInvalidRequest},
		{WithHeader("X-Ok", "SECRETVALUE\r\nX-Evil: 1"), ErrInvalidRequest},
		{WithHeader("X-Ok", "SECRETVALUE\n"), ErrInvalidRequest},
		{WithHeader("X-Evil\r\nX-Injected", "SECRETVALUE"), ErrInvalidRequest},
		{WithHeader("", "SECRETVALUE"), ErrInvalidRequest},
		{WithHeader("Bad Name", "SECRETVALUE"), ErrInvalidRequest},
		{WithCallRetryPolicy(RetryPolicy{}), ErrInvalidConfig},
		{WithCallTimeout(0), ErrInvalidConfig},
		{WithCallTimeout(-time.Second), ErrInvalidConfig},
	} {
		meta, err := c.Do(context.Background(), postReq(), nil, WithKey(testKey("order-1234567890")), tc.opt)
		require.Error(t, err)
		assert.ErrorIs(t, err, tc.kind, "%v", err)
		assert.ErrorIs(t, err, ErrInvalidRequest, "a refused call option is a refusal of input: %v", err)
		var ae *APIError
		require.ErrorAs(t, err, &ae)
		assert.Equal(t, tc.kind == ErrInvalidConfig, ae.Kind == ErrInvalidConfig, "the kind stays the specific one")
		assert.NotContains(t, err.Error(), "SECRETVALUE")
		assert.NotContains(t, err.Error(), "\n")
		assert.Equal(t, "order-1234567890", KeyOf(err).String())
		assert.False(t, IsTemporary(err))
		assert.Zero(t, meta.Attempts)
	}
	assert.Empty(t, rec.seen(), "nothing was sent")
}

// An effective attempt timeout of zero is refused per call too.
func TestCallPolicyWithoutAnyTimeoutIsRefused(t *testing.T) {
	rec := &recorder{}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	c, err := NewClient(WithBaseURL(srv.URL), WithRetryPolicy(fastPolicy()), WithHTTPClient(&http.Client{}))
	require.NoError(t, err)
	p := fastPolicy()
	p.AttemptTimeout = 0
	_, err = c.Do(context.Background(), postReq(), nil, WithCallRetryPolicy(p))
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrInvalidConfig)
	assert.Empty(t, rec.seen())
	_, err = c.Do(context.Background(), postReq(), nil, WithCallRetryPolicy(p), WithCallTimeout(time.Second))
	require.NoError(t, err)
}

// Servers that fold "_" into "-" (CGI, WSGI, Rack, PHP) read
// Idempotency_Key as Idempotency-Key: a per-call header spelt that way
// could replace the operation's key, so it is refused like the original.
func TestUnderscoreSpellingOfAReservedHeaderIsRefused(t *testing.T) {
	for _, name := range []string{"Idempotency_Key", "idempotency_key", "X_Signature", "x_api_key", "Content_Length", "Transfer_Encoding", "proxy_authorization"} {
		rec := &recorder{}
		c := setup(t, rec)
		_, err := c.Do(context.Background(), postReq(), nil, WithHeader(name, "other-key-123456"))
		require.ErrorIs(t, err, ErrInvalidRequest, name)
		assert.NotEmpty(t, KeyOf(err).String(), name)
		assert.Empty(t, rec.seen(), name)
	}
	rec := &recorder{}
	c := setup(t, rec)
	_, err := c.Do(context.Background(), postReq(), nil, WithHeader("X_Correlation_Id", "abc"))
	require.NoError(t, err, "an underscore name that is no alias stays allowed")
}
