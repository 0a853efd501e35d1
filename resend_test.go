package payonce_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/payoncetest"
)

// lostFirst is a server whose first keyed POST loses its answer (the
// connection closed, or a bare 502 when bare502), every later one
// answered 200; it counts the POSTs.
func lostFirst(t *testing.T, bare502 bool) (*httptest.Server, *atomic.Int32) {
	var posts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if posts.Add(1) == 1 {
			if bare502 {
				w.WriteHeader(http.StatusBadGateway)
				return
			}
			conn, _, err := http.NewResponseController(w).Hijack()
			require.NoError(t, err)
			_ = conn.Close()
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"op-1"}`))
	}))
	t.Cleanup(srv.Close)
	return srv, &posts
}

// After an attempt whose answer was lost the request's BeforeResend is
// asked, with the key, before anything is sent again: found nothing, the
// attempt is sent; found the operation, or a lookup that cannot tell,
// nothing more is sent and the call is ErrOutcomeUnknown with its key,
// not resumable.
func TestBeforeResendAfterALostAnswer(t *testing.T) {
	for _, bare502 := range []bool{false, true} {
		for name, tc := range map[string]struct {
			found bool
			err   error
			posts int32
		}{
			"nothing found": {posts: 2},
			"found":         {found: true, posts: 1},
			"cannot tell":   {err: errors.New("2 matches"), posts: 1},
		} {
			t.Run(name, func(t *testing.T) {
				srv, posts := lostFirst(t, bare502)
				c, err := payonce.NewClient(payonce.WithBaseURL(srv.URL), payonce.WithRetryPolicy(payoncetest.FastRetryPolicy()))
				require.NoError(t, err)
				var asked []payonce.Key
				_, err = c.Do(context.Background(), &payonce.Request{Operation: "op.create", Method: http.MethodPost, Path: "/op", Body: map[string]int{"a": 1}, Keyed: true,
					BeforeResend: func(_ context.Context, k payonce.Key, ref string) (bool, error) {
						assert.Empty(t, ref, "a call without a reference")
						asked = append(asked, k)
						return tc.found, tc.err
					}}, nil)
				assert.Equal(t, tc.posts, posts.Load())
				require.Len(t, asked, 1)
				if tc.posts == 2 {
					require.NoError(t, err)
					return
				}
				require.ErrorIs(t, err, payonce.ErrOutcomeUnknown)
				assert.False(t, payonce.IsResumable(err))
				assert.Equal(t, asked[0], payonce.KeyOf(err))
				if tc.err != nil {
					assert.Contains(t, err.Error(), "2 matches")
				}
			})
		}
	}
}

// A 5xx carrying a code of the provider's is its own answer, and an
// answer that came is no lost one: BeforeResend is not asked.
func TestBeforeResendNotAskedForAnAnswer(t *testing.T) {
	var posts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if posts.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"error":{"code":"INTERNAL_ERROR","message":"down"}}`))
			return
		}
		_, _ = w.Write([]byte(`{"id":"op-1"}`))
	}))
	t.Cleanup(srv.Close)
	c, err := payonce.NewClient(payonce.WithBaseURL(srv.URL), payonce.WithRetryPolicy(payoncetest.FastRetryPolicy()), payonce.WithTestCodec(lookUpCodec{}))
	require.NoError(t, err)
	asked := 0
	_, err = c.Do(context.Background(), &payonce.Request{Operation: "op.create", Method: http.MethodPost, Path: "/op", Body: map[string]int{"a": 1}, Keyed: true,
		BeforeResend: func(context.Context, payonce.Key, string) (bool, error) { asked++; return false, nil }}, nil)
	require.NoError(t, err)
	assert.Equal(t, int32(2), posts.Load())
	assert.Zero(t, asked)
}

// The attempt that loses its answer is the last the policy allows: the
// request's BeforeResend is asked before the call ends, since a call
// resumed with its key sends it again as a retry would. Found nothing,
// the call ends resumable as before; found the operation, or a lookup
// that cannot tell, it is ErrOutcomeUnknown with its key, not resumable.
// One POST each time.
func TestBeforeResendAfterALostAnswerOnTheLastAttempt(t *testing.T) {
	for _, bare502 := range []bool{false, true} {
		for name, tc := range map[string]struct {
			found bool
			err   error
		}{
			"nothing found": {},
			"found":         {found: true},
			"cannot tell":   {err: errors.New("2 matches")},
		} {
			t.Run(name, func(t *testing.T) {
				srv, posts := lostFirst(t, bare502)
				p := payoncetest.FastRetryPolicy()
				p.MaxAttempts = 1
				c, err := payonce.NewClient(payonce.WithBaseURL(srv.URL), payonce.WithRetryPolicy(p))
				require.NoError(t, err)
				var asked []payonce.Key
				_, err = c.Do(context.Background(), &payonce.Request{Operation: "op.create", Method: http.MethodPost, Path: "/op", Body: map[string]int{"a": 1}, Keyed: true,
					BeforeResend: func(_ context.Context, k payonce.Key, _ string) (bool, error) {
						asked = append(asked, k)
						return tc.found, tc.err
					}}, nil)
				assert.Equal(t, int32(1), posts.Load())
				require.Len(t, asked, 1, "looked up before the call ends")
				assert.Equal(t, asked[0], payonce.KeyOf(err))
				if !tc.found && tc.err == nil {
					require.ErrorIs(t, err, payonce.ErrRetriesExhausted)
					assert.True(t, payonce.IsResumable(err), "nothing ran: resumable with the key")
					return
				}
				require.ErrorIs(t, err, payonce.ErrOutcomeUnknown)
				assert.False(t, payonce.IsResumable(err), "never re-sent blindly")
			})
		}
	}
}

// A call whose context ends right after an attempt whose answer was lost
// cannot look the operation up; ended resumable, a job queue would send
// the key again, which a provider that keeps only 2xx answers executes a
// second time. It ends ErrOutcomeUnknown with its key, not resumable,
// and nothing more is sent.
func TestContextEndingAfterALostAnswerIsNeverResumable(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var posts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		cancel() // the caller gives up while the answer is on its way
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			_ = conn.Close()
		}
	}))
	t.Cleanup(srv.Close)
	c, err := payonce.NewClient(payonce.WithBaseURL(srv.URL), payonce.WithRetryPolicy(payoncetest.FastRetryPolicy()))
	require.NoError(t, err)
	asked := 0
	_, err = c.Do(ctx, &payonce.Request{Operation: "op.create", Method: http.MethodPost, Path: "/op", Body: map[string]int{"a": 1}, Keyed: true,
		BeforeResend: func(context.Context, payonce.Key, string) (bool, error) {
			asked++
			return false, nil
		}}, nil)
	require.ErrorIs(t, err, payonce.ErrOutcomeUnknown)
	assert.False(t, payonce.IsResumable(err), "never resumed blindly")
	assert.NotEmpty(t, payonce.KeyOf(err), "the key comes back to look the operation up")
	assert.Equal(t, int32(1), posts.Load())
	assert.Zero(t, asked, "no lookup runs on an ended context")

	// Without a lookup to ask, the context's end stays what it was.
	ctx2, cancel2 := context.WithCancel(context.Background())
	cancel2()
	_, err = c.Do(ctx2, &payonce.Request{Operation: "op.create", Method: http.MethodPost, Path: "/op", Body: map[string]int{"a": 1}, Keyed: true}, nil)
	require.ErrorIs(t, err, context.Canceled)
}
