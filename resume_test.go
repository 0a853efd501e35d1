package payonce_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payonce/payonce"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestResumeTokenRoundTrip(t *testing.T) {
	created := time.Date(2026, 11, 28, 10, 11, 12, 13, time.UTC)
	tok := payonce.Meta{Key: "order-2026-000123", KeyCreated: created}.ResumeToken()
	require.True(t, strings.HasPrefix(tok, "po1."))
	assert.NotContains(t, tok, "order-2026", "opaque")
	got, err := payonce.ParseResumeToken(tok)
	require.NoError(t, err)
	assert.Equal(t, "order-2026-000123", got.Key)
	assert.True(t, created.Equal(got.Created))
	assert.Empty(t, payonce.Meta{}.ResumeToken())
	assert.Empty(t, payonce.ResumeTokenOf(nil))
	assert.Equal(t, tok, payonce.ResumeTokenOf(&payonce.APIError{Key: "order-2026-000123", KeyCreated: created}))
}

func TestParseResumeTokenRefusesGarbage(t *testing.T) {
	for _, s := range []string{"", "po1.", "po2.eyJrIjoiYSJ9", "po1.!!!", "po1." + strings.Repeat("A", 2000),
		"po1.bnVsbA",                           // null
		"po1.eyJrIjoiIiwidCI6MX0",              // empty key
		"po1.eyJrIjoiYWJjZGVmZ2hpamtsbW5vcCJ9", // no time
		"po1.eyJrIjoiYWJjXG5kZWYiLCJ0IjoxfQ",   // control character in key
		"4111111111111111"} {
		_, err := payonce.ParseResumeToken(s)
		require.ErrorIs(t, err, payonce.ErrInvalidRequest, s)
		assert.NotContains(t, err.Error(), "4111111111111111")
	}
}

func TestWithResumeTokenBadTokenSendsNothing(t *testing.T) {
	s := newStub(t, okCharge)
	c := journalClient(t, s, nil, newClock())
	_, err := c.Do(t.Context(), chargeReq("1.00"), nil, payonce.WithResumeToken("po1.garbage"))
	require.ErrorIs(t, err, payonce.ErrInvalidRequest)
	assert.Zero(t, s.calls.Load())
}

// A key stored as a resume token in one process keeps its creation time in
// another: 23.5 hours later the guard refuses to send it (with KeyOf alone
// the age was lost and the key went out).
func TestResumeTokenKeepsTheKeyAgeAcrossProcesses(t *testing.T) {
	s := newStub(t, func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusBadGateway) })
	clk := newClock()
	c := journalClient(t, s, nil, clk)
	_, err := c.Do(t.Context(), chargeReq("1.00"), nil)
	require.Error(t, err)
	tok := payonce.ResumeTokenOf(err)
	require.NotEmpty(t, tok)
	sent := s.calls.Load()

	clk.Advance(23*time.Hour + 30*time.Minute)
	other := journalClient(t, s, nil, clk) // another process
	_, err2 := other.Do(context.Background(), chargeReq("1.00"), nil, payonce.WithResumeToken(tok))
	require.ErrorIs(t, err2, payonce.ErrKeyExpired)
	assert.Equal(t, sent, s.calls.Load(), "nothing sent")
	assert.Equal(t, payonce.KeyOf(err), payonce.KeyOf(err2))

	// Within the window it resumes with the same key.
	clk2 := newClock()
	clk2.Advance(time.Hour)
	fresh := journalClient(t, s, nil, clk2)
	_, err3 := fresh.Do(context.Background(), chargeReq("1.00"), nil, payonce.WithResumeToken(tok))
	require.Error(t, err3)
	keys := s.sentKeys()
	assert.Equal(t, payonce.KeyOf(err), keys[len(keys)-1])

	// ResumeContext restores the creation time too.
	_, err4 := other.Do(payonce.ResumeContext(context.Background(), err), chargeReq("1.00"), nil)
	require.ErrorIs(t, err4, payonce.ErrKeyExpired)
}

// A job redelivered 25 hours later: its key carries the job's creation
// time, so the guard refuses it instead of opening a second card.
func TestWithTaskKeyRefusesARedeliveryPastTheWindow(t *testing.T) {
	s := newStub(t, okCharge)
	clk := newClock()
	jobCreated := clk.Now()
	clk.Advance(25 * time.Hour)
	c := journalClient(t, s, nil, clk)
	ctx := payonce.WithTaskKey(context.Background(), "openapi:apply", "job-42-0000000000", jobCreated)
	_, err := c.Do(ctx, chargeReq("1.00"), nil)
	require.ErrorIs(t, err, payonce.ErrKeyExpired)
	assert.Zero(t, s.calls.Load())
	assert.Equal(t, "openapi:apply:job-42-0000000000", payonce.KeyOf(err))

	fresh := journalClient(t, s, nil, newClock())
	meta, err := fresh.Do(ctx, chargeReq("1.00"), nil)
	require.NoError(t, err)
	assert.True(t, jobCreated.Equal(meta.KeyCreated))
}

func FuzzParseResumeToken(f *testing.F) {
	f.Add(payonce.Meta{Key: "order-2026-000123", KeyCreated: time.Unix(1764412800, 5)}.ResumeToken())
	f.Add("po1.")
	f.Add("po1.eyJrIjoiIiwidCI6MX0")
	f.Fuzz(func(t *testing.T, s string) {
		tok, err := payonce.ParseResumeToken(s)
		if err != nil {
			require.ErrorIs(t, err, payonce.ErrInvalidRequest)
			return
		}
		again, err := payonce.ParseResumeToken(tok.String())
		require.NoError(t, err)
		assert.Equal(t, tok.Key, again.Key)
		assert.True(t, tok.Created.Equal(again.Created))
	})
}

// A job stores the resume token of a failed charge; a later run, in any
// process, resumes the very same operation: same key, same creation time.
func ExampleWithResumeToken() {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		_, _ = io.WriteString(w, `{"charge_uuid":"ch_1"}`)
	}))
	defer srv.Close()
	policy := payonce.FastRetryPolicy()
	policy.MaxAttempts = 1
	client, _ := payonce.NewClient(payonce.WithBaseURL(srv.URL), payonce.WithRetryPolicy(policy))
	req := &payonce.Request{Operation: "charges.create", Method: http.MethodPost, Path: "/charge/", Body: map[string]string{"amount": "1.00"}, Keyed: true}

	_, err := client.Do(context.Background(), req, nil, payonce.WithIdempotencyKey("order-2026-000777"))
	token := payonce.ResumeTokenOf(err) // store it with the job

	meta, err := client.Do(context.Background(), req, nil, payonce.WithResumeToken(token))
	fmt.Println(meta.Key, err)
	// Output: order-2026-000777 <nil>
}
