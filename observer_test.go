package payonce

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"

	"github.com/payonce/payonce/internal/corekit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// eventLog is an Observer that records every hook call as a line and
// keeps the structured values.
type eventLog struct {
	mu       sync.Mutex
	lines    []string
	starts   []AttemptInfo
	attempts []AttemptResult
	ops      []OperationResult
	opInfo   []OperationInfo
	inject   map[string]string // headers to add on each attempt
	refused  []string
}

type ctxMark struct{}

// observer is the Observer of l's four hooks.
func (l *eventLog) observer() Observer {
	return Observer{StartOperation: l.StartOperation, StartAttempt: l.StartAttempt, EndAttempt: l.EndAttempt, EndOperation: l.EndOperation}
}

func (l *eventLog) StartOperation(ctx context.Context, info OperationInfo) context.Context {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, "op-start "+info.Operation)
	l.opInfo = append(l.opInfo, info)
	return context.WithValue(ctx, ctxMark{}, "op")
}

func (l *eventLog) StartAttempt(ctx context.Context, info AttemptInfo) context.Context {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf("attempt-start %d %s mark=%v", info.Attempt, info.Cause, ctx.Value(ctxMark{})))
	l.starts = append(l.starts, info)
	for k, v := range l.inject {
		if !info.SetHeader(k, v) {
			l.refused = append(l.refused, k)
		}
	}
	return context.WithValue(ctx, ctxMark{}, fmt.Sprint("attempt-", info.Attempt))
}

func (l *eventLog) EndAttempt(ctx context.Context, res AttemptResult) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf("attempt-end %d status=%d retry=%q mark=%v", res.Attempt, res.StatusCode, res.RetryCause, ctx.Value(ctxMark{})))
	l.attempts = append(l.attempts, res)
}

func (l *eventLog) EndOperation(ctx context.Context, res OperationResult) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf("op-end %s attempts=%d retries=%d mark=%v", res.Outcome, res.Attempts, res.Retries, ctx.Value(ctxMark{})))
	l.ops = append(l.ops, res)
}

// Every hook fires in order, once per event: the operation, each attempt
// with the cause and wait of its retry, and the end with the outcome. The
// contexts the observer returns reach the next hooks.
func TestObserverSeesEveryAttemptAndTheOutcome(t *testing.T) {
	rec := &recorder{statuses: []int{503, 429, 200}, header: http.Header{"X-Request-Id": {"req-7"}}}
	obs := &eventLog{}
	c := setup(t, rec, WithObserver(obs.observer()))
	meta, err := c.Do(context.Background(), postReq(), nil, WithKey(testKey("order-42")))
	require.NoError(t, err)
	require.Equal(t, 3, meta.Attempts)

	assert.Equal(t, []string{
		"op-start things.create",
		"attempt-start 1  mark=op",
		`attempt-end 1 status=503 retry="Service Unavailable" mark=attempt-1`,
		"attempt-start 2 Service Unavailable mark=op",
		`attempt-end 2 status=429 retry="Too Many Requests" mark=attempt-2`,
		"attempt-start 3 Too Many Requests mark=op",
		`attempt-end 3 status=200 retry="" mark=attempt-3`,
		"op-end success attempts=3 retries=2 mark=op",
	}, obs.lines)
	op := obs.ops[0]
	assert.Equal(t, "order-42", op.Key)
	assert.Equal(t, "test", op.Provider)
	assert.Equal(t, "/things", op.Route)
	assert.Equal(t, "req-7", op.RequestID)
	assert.Equal(t, 200, op.StatusCode)
	assert.False(t, op.KeyCreated.IsZero())
	assert.Positive(t, op.Duration)
	assert.Same(t, c.budget, obs.opInfo[0].RetryBudget)
	for _, a := range obs.attempts {
		assert.Equal(t, "order-42", a.Key)
		assert.Equal(t, "req-7", a.RequestID)
	}
	assert.Positive(t, obs.attempts[0].RetryWait)
	assert.Equal(t, obs.attempts[0].RetryWait, obs.starts[1].Wait, "the wait reported is the one chosen")
	assert.Zero(t, obs.starts[0].Wait)
}

// A lost answer is an attempt that ends with an error and no status; a
// replayed answer is marked.
func TestObserverSeesLostAnswersAndReplays(t *testing.T) {
	rec := &recorder{header: http.Header{corekit.HeaderReplay: {"true"}}}
	h, _ := hijackFirst(1, rec)
	srv := httptest.NewServer(h)
	defer srv.Close()
	obs := &eventLog{}
	c, err := NewClient(WithBaseURL(srv.URL), WithRetryPolicy(fastPolicy()), WithObserver(obs.observer()))
	require.NoError(t, err)
	meta, err := c.Do(context.Background(), postReq(), nil)
	require.NoError(t, err)
	require.True(t, meta.Replayed)
	require.Len(t, obs.attempts, 2)
	lost := obs.attempts[0]
	assert.Zero(t, lost.StatusCode)
	assert.Error(t, lost.Err)
	assert.Equal(t, "transport", lost.RetryCause)
	assert.True(t, obs.attempts[1].Replayed)
	assert.Equal(t, "transport", obs.starts[1].Cause)
	assert.True(t, obs.ops[0].Replayed)
	assert.Equal(t, 1, obs.ops[0].Retries)
}

// A failed operation ends with the kind's outcome, the error and the
// key; a final status is not retried and its attempt has no retry cause.
func TestObserverSeesFailures(t *testing.T) {
	cases := []struct {
		statuses []int
		outcome  string
		attempts int
	}{
		{[]int{409}, "idempotency_conflict", 1},
		{[]int{503}, "retries_exhausted", 5},
		{[]int{400}, "invalid_request", 1},
	}
	for _, tc := range cases {
		t.Run(tc.outcome, func(t *testing.T) {
			obs := &eventLog{}
			c := setup(t, &recorder{statuses: tc.statuses}, WithObserver(obs.observer()))
			_, err := c.Do(context.Background(), postReq(), nil)
			require.Error(t, err)
			require.Len(t, obs.ops, 1)
			op := obs.ops[0]
			assert.Equal(t, tc.outcome, op.Outcome)
			assert.Equal(t, err, op.Err)
			assert.Equal(t, KeyOf(err).String(), op.Key)
			assert.Equal(t, tc.attempts, op.Attempts)
			assert.Len(t, obs.attempts, tc.attempts, "every attempt ends once")
			assert.Empty(t, obs.attempts[len(obs.attempts)-1].RetryCause, "no retry follows the last attempt")
			assert.Equal(t, tc.statuses[0], op.StatusCode)
		})
	}
}

// Input refused before anything is sent still starts and ends the
// operation, with no attempt.
func TestObserverSeesValidationFailureWithoutAttempts(t *testing.T) {
	rec := &recorder{}
	obs := &eventLog{}
	c := setup(t, rec, WithObserver(obs.observer()))
	_, err := c.Do(context.Background(), postReq(), nil, WithKey(testKey("bad key with spaces")))
	require.Error(t, err)
	assert.Equal(t, []string{"op-start things.create", "op-end key_invalid_chars attempts=0 retries=0 mark=op"}, obs.lines)
	assert.Empty(t, rec.seen())
}

// The headers an observer adds reach each attempt before it is signed
// (the signature covers the request as sent); the SDK's own headers
// cannot be replaced.
func TestObserverHeadersAreSetBeforeSigning(t *testing.T) {
	srv, headers := headerServer(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, `{}`)
	})
	var signedWith []string
	signer := signerFunc(func(r *http.Request, _ []byte) error {
		signedWith = append(signedWith, r.Header.Get("Traceparent"))
		r.Header.Set("Authorization", "Bearer t")
		return nil
	})
	obs := &eventLog{inject: map[string]string{
		"traceparent":     "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
		"Idempotency-Key": "hijacked", "Authorization": "Bearer evil", "content-type": "text/plain",
	}}
	c, err := NewClient(WithBaseURL(srv.URL), WithRetryPolicy(fastPolicy()), WithSigner(signer), WithObserver(obs.observer()))
	require.NoError(t, err)
	meta, err := c.Do(context.Background(), postReq(), nil)
	require.NoError(t, err)
	got := headers()
	require.Len(t, got, 2)
	for _, h := range got {
		assert.Equal(t, "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", h.Get("Traceparent"))
		assert.Equal(t, meta.Key.String(), h.Get(corekit.HeaderIdempotencyKey))
		assert.Equal(t, "Bearer t", h.Get("Authorization"))
		assert.Equal(t, "application/json", h.Get("Content-Type"))
	}
	assert.Equal(t, []string{"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}, signedWith)
	assert.NotContains(t, fmt.Sprintf("%v %+v %#v", obs.starts, obs.starts, obs.starts), "Bearer", "a kept AttemptInfo never shows the signed headers")
	assert.ElementsMatch(t, []string{"Idempotency-Key", "Authorization", "content-type", "Idempotency-Key", "Authorization", "content-type"}, obs.refused)
}

type signerFunc func(*http.Request, []byte) error

func (f signerFunc) Sign(r *http.Request, body []byte) error { return f(r, body) }

// The attempt's request carries the context StartAttempt returned, so a
// transport below the SDK (otelhttp, a logger) sees the attempt's span.
func TestAttemptRequestCarriesObserverContext(t *testing.T) {
	rec := &recorder{}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	var marks []any
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		marks = append(marks, r.Context().Value(ctxMark{}))
		return http.DefaultTransport.RoundTrip(r)
	})}
	c, err := NewClient(WithBaseURL(srv.URL), WithHTTPClient(hc), WithObserver((&eventLog{}).observer()))
	require.NoError(t, err)
	_, err = c.Do(context.Background(), postReq(), nil)
	require.NoError(t, err)
	assert.Equal(t, []any{"attempt-1"}, marks)
}

// A signer recovery repeats the attempt: the observer sees the repeat
// with the cause "signer_recovery".
func TestObserverSeesSignerRecovery(t *testing.T) {
	s := &recoverOnce{}
	s.token.Store("stale")
	obs := &eventLog{}
	c := setup(t, &recorder{statuses: []int{401, 200}}, WithSigner(s), WithObserver(obs.observer()))
	_, err := c.Do(context.Background(), postReq(), nil)
	require.NoError(t, err)
	require.Len(t, obs.starts, 2)
	assert.Equal(t, corekit.CauseSignerRecovery, obs.starts[1].Cause)
	assert.Equal(t, 401, obs.attempts[0].StatusCode)
	assert.Equal(t, 1, obs.ops[0].Retries)
}

// Nothing handed to a hook holds the query string, a card number or a
// token, whatever the server echoes.
func TestObserverSeesNoSecrets(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Request-Id", "req-1")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"message_key":"bad","message":"card 4111111111111111 `+r.URL.RawQuery+`"}`)
	}))
	defer srv.Close()
	obs := &eventLog{}
	c, err := NewClient(WithBaseURL(srv.URL), WithRetryPolicy(fastPolicy()), WithObserver(obs.observer()))
	require.NoError(t, err)
	req := &Request{Operation: "cards.get", Method: http.MethodGet, Path: "/cards/4111111111111111/x", Query: url.Values{"token": {"SECRETQ123"}}}
	_, err = c.Do(context.Background(), req, nil)
	require.Error(t, err)
	dump := fmt.Sprintf("%+v %+v %+v %+v", obs.opInfo, obs.starts, obs.attempts, obs.ops)
	for _, o := range obs.ops {
		dump += o.Err.Error()
	}
	assert.NotContains(t, dump, "4111111111111111")
	assert.NotContains(t, dump, "SECRETQ123")
	assert.Contains(t, dump, "/cards/{id}/x")
}

// An Observer's nil hooks are skipped; several observers given to
// WithObserver chain contexts.
func TestObserverNilHooksAndSeveralObservers(t *testing.T) {
	var retries []string
	var ends int
	funcs := Observer{
		EndAttempt: func(_ context.Context, r AttemptResult) {
			if r.RetryCause != "" {
				retries = append(retries, r.RetryCause)
			}
		},
		EndOperation: func(context.Context, OperationResult) { ends++ },
	}
	log := &eventLog{}
	c := setup(t, &recorder{statuses: []int{502, 200}}, WithObserver(log.observer(), Observer{}, funcs))
	_, err := c.Do(context.Background(), postReq(), nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"Bad Gateway"}, retries)
	assert.Equal(t, 1, ends)
	assert.Len(t, log.ops, 1)

	c = setup(t, &recorder{}, WithObserver())
	assert.Nil(t, c.observer, "an empty set is no observer")
	c = setup(t, &recorder{}, WithObserver(Observer{}, Observer{}))
	assert.Nil(t, c.observer, "observers without hooks are no observer")
}

// Each start hook gets the context the one before it returned, the given
// one when it returned nil; the end hooks get the last one.
func TestSeveralObserversChainContexts(t *testing.T) {
	type mark struct{}
	var seen []any
	tag := func(v string) Observer {
		return Observer{
			StartOperation: func(ctx context.Context, _ OperationInfo) context.Context {
				seen = append(seen, ctx.Value(mark{}))
				if v == "" {
					return nil
				}
				return context.WithValue(ctx, mark{}, v)
			},
			StartAttempt: func(ctx context.Context, _ AttemptInfo) context.Context {
				seen = append(seen, ctx.Value(mark{}))
				return ctx
			},
		}
	}
	var end any
	last := Observer{EndOperation: func(ctx context.Context, _ OperationResult) { end = ctx.Value(mark{}) }}
	c := setup(t, &recorder{}, WithObserver(tag("a"), tag(""), tag("b"), last))
	_, err := c.Do(context.Background(), postReq(), nil)
	require.NoError(t, err)
	assert.Equal(t, []any{nil, "a", "a", "b", "b", "b"}, seen)
	assert.Equal(t, "b", end)
}

// Each observer's end hooks get the context its own start hook returned,
// not one a later observer derived from it: a tracer chained before
// another ends its own span.
func TestSeveralObserversEachEndWithTheirOwnContext(t *testing.T) {
	type mark struct{}
	ends := map[string][]any{}
	tag := func(v string) Observer {
		return Observer{
			StartOperation: func(ctx context.Context, _ OperationInfo) context.Context {
				return context.WithValue(ctx, mark{}, v+"-op")
			},
			StartAttempt: func(ctx context.Context, _ AttemptInfo) context.Context {
				return context.WithValue(ctx, mark{}, v+"-attempt")
			},
			EndAttempt: func(ctx context.Context, _ AttemptResult) {
				ends[v] = append(ends[v], ctx.Value(mark{}))
			},
			EndOperation: func(ctx context.Context, _ OperationResult) {
				ends[v] = append(ends[v], ctx.Value(mark{}))
			},
		}
	}
	endOnly := Observer{EndOperation: func(ctx context.Context, _ OperationResult) {
		ends["end-only"] = append(ends["end-only"], ctx.Value(mark{}))
	}}
	c := setup(t, &recorder{statuses: []int{502, 200}}, WithObserver(tag("a"), endOnly, tag("b")))
	_, err := c.Do(context.Background(), postReq(), nil)
	require.NoError(t, err)
	assert.Equal(t, []any{"a-attempt", "a-attempt", "a-op"}, ends["a"])
	assert.Equal(t, []any{"b-attempt", "b-attempt", "b-op"}, ends["b"])
	assert.Equal(t, []any{"a-op"}, ends["end-only"], "an observer after a sees a's context")
}

// A joined set's end hooks never read the contexts another client's set
// kept: a client called with a context another client's observers
// returned (a token fetch from inside a signer) ends with its own.
func TestJoinedObserversOfTwoClientsKeepApart(t *testing.T) {
	type mark struct{}
	tag := func(v string) Observer {
		return Observer{StartOperation: func(ctx context.Context, _ OperationInfo) context.Context {
			return context.WithValue(ctx, mark{}, v)
		}, EndOperation: func(context.Context, OperationResult) {}}
	}
	var aCtx context.Context
	capture := Observer{StartAttempt: func(ctx context.Context, _ AttemptInfo) context.Context {
		aCtx = ctx // the operation's context, as a's attempt request carries it
		return nil
	}}
	a := setup(t, &recorder{}, WithObserver(tag("a1"), tag("a2"), capture))
	_, err := a.Do(context.Background(), postReq(), nil)
	require.NoError(t, err)
	require.NotNil(t, aCtx)

	var seen []any
	end := func() Observer {
		return Observer{EndOperation: func(ctx context.Context, _ OperationResult) { seen = append(seen, ctx.Value(mark{})) }}
	}
	b := setup(t, &recorder{}, WithObserver(end(), end()))
	_, err = b.Do(context.WithoutCancel(aCtx), postReq(), nil) // a ended; its values stay
	require.NoError(t, err)
	assert.Equal(t, []any{"a2", "a2"}, seen, "b's observers end with the context b was called with")
}

func TestRoute(t *testing.T) {
	cases := map[string]string{
		"/api/v1/bank/wallet/charge/":                             "/api/v1/bank/wallet/charge/",
		"/api/v1/openapi/card/apply":                              "/api/v1/openapi/card/apply",
		"/v1/charges/5f0c6a1e-3b9d-4c1f-9e0a-2f6b7d8c9e01/refund": "/v1/charges/{id}/refund",
		"/v1/charges/12345":                                       "/v1/charges/{id}",
		"/v1/cards/card_8f3k2j":                                   "/v1/cards/{id}",
		"/v1/users/a%40b.example/x":                               "/v1/users/{id}/x",
		"/v1/cards/4111111111111111?token=SECRET":                 "/v1/cards/{id}",
		"/v1/charges/{charge_uuid}/capture":                       "/v1/charges/{charge_uuid}/capture",
		"/api/v2/things":                                          "/api/v2/things",
		"/wallets/ZXhhbXBsZS10b2tlbi12YWx1ZQ":                     "/wallets/{id}",
		"":                                                        "",
		"/":                                                       "/",
		"/a/b:c":                                                  "/a/{id}",
		"/v1/bank/wallet/0123456789abcdef0123456789abcdef/charge/list": "/v1/bank/wallet/{id}/charge/list",
	}
	for in, want := range cases {
		assert.Equal(t, want, route(in), in)
	}
}

// A Request's own Route wins over the derived one.
func TestRequestRouteWins(t *testing.T) {
	obs := &eventLog{}
	c := setup(t, &recorder{}, WithObserver(obs.observer()))
	req := postReq()
	req.Path, req.Route = "/things/abc", "/things/{thing}"
	_, err := c.Do(context.Background(), req, nil)
	require.NoError(t, err)
	assert.Equal(t, "/things/{thing}", obs.ops[0].Route)
}

func TestOutcome(t *testing.T) {
	assert.Equal(t, "success", outcome(nil))
	assert.Equal(t, "error", outcome(io.EOF))
	assert.Equal(t, "card_declined", outcome(&APIError{Kind: testErrCardDeclined}))
	assert.Equal(t, "canceled", outcome(fmt.Errorf("wrapped: %w", &APIError{Kind: context.Canceled})))
	assert.Equal(t, "error", outcome(&APIError{}))
	assert.Equal(t, "server", outcome(&APIError{Kind: ErrServer}), "the journal's names")
}

// A same-origin redirect hop belongs to its attempt: the observer sees one
// attempt, and the hop carries the headers the observer added (its trace
// context).
func TestRedirectHopIsPartOfTheObservedAttempt(t *testing.T) {
	var mu sync.Mutex
	var traceparents []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		traceparents = append(traceparents, r.Header.Get("Traceparent"))
		mu.Unlock()
		if r.URL.Path == "/things" {
			http.Redirect(w, r, "/things/v2", http.StatusTemporaryRedirect)
			return
		}
		_, _ = io.WriteString(w, `{}`)
	}))
	defer srv.Close()
	var marks []any
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		marks = append(marks, r.Context().Value(ctxMark{}))
		return http.DefaultTransport.RoundTrip(r)
	})}
	obs := &eventLog{inject: map[string]string{"Traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}
	c, err := NewClient(WithBaseURL(srv.URL), WithHTTPClient(hc), WithRetryPolicy(fastPolicy()), WithObserver(obs.observer()))
	require.NoError(t, err)
	meta, err := c.Do(context.Background(), postReq(), nil)
	require.NoError(t, err)
	assert.Equal(t, 1, meta.Attempts)
	assert.Len(t, obs.starts, 1, "a hop is not an attempt")
	assert.Len(t, obs.attempts, 1)
	assert.Equal(t, []string{"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}, traceparents)
	assert.Equal(t, []any{"attempt-1", "op"}, marks, "the hop runs on its own context, below the operation's")
}

// A signer that cannot sign for now (ErrSignerTemporary) costs a place in
// the schedule but sends nothing: the observer sees that attempt end
// unsent, and Meta.Attempts counts only what was sent.
func TestObserverSeesUnsentAttempt(t *testing.T) {
	failed := false
	signer := signerFunc(func(*http.Request, []byte) error {
		if !failed {
			failed = true
			return fmt.Errorf("%w: token endpoint answered 503 for card 4111111111111111", ErrSignerTemporary)
		}
		return nil
	})
	obs := &eventLog{}
	rec := &recorder{}
	c := setup(t, rec, WithSigner(signer), WithObserver(obs.observer()))
	meta, err := c.Do(context.Background(), postReq(), nil)
	require.NoError(t, err)
	assert.Equal(t, 1, meta.Attempts)
	assert.Len(t, rec.seen(), 1)
	require.Len(t, obs.attempts, 2)
	assert.False(t, obs.attempts[0].Sent)
	assert.ErrorIs(t, obs.attempts[0].Err, ErrSignerTemporary)
	assert.NotContains(t, obs.attempts[0].Err.Error(), "4111111111111111", "an attempt's error text is redacted")
	assert.NotEmpty(t, obs.attempts[0].RetryCause)
	assert.True(t, obs.attempts[1].Sent)
	assert.Equal(t, 1, obs.ops[0].Attempts)
}

// onRetry returns an option that runs fn once, when the client has chosen
// its first retry's wait and is about to sleep: the observer's end of the
// attempt a retry follows. Tests use it instead of a timer to act "during
// the wait", whatever the machine's load.
func onRetry(fn func()) Option {
	var once sync.Once
	return WithObserver(Observer{EndAttempt: func(_ context.Context, r AttemptResult) {
		if r.RetryCause != "" {
			once.Do(fn)
		}
	}})
}
