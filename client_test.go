package payonce

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payonce/payonce/internal/corekit"
	"github.com/payonce/payonce/internal/testsupport/logtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"

	"github.com/payonce/payonce/redact"
)

// fastPolicy is fastRetryPolicy with a generous attempt timeout: the
// root tests count attempts, and on a loaded -race machine an attempt can
// outlast fastRetryPolicy's 2 s (100 concurrent operations on one core;
// the process's first certificate check) and be retried, rightly. Tests
// about the attempt timeout set their own.
func fastPolicy() RetryPolicy {
	p := fastRetryPolicy()
	p.AttemptTimeout = generousAttemptTimeout
	return p
}

type seen struct {
	Key, Nonce, Timestamp, Signature string
	Body                             string
}

// recorder is an httptest handler that records every attempt and answers
// from a script of statuses (the last one repeats).
type recorder struct {
	mu       sync.Mutex
	attempts []seen
	statuses []int
	header   http.Header
	body     string
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	b, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.attempts = append(r.attempts, seen{
		Key: req.Header.Get(corekit.HeaderIdempotencyKey), Nonce: req.Header.Get("X-Nonce"),
		Timestamp: req.Header.Get("X-Timestamp"), Signature: req.Header.Get("X-Signature"), Body: string(b),
	})
	n := len(r.attempts)
	status := http.StatusOK
	if len(r.statuses) > 0 {
		status = r.statuses[min(n, len(r.statuses))-1]
	}
	for k, v := range r.header {
		w.Header()[k] = v
	}
	body := r.body
	r.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if body == "" {
		body = `{"ok":true}`
	}
	_, _ = io.WriteString(w, body)
}

func (r *recorder) seen() []seen {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]seen(nil), r.attempts...)
}

// setup starts a recorder and a client for it.
func setup(t *testing.T, rec *recorder, opts ...Option) *Client {
	t.Helper()
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	base := []Option{WithBaseURL(srv.URL), WithRetryPolicy(fastPolicy()), WithTestKeyRules(coinepayRules()), WithTestProviderName("test")}
	c, err := NewClient(append(base, opts...)...)
	require.NoError(t, err)
	return c
}

func postReq() *Request {
	return &Request{Operation: "things.create", Method: http.MethodPost, Path: "/things", Body: map[string]any{"amount": "1.00", "b": 2}, Keyed: true}
}

func TestEveryAttemptSameKeyAndBodyFreshSignature(t *testing.T) {
	rec := &recorder{statuses: []int{503, 502, 500, 200}}
	var sec atomic.Int64
	sec.Store(1767225600)
	clock := func() time.Time { return time.Unix(sec.Add(1), 0) } // each signature a second later
	signer := newHMACSigner("k", "s", clock)
	c := setup(t, rec, WithSigner(signer))
	var out struct{ OK bool }
	meta, err := c.Do(context.Background(), postReq(), &out)
	require.NoError(t, err)
	assert.True(t, out.OK)
	assert.Equal(t, 4, meta.Attempts)
	at := rec.seen()
	require.Len(t, at, 4)
	nonces, stamps, sigs := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, a := range at {
		assert.Equal(t, meta.Key.String(), a.Key, "the same key on every attempt")
		assert.Equal(t, at[0].Body, a.Body, "the same body bytes on every attempt")
		nonces[a.Nonce], stamps[a.Timestamp], sigs[a.Signature] = true, true, true
	}
	assert.Len(t, nonces, 4)
	assert.Len(t, stamps, 4)
	assert.Len(t, sigs, 4)
	var body map[string]any
	require.NoError(t, json.Unmarshal([]byte(at[0].Body), &body))
	assert.Equal(t, "1.00", body["amount"])
}

func TestConflictIsTypedAndNotRetried(t *testing.T) {
	rec := &recorder{statuses: []int{409}, body: `{"code":409,"message":"Idempotency-Key 冲突","message_key":"openapi_idempotency_key_conflict","data":null}`}
	c := setup(t, rec)
	_, err := c.Do(context.Background(), postReq(), nil)
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrIdempotencyConflict)
	assert.Len(t, rec.seen(), 1)
	var ae *APIError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "Idempotency-Key 冲突", ae.Message, "messages keep their language")
	assert.Equal(t, "openapi_idempotency_key_conflict", ae.Code)
	assert.Equal(t, ae.Key.String(), KeyOf(err).String())
	assert.Equal(t, 409, ae.StatusCode)
}

func TestBadKeysNeverReachTheServer(t *testing.T) {
	rec := &recorder{}
	c := setup(t, rec) // Coinepay rules
	for _, tc := range []struct {
		opt  CallOption
		want error
	}{
		{WithKey(testKey("has space")), ErrKeyInvalidChars},
		{WithKey(testKey("slash/inside")), ErrKeyInvalidChars},
		{WithKey(testKey(strings.Repeat("k", 129))), ErrKeyTooLong},
		{WithoutKey(), ErrKeyRequired},
	} {
		meta, err := c.Do(context.Background(), postReq(), nil, tc.opt)
		assert.ErrorIs(t, err, tc.want)
		var ke *ValidationError
		assert.ErrorAs(t, err, &ke)
		assert.Zero(t, meta.Attempts)
	}
	a55 := setup(t, rec, WithTestKeyRules(a55Rules()))
	_, err := a55.Do(context.Background(), postReq(), nil, WithKey(testKey("short")))
	assert.ErrorIs(t, err, ErrKeyTooShort)
	assert.Equal(t, "short", KeyOf(err).String())
	assert.Empty(t, rec.seen())
}

func TestValidateRunsBeforeSendingAndKeepsKey(t *testing.T) {
	rec := &recorder{}
	c := setup(t, rec)
	req := postReq()
	req.Validate = func() error { return invalid(ErrInvalidAmount, "amount", "must be greater than 0.00") }
	_, err := c.Do(context.Background(), req, nil, WithKey(testKey("job-7")))
	assert.ErrorIs(t, err, ErrInvalidAmount)
	var ve *ValidationError
	assert.ErrorAs(t, err, &ve)
	assert.Equal(t, "job-7", KeyOf(err).String())
	assert.Empty(t, rec.seen())
}

func TestMalformedAnswerIsAnErrorNotAPanic(t *testing.T) {
	for _, body := range []string{`{"ok":`, `[1,2]`, `"str"`, "\x00\xff"} {
		rec := &recorder{body: body}
		c := setup(t, rec)
		var out struct{ OK bool }
		_, err := c.Do(context.Background(), postReq(), &out)
		assert.ErrorIs(t, err, ErrMalformedResponse, body)
		assert.NotEmpty(t, KeyOf(err).String())
	}
}

func TestReplayHeaderAndRequestIDInMeta(t *testing.T) {
	rec := &recorder{header: http.Header{corekit.HeaderReplay: {"true"}, "X-Request-Id": {"req_123"}}}
	c := setup(t, rec)
	meta, err := c.Do(context.Background(), postReq(), nil)
	require.NoError(t, err)
	assert.True(t, meta.Replayed)
	assert.Equal(t, "req_123", meta.RequestID)
	assert.Equal(t, 200, meta.StatusCode)
	assert.False(t, meta.Key.Created().IsZero())
}

func TestGetSendsNoKeyAndKeepsQueryOutOfErrors(t *testing.T) {
	rec := &recorder{statuses: []int{404}}
	c := setup(t, rec)
	req := &Request{Operation: "cards.info", Method: http.MethodGet, Path: "/card/info", Query: url.Values{"card_id": {"secret-looking-id"}}}
	_, err := c.Do(context.Background(), req, nil)
	assert.ErrorIs(t, err, ErrNotFound)
	assert.NotContains(t, err.Error(), "secret-looking-id")
	assert.Empty(t, rec.seen()[0].Key)
	assert.Empty(t, KeyOf(err).String())
}

// recoverOnce is a signer that fixes a 401 by switching credentials.
type recoverOnce struct {
	token     atomic.Value
	recovered atomic.Int32
}

func (r *recoverOnce) Sign(req *http.Request, _ []byte) error {
	req.Header.Set("Authorization", "Bearer "+r.token.Load().(string))
	return nil
}

func (r *recoverOnce) Recover(_ context.Context, _ http.Header, err *APIError) bool {
	if !errors.Is(err, ErrUnauthorized) {
		return false
	}
	r.recovered.Add(1)
	r.token.Store("fresh")
	return true
}

func TestRecovererRepeatsAttemptOnceWithSameKey(t *testing.T) {
	var keys []string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		keys = append(keys, r.Header.Get(corekit.HeaderIdempotencyKey))
		mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer fresh" {
			w.WriteHeader(401)
			return
		}
		_, _ = io.WriteString(w, `{}`)
	}))
	defer srv.Close()
	s := &recoverOnce{}
	s.token.Store("stale")
	c, err := NewClient(WithBaseURL(srv.URL), WithRetryPolicy(fastPolicy()), WithSigner(s))
	require.NoError(t, err)
	meta, err := c.Do(context.Background(), postReq(), nil)
	require.NoError(t, err)
	assert.Equal(t, 2, meta.Attempts)
	require.Len(t, keys, 2)
	assert.Equal(t, keys[0], keys[1])
	assert.Equal(t, int32(1), s.recovered.Load())

	s.token.Store("revoked-for-good")
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(401) })
	_, err = c.Do(context.Background(), postReq(), nil)
	assert.ErrorIs(t, err, ErrUnauthorized, "recovery is tried once, not forever")
	assert.Equal(t, int32(2), s.recovered.Load())
}

func TestNewClientOptions(t *testing.T) {
	_, err := NewClient()
	assert.ErrorIs(t, err, ErrInvalidConfig, "a base URL is required")
	for _, raw := range []string{"ftp://x", "not a url", "https://", "https://x/?a=1", "https://u:p@x"} {
		_, err = NewClient(WithBaseURL(raw))
		assert.ErrorIs(t, err, ErrInvalidConfig, raw)
	}
	_, err = NewClient(WithBaseURL("http://api.example.com"))
	assert.ErrorIs(t, err, ErrInvalidConfig, "plain http to a remote host")
	for _, ok := range []string{"http://127.0.0.1:8080", "http://localhost:1", "http://[::1]:80", "https://api.example.com/base/"} {
		c, err := NewClient(WithBaseURL(ok))
		require.NoError(t, err, ok)
		assert.False(t, strings.HasSuffix(c.baseURL.String(), "/"))
	}
	_, err = NewClient(WithBaseURL("http://api.example.com"), WithInsecureHTTP())
	assert.NoError(t, err)
	for _, o := range []Option{WithHTTPClient(nil), WithLogger(nil), WithClock(nil), WithProvider(Provider{Codec: (*jsonCodec)(nil)}), WithTestKeyRules(KeyRules{MinLen: 5, MaxLen: 2})} {
		_, err = NewClient(WithBaseURL("https://x"), o)
		assert.ErrorIs(t, err, ErrInvalidConfig)
	}
}

func TestBasePathIsKept(t *testing.T) {
	var path string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { path = r.URL.Path }))
	defer srv.Close()
	c, err := NewClient(WithBaseURL(srv.URL + "/gateway/"))
	require.NoError(t, err)
	_, err = c.Do(context.Background(), &Request{Method: http.MethodGet, Path: "/api/v1/x"}, nil)
	require.NoError(t, err)
	assert.Equal(t, "/gateway/api/v1/x", path)
}

func TestNilRequestIsAnErrorNotAPanic(t *testing.T) {
	c := setup(t, &recorder{})
	_, err := c.Do(context.Background(), nil, nil)
	assert.ErrorIs(t, err, ErrInvalidRequest)
}

// A call may run its attempts longer than 30 s (WithCallTimeout(45*time.Second)
// for a background job, or AttemptTimeout): the default transport must not
// cut the wait for the answer's headers shorter than the attempt's own
// timeout, which always bounds it.
func TestDefaultTransportLeavesTheAttemptTimeoutAlone(t *testing.T) {
	tr := corekit.DefaultHTTPClient().Transport.(*http.Transport)
	assert.Zero(t, tr.ResponseHeaderTimeout, "a fixed header timeout silently caps WithCallTimeout and AttemptTimeout")
	assert.Positive(t, corekit.DefaultHTTPClient().Timeout, "the http.Client alone is still bounded")
}

// The default transport caps the response header bytes.
func TestDefaultTransportCapsResponseHeaders(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for i := range 64 {
			w.Header().Set(fmt.Sprintf("X-Pad-%d", i), strings.Repeat("a", 16<<10))
		}
		_, _ = io.WriteString(w, `{}`)
	}))
	defer srv.Close()
	p := fastPolicy()
	p.MaxAttempts = 1
	c, err := NewClient(WithBaseURL(srv.URL), WithRetryPolicy(p))
	require.NoError(t, err)
	_, err = c.Do(context.Background(), postReq(), nil)
	require.Error(t, err, "1 MiB of headers is refused")
	assert.ErrorIs(t, err, ErrTransport)
	assert.Equal(t, int64(256<<10), corekit.DefaultHTTPClient().Transport.(*http.Transport).MaxResponseHeaderBytes)
}

func TestRedactingHandler(t *testing.T) {
	var buf bytes.Buffer
	l := slog.New(redact.NewHandler(slog.NewTextHandler(&buf, logtest.Options(slog.LevelDebug))))
	l = l.With("secret", "top").WithGroup("g")
	l.Debug("pan 4000000000000002", "cvv", "999", "note", "password=hunter2", "nested", slog.GroupValue(slog.String("token", "t0k")), "card", testCard())
	out := buf.String()
	for _, bad := range []string{"top", "4000000000000002", "999", "hunter2", "t0k", testPAN, testCVV} {
		assert.NotContains(t, out, bad)
	}
	assert.Contains(t, out, "************0002")
	h := redact.NewHandler(slog.DiscardHandler)
	assert.Same(t, h, redact.NewHandler(h), "wrapping twice is a no-op")
}

// A request ID header is server text like any other: the Meta of a result
// and the APIError of a failure both hold it redacted.
func TestRequestIDHeaderRedacted(t *testing.T) {
	rec := &recorder{header: http.Header{"X-Request-Id": {"req token tok_hostile_42 4111 1111 1111 1111"}}}
	c := setup(t, rec)
	meta, err := c.Do(t.Context(), postReq(), nil)
	require.NoError(t, err)
	assert.Equal(t, "req token [REDACTED] **** **** **** 1111", meta.RequestID)
	rec.statuses = []int{400}
	_, err = c.Do(t.Context(), postReq(), nil)
	var ae *APIError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "req token [REDACTED] **** **** **** 1111", ae.RequestID)
}

// A user agent or provider name that would forge a header or a log line,
// or has no bound, is refused by NewClient.
func TestUserAgentAndProviderValidate(t *testing.T) {
	for _, opt := range []Option{
		WithUserAgent("shop/1.0\r\nX-Evil: 1"),
		WithUserAgent(strings.Repeat("u", 1025)),
		WithTestProviderName("a55\nfake"),
		WithTestProviderName(strings.Repeat("p", 65)),
	} {
		_, err := NewClient(WithBaseURL("http://127.0.0.1:1"), opt)
		require.ErrorIs(t, err, ErrInvalidConfig)
		assert.NotContains(t, err.Error(), "\n")
	}
	_, err := NewClient(WithBaseURL("http://127.0.0.1:1"), WithUserAgent("shop/1.0 (+https://shop.example)"), WithTestProviderName("a55"))
	require.NoError(t, err)
}

// A nil pointer in an interface is not a nil interface: a client given
// one passed NewClient and panicked on its first call (the limiter's
// Wait, the signer's Sign, the journal's Reserve on a nil receiver). It
// is refused by NewClient, like a nil interface.
func TestTypedNilDependenciesAreRefused(t *testing.T) {
	for name, opt := range map[string]Option{
		"limiter":     WithLimiter((*rate.Limiter)(nil)),
		"signer":      WithSigner((*hmacSigner)(nil)),
		"signer func": WithSigner(corekit.SignerFunc(nil)),
		"journal":     WithJournal((*nilJournal)(nil)),
		"codec":       WithTestCodec((*jsonCodec)(nil)),
	} {
		_, err := NewClient(WithBaseURL("http://127.0.0.1:1"), opt)
		require.ErrorIs(t, err, ErrInvalidConfig, name)
	}
}

type nilJournal struct{ Journal }

// The defaults: a User-Agent, sane timeouts, and no log output.
func TestClientDefaults(t *testing.T) {
	var ua atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { ua.Store(r.UserAgent()) }))
	defer srv.Close()
	c, err := NewClient(WithBaseURL(srv.URL))
	require.NoError(t, err)
	_, err = c.Do(context.Background(), postReq(), nil)
	require.NoError(t, err)
	assert.Equal(t, defaultUserAgent, ua.Load())
	assert.False(t, c.logger.Enabled(context.Background(), slog.LevelError), "silent by default")
	assert.Equal(t, 60*time.Second, c.httpClient.Timeout)
	tr := c.httpClient.Transport.(*http.Transport)
	assert.Equal(t, 10*time.Second, tr.TLSHandshakeTimeout)
	assert.Zero(t, tr.ResponseHeaderTimeout, "the attempt's timeout bounds the wait for headers")
	c2, err := NewClient(WithBaseURL(srv.URL), WithUserAgent("merchant/1.0"))
	require.NoError(t, err)
	_, err = c2.Do(context.Background(), postReq(), nil)
	require.NoError(t, err)
	assert.Equal(t, "merchant/1.0", ua.Load())
	_, err = NewClient(WithBaseURL(srv.URL), WithSigner(nil))
	assert.ErrorIs(t, err, ErrInvalidConfig)
	_, err = NewClient(WithBaseURL(srv.URL), WithLimiter(nil))
	assert.ErrorIs(t, err, ErrInvalidConfig)
}

// generousAttemptTimeout is a per-attempt timeout no loopback answer
// reaches, even in a loaded -race run, for tests whose point is not the
// timeout (fastRetryPolicy's 2 s can be reached there, and a timed-out
// attempt is rightly retried, which changes the attempt count).
const generousAttemptTimeout = time.Minute

// headerServer starts a test server, closed by t.Cleanup, that keeps a
// copy of every request's headers and answers the n-th request (from 1)
// with answer; headers returns the copies so far.
func headerServer(t *testing.T, answer func(n int, w http.ResponseWriter, r *http.Request)) (srv *httptest.Server, headers func() []http.Header) {
	var mu sync.Mutex
	var got []http.Header
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Clone())
		n := len(got)
		mu.Unlock()
		answer(n, w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []http.Header {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(got)
	}
}
