package payonce

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payonce/payonce/internal/corekit"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A 2xx whose body is cut short on the last attempt is a temporary
// transport failure with its cause, resumable with the key.
func TestCutShortSuccessOnLastAttemptKeepsItsCause(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { cutShort(w) }))
	defer srv.Close()
	p := fastPolicy()
	p.MaxAttempts = 2
	c, err := NewClient(WithBaseURL(srv.URL), WithRetryPolicy(p))
	require.NoError(t, err)
	_, err = c.Do(context.Background(), postReq(), nil)
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrRetriesExhausted)
	assert.ErrorIs(t, err, ErrTransport)
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
	assert.NotErrorIs(t, err, ErrMalformedResponse)
	assert.True(t, IsTemporary(err))
	assert.NotEmpty(t, KeyOf(err).String())

	// Without a retry left to the loop (an unkeyed GET with one attempt):
	// still a transport failure with its cause.
	p.MaxAttempts = 1
	c, err = NewClient(WithBaseURL(srv.URL), WithRetryPolicy(p))
	require.NoError(t, err)
	_, err = c.Do(context.Background(), &Request{Operation: "x.get", Method: http.MethodGet, Path: "/x"}, nil)
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrTransport)
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
	assert.NotErrorIs(t, err, ErrMalformedResponse)
}

// An oversized 2xx means the operation ran: temporary and resumable, not
// final, and not retried (the same answer would come back).
func TestOversizedSuccessIsTemporary(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		_, _ = io.WriteString(w, `{"pad":"`)
		chunk := strings.Repeat("x", 1<<20)
		for range 17 {
			_, _ = io.WriteString(w, chunk)
		}
		_, _ = io.WriteString(w, `"}`)
	}))
	defer srv.Close()
	// 17 MiB through a loaded -race run can take longer than
	// fastRetryPolicy's 2 s: a timed-out read is rightly retried, which
	// is not what this test is about.
	p := fastPolicy()
	p.AttemptTimeout = generousAttemptTimeout
	c, err := NewClient(WithBaseURL(srv.URL), WithRetryPolicy(p))
	require.NoError(t, err)
	_, err = c.Do(context.Background(), postReq(), nil)
	require.Error(t, err)
	assert.True(t, IsTemporary(err), "%v", err)
	assert.ErrorIs(t, err, ErrTransport)
	assert.NotErrorIs(t, err, ErrMalformedResponse)
	assert.Contains(t, err.Error(), "larger than")
	assert.NotEmpty(t, KeyOf(err).String())
	assert.Equal(t, int32(1), n.Load())
}

// An operation without a key whose answer was lost cannot be resumed: a
// second run would be a second operation.
func TestUnkeyedPostLostAnswerIsNotTemporary(t *testing.T) {
	h, _ := hijackFirst(100, &recorder{})
	srv := httptest.NewServer(h)
	defer srv.Close()
	c, err := NewClient(WithBaseURL(srv.URL), WithRetryPolicy(fastPolicy()))
	require.NoError(t, err)
	_, err = c.Do(context.Background(), postReq(), nil, WithoutKey())
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrTransport)
	assert.False(t, IsTemporary(err), "no key: never resumable")
	_, err = c.Do(context.Background(), &Request{Operation: "x.create", Method: http.MethodPost, Path: "/x", Body: map[string]int{"a": 1}}, nil)
	require.Error(t, err)
	assert.False(t, IsTemporary(err), "an unkeyed POST is not resumable either")

	// A GET is idempotent: it stays temporary.
	_, err = c.Do(context.Background(), &Request{Operation: "x.get", Method: http.MethodGet, Path: "/x"}, nil)
	require.Error(t, err)
	assert.True(t, IsTemporary(err))
}

// The give-up error of exhausted retries never holds the query string.
func TestExhaustedErrorHasNoQueryString(t *testing.T) {
	rec := &recorder{statuses: []int{503}}
	c := setup(t, rec)
	req := &Request{Operation: "cards.list", Method: http.MethodGet, Path: "/cards", Query: url.Values{"token": {"SECRETQ123"}}}
	_, err := c.Do(context.Background(), req, nil)
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrRetriesExhausted)
	assert.NotContains(t, err.Error(), "SECRETQ123")
	assert.NotContains(t, err.Error(), "token=")
	assert.Len(t, rec.seen(), 5, "a GET is retried without a key")
}

// An expired context is never retried.
func TestExpiredContextIsNotRetried(t *testing.T) {
	rec := &recorder{statuses: []int{503}}
	p := fastPolicy()
	p.MaxAttempts = 100
	p.InitialInterval, p.MaxInterval = 20*time.Millisecond, 20*time.Millisecond
	// No jitter: waits of exactly 20 ms fit at most three attempts in the
	// 50 ms (with ±50% jitter, four 10 ms waits could fit a fifth).
	p.RandomizationFactor = 0
	c := setup(t, rec, WithRetryPolicy(p))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := c.Do(ctx, postReq(), nil)
	require.Error(t, err)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.NotEmpty(t, KeyOf(err).String())
	assert.LessOrEqual(t, len(rec.seen()), 4)
}

// A context that ends while an attempt is in flight leaves the operation in
// doubt (the server may have executed it): the error is temporary, so a job
// queue that branches on IsTemporary resumes it with the same key instead
// of giving up on it.
func TestContextEndedInFlightIsTemporaryAndResumable(t *testing.T) {
	var mu sync.Mutex
	executed := map[string]int{}
	var arrived atomic.Pointer[chan struct{}] // the current operation's: its first attempt reached the server
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get(corekit.HeaderIdempotencyKey)
		mu.Lock()
		executed[key]++
		first := executed[key] == 1
		mu.Unlock()
		if first {
			// Committed; the answer comes only after the client gave up.
			_, _ = io.Copy(io.Discard, r.Body)
			close(*arrived.Load())
			<-r.Context().Done()
			return
		}
		_, _ = io.WriteString(w, `{}`)
	}))
	defer srv.Close()
	c, err := NewClient(WithBaseURL(srv.URL), WithRetryPolicy(fastPolicy()))
	require.NoError(t, err)
	for _, end := range []func(context.Context) (context.Context, context.CancelFunc){
		func(ctx context.Context) (context.Context, context.CancelFunc) {
			return context.WithTimeout(ctx, 30*time.Millisecond)
		},
		func(ctx context.Context) (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(ctx)
			in := *arrived.Load()
			go func() { <-in; cancel() }() // once the attempt is in flight
			return ctx, cancel
		},
	} {
		in := make(chan struct{})
		arrived.Store(&in)
		ctx, cancel := end(context.Background())
		_, err = c.Do(ctx, postReq(), nil)
		cancel()
		require.Error(t, err)
		assert.True(t, IsTemporary(err), "an operation cut off in flight must be resumed, not dropped: %v", err)
		key := KeyOf(err).String()
		require.NotEmpty(t, key)
		meta, err := c.Do(context.Background(), postReq(), nil, WithKey(KeyOf(err)))
		require.NoError(t, err)
		assert.Equal(t, key, meta.Key.String(), "resumed with the same key")
	}
}

// adviceCodec is the core codec with a provider's advice on some codes
// (corekit.Advice) and the kind it gives them.
type adviceTestCodec map[string]struct {
	kind   error
	advice corekit.Advice
}

func (adviceTestCodec) DecodeSuccess(status int, h http.Header, body []byte, out any) error {
	return jsonCodec{}.DecodeSuccess(status, h, body, out)
}

func (a adviceTestCodec) DecodeError(status int, h http.Header, body []byte, e *APIError) {
	jsonCodec{}.DecodeError(status, h, body, e)
	e.Kind = a[e.Code].kind
}

func (a adviceTestCodec) Advise(e *APIError) corekit.Advice { return a[e.Code].advice }

var codesAdvice = adviceTestCodec{
	"AGAIN":   {ErrServer, corekit.Advice{Retry: corekit.RetrySameKey}},
	"LATER":   {ErrServer, corekit.Advice{Retry: corekit.RetrySameKey, NotBefore: time.Minute}},
	"UNKNOWN": {ErrOutcomeUnknown, corekit.Advice{Retry: corekit.RetryNever}},
}

// sleeps is a client's sleep (corekit.WithSleep) that moves a clock on
// instead of sleeping, and records each wait.
type sleeps struct {
	mu    sync.Mutex
	now   time.Time
	waits []time.Duration
}

func (s *sleeps) Now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.now
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = s.now.Add(d)
	s.waits = append(s.waits, d)
	return ctx.Err()
}

func (s *sleeps) all() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}

func newSleeps() (*sleeps, []Option) {
	s := &sleeps{now: time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)}
	return s, []Option{WithClock(s.Now), WithSleep(s.sleep)}
}

// A code that asks for a retry under the key is retried whatever its
// status (a 400 here), with the same key and body; one that leaves the
// outcome unknown is never retried, whatever its status (a 503 here), and
// is neither final nor resumable.
func TestCodecAdviceOverridesTheStatusTable(t *testing.T) {
	rec := &recorder{statuses: []int{400, 400, 200}, body: `{"code":"AGAIN","message":"try again"}`}
	c := setup(t, rec, WithTestCodec(codesAdvice))
	meta, err := c.Do(context.Background(), postReq(), nil)
	require.NoError(t, err)
	assert.Equal(t, 3, meta.Attempts)
	got := rec.seen()
	require.Len(t, got, 3)
	for _, a := range got {
		assert.Equal(t, got[0].Key, a.Key)
		assert.Equal(t, got[0].Body, a.Body)
	}

	rec = &recorder{statuses: []int{503}, body: `{"code":"UNKNOWN","message":"no answer from upstream"}`}
	c = setup(t, rec, WithTestCodec(codesAdvice))
	meta, err = c.Do(context.Background(), postReq(), nil)
	require.ErrorIs(t, err, ErrOutcomeUnknown)
	assert.NotErrorIs(t, err, ErrServer)
	assert.Len(t, rec.seen(), 1, "never retried blindly")
	assert.Equal(t, 1, meta.Attempts)
	assert.False(t, IsResumable(err))
	assert.Equal(t, meta.Key.String(), KeyOf(err).String())
	var ae *APIError
	require.ErrorAs(t, err, &ae)
	assert.False(t, Provider{}.FinalForKey(ae))
}

// A provider's least wait is waited in full, on the client's sleep (a
// fake clock here, no real sleep), before the next attempt with the same
// key and body.
func TestCodecLeastWaitIsNeverShortened(t *testing.T) {
	rec := &recorder{statuses: []int{400, 200}, body: `{"code":"LATER","message":"come back in a minute"}`}
	s, opts := newSleeps()
	p := fastPolicy()
	p.MaxRetryAfter, p.MaxElapsedTime = 2*time.Minute, 5*time.Minute
	c := setup(t, rec, append(opts, WithTestCodec(codesAdvice), WithRetryPolicy(p))...)
	start := s.Now()
	meta, err := c.Do(context.Background(), postReq(), nil)
	require.NoError(t, err)
	assert.Equal(t, 2, meta.Attempts)
	waits := s.all()
	require.Len(t, waits, 1)
	assert.GreaterOrEqual(t, waits[0], time.Minute)
	assert.GreaterOrEqual(t, s.Now().Sub(start), time.Minute)
	got := rec.seen()
	require.Len(t, got, 2)
	assert.Equal(t, got[0].Key, got[1].Key)
	assert.Equal(t, got[0].Body, got[1].Body)
}

// A least wait the policy (MaxRetryAfter, MaxElapsedTime) or the context
// cannot afford ends the call at once, resumable with its key and never
// final, the wait it would have needed in its text; nothing is waited.
func TestCodecLeastWaitTheCallCannotAffordEndsResumable(t *testing.T) {
	short := fastPolicy()
	short.MaxRetryAfter = 30 * time.Second
	elapsed := fastPolicy()
	elapsed.MaxRetryAfter, elapsed.MaxElapsedTime = 2*time.Minute, 30*time.Second
	long := fastPolicy()
	long.MaxRetryAfter, long.MaxElapsedTime = 2*time.Minute, 0
	for name, tc := range map[string]struct {
		policy  RetryPolicy
		timeout time.Duration
		why     string
	}{
		"max retry after":  {short, 0, "MaxRetryAfter"},
		"max elapsed time": {elapsed, 0, "MaxElapsedTime"},
		"context deadline": {long, 30 * time.Second, "deadline"},
	} {
		t.Run(name, func(t *testing.T) {
			rec := &recorder{statuses: []int{400, 200}, body: `{"code":"LATER","message":"come back in a minute"}`}
			s, opts := newSleeps()
			c := setup(t, rec, append(opts, WithTestCodec(codesAdvice), WithRetryPolicy(tc.policy))...)
			ctx := context.Background()
			if tc.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.timeout)
				defer cancel()
			}
			_, err := c.Do(ctx, postReq(), nil, WithKey(testKeyAt("least-wait-key-1", s.Now())))
			require.ErrorIs(t, err, ErrRetriesExhausted)
			assert.ErrorIs(t, err, ErrServer)
			assert.True(t, IsResumable(err))
			assert.Equal(t, "least-wait-key-1", KeyOf(err).String())
			assert.Contains(t, err.Error(), "1m0s before the next attempt")
			assert.Contains(t, err.Error(), tc.why)
			assert.Len(t, rec.seen(), 1)
			assert.Empty(t, s.all(), "nothing waited")
			var ae *APIError
			require.ErrorAs(t, err, &ae)
			assert.False(t, Provider{}.FinalForKey(ae))
		})
	}
}

// A refused redirect is final for its key only when the request cannot
// have run, whatever the provider's final kinds: a 307 never ran, a 303
// answering a POST may have.
func TestRedirectFinalForKey(t *testing.T) {
	p := Provider{FinalKinds: []error{ErrInvalidRequest, testErrCardDeclined}}
	assert.True(t, p.FinalForKey(&APIError{Kind: ErrRedirectRefused, StatusCode: 307}), "a 307 never ran")
	assert.False(t, p.FinalForKey(&APIError{Kind: ErrRedirectRefused, StatusCode: 303,
		Err: fmt.Errorf("%w: %w", ErrRedirectRefused, errRedirectRan)}), "a 303 to a POST may have run")
	assert.True(t, p.FinalForKey(&APIError{Kind: testErrCardDeclined, StatusCode: 402}))
	assert.False(t, p.FinalForKey(nil))
}
