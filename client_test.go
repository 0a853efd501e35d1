package payonce

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fastPolicy retries within milliseconds so tests stay quick.
func fastPolicy() RetryPolicy {
	p := DefaultRetryPolicy()
	p.InitialInterval = time.Millisecond
	p.MaxInterval = 5 * time.Millisecond
	p.MaxRetryAfter = 20 * time.Millisecond
	p.AttemptTimeout = 2 * time.Second
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
		Key: req.Header.Get(HeaderIdempotencyKey), Nonce: req.Header.Get(HeaderNonce),
		Timestamp: req.Header.Get(HeaderTimestamp), Signature: req.Header.Get(HeaderSignature), Body: string(b),
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
	base := []Option{WithBaseURL(srv.URL), WithRetryPolicy(fastPolicy()), WithKeyRules(CoinepayKeyRules()), WithProvider("test")}
	c, err := NewClient(append(base, opts...)...)
	require.NoError(t, err)
	return c
}

func postReq() *Request {
	return &Request{Operation: "things.create", Method: http.MethodPost, Path: "/things", Body: map[string]any{"amount": "1.00", "b": 2}, Keyed: true}
}

func TestSmokeRetrySameKeyAndBody(t *testing.T) {
	rec := &recorder{statuses: []int{503, 502, 200}}
	signer, err := NewHMACSigner("k", "s")
	require.NoError(t, err)
	c := setup(t, rec, WithSigner(signer))
	var out struct{ OK bool }
	meta, err := c.Do(context.Background(), postReq(), &out)
	require.NoError(t, err)
	assert.True(t, out.OK)
	assert.Equal(t, 3, meta.Attempts)
	at := rec.seen()
	require.Len(t, at, 3)
	for _, a := range at {
		assert.Equal(t, meta.Key, a.Key)
		assert.Equal(t, at[0].Body, a.Body)
	}
	assert.NotEqual(t, at[0].Nonce, at[1].Nonce)
	var body map[string]any
	require.NoError(t, json.Unmarshal([]byte(at[0].Body), &body))
}

func TestSmokeConflictNotRetried(t *testing.T) {
	rec := &recorder{statuses: []int{409}, body: `{"code":409,"message":"Idempotency-Key 冲突","message_key":"openapi_idempotency_key_conflict","data":null}`}
	c := setup(t, rec)
	_, err := c.Do(context.Background(), postReq(), nil)
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrIdempotencyConflict))
	assert.Len(t, rec.seen(), 1)
	assert.NotEmpty(t, KeyOf(err))
	var ae *APIError
	require.True(t, errors.As(err, &ae))
	assert.Equal(t, "Idempotency-Key 冲突", ae.Message)
	_ = atomic.Int32{}
}

func TestSmokeExhausted(t *testing.T) {
	rec := &recorder{statuses: []int{503}}
	c := setup(t, rec)
	_, err := c.Do(context.Background(), postReq(), nil)
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrRetriesExhausted)
	assert.ErrorIs(t, err, ErrServer)
	assert.Len(t, rec.seen(), 5)
	t.Log(err)
}
