package payonce

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payonce/payonce/internal/corekit"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hopLog records every request a test server receives.
type hopLog struct {
	mu   sync.Mutex
	hops []*http.Request
	body []string
}

func (l *hopLog) add(r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.hops = append(l.hops, r)
	l.body = append(l.body, string(b))
}

func (l *hopLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.hops)
}

// bearerSigner sets a bearer token like the A55 authorizer and an HMAC
// signature like Coinepay's, and counts its calls.
type bearerSigner struct {
	calls atomic.Int32
	hmac  *hmacSigner
}

func (s *bearerSigner) Sign(r *http.Request, body []byte) error {
	s.calls.Add(1)
	r.Header.Set("Authorization", "Bearer TOKEN-SECRET-123")
	return s.hmac.Sign(r, body)
}

func newBearerSigner(t *testing.T) *bearerSigner {
	return &bearerSigner{hmac: newHMACSigner("key-id", "hmac-secret", nil)}
}

func cardReq() *Request {
	return &Request{Operation: "charges.create", Method: http.MethodPost, Path: "/charge", Keyed: true,
		Body: map[string]any{"card": map[string]any{"number": "4111111111111111", "cvv": "123"}}}
}

// A redirect of a POST to another origin is refused: the other host never
// receives the token, the key, a signature or the card, and the error
// carries the key and says why. A 307/308 asks for the request elsewhere
// (it did not run): final. A 301/302/303 usually means the POST ran:
// resumable with the key.
func TestRedirectToAnotherOriginIsRefused(t *testing.T) {
	for _, status := range []int{http.StatusTemporaryRedirect, http.StatusPermanentRedirect,
		http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther} {
		mayHaveRun := status < http.StatusTemporaryRedirect
		other := &hopLog{}
		evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			other.add(r)
			_, _ = io.WriteString(w, `{"status":"confirmed"}`)
		}))
		defer evil.Close()
		var originHits atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			originHits.Add(1)
			http.Redirect(w, r, evil.URL+"/steal?x=1", status)
		}))
		defer srv.Close()
		sig := newBearerSigner(t)
		c, err := NewClient(WithBaseURL(srv.URL), WithRetryPolicy(fastPolicy()), WithSigner(sig))
		require.NoError(t, err)
		var out map[string]any
		meta, err := c.Do(context.Background(), cardReq(), &out)
		require.Error(t, err, "status %d", status)
		assert.Zero(t, other.len(), "another origin must receive nothing (status %d)", status)
		assert.ErrorIs(t, err, ErrRedirectRefused)
		var re *redirectError
		require.ErrorAs(t, err, &re)
		assert.Equal(t, status, re.StatusCode)
		assert.Contains(t, err.Error(), "another origin")
		assert.NotContains(t, err.Error(), "steal", "no path or query of the target")
		assert.NotContains(t, err.Error(), "malformed")
		assert.Equal(t, mayHaveRun, IsTemporary(err), "status %d", status)
		assert.Equal(t, mayHaveRun, IsResumable(err), "status %d", status)
		assert.NotEmpty(t, KeyOf(err).String())
		var ae *APIError
		require.ErrorAs(t, err, &ae)
		assert.False(t, ae.Key.Created().IsZero())
		assert.Equal(t, 1, meta.Attempts)
		assert.Equal(t, int32(1), originHits.Load(), "not retried")
		assert.Equal(t, int32(1), sig.calls.Load(), "only the origin's request is signed")
	}
}

// A 301/302/303 after a POST would turn it into a body-less GET signed for
// the original body: refused, same origin or not, and nothing is sent. But
// such an answer usually means the POST ran (RFC 9110: a 303 points at its
// result), so the error is temporary and resumable with the key: a new key
// could charge twice.
func TestRedirectChangingMethodIsRefused(t *testing.T) {
	for _, status := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther} {
		log := &hopLog{}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			log.add(r)
			if r.URL.Path == "/charge" {
				http.Redirect(w, r, "/elsewhere", status)
				return
			}
			_, _ = io.WriteString(w, `{}`)
		}))
		defer srv.Close()
		c, err := NewClient(WithBaseURL(srv.URL), WithRetryPolicy(fastPolicy()), WithSigner(newBearerSigner(t)))
		require.NoError(t, err)
		_, err = c.Do(context.Background(), cardReq(), nil)
		require.Error(t, err)
		assert.ErrorIs(t, err, ErrRedirectRefused, "status %d", status)
		assert.Contains(t, err.Error(), "method")
		assert.True(t, IsTemporary(err), "the POST may have run (status %d)", status)
		assert.True(t, IsResumable(err), "resume with the same key (status %d)", status)
		var re *redirectError
		require.ErrorAs(t, err, &re)
		assert.True(t, re.MayHaveRun)
		assert.NotEmpty(t, KeyOf(err).String())
		assert.Equal(t, 1, log.len(), "the GET is never sent (status %d)", status)
	}
}

// A GET refused a redirect to another origin stays final: nothing ran.
func TestGetRedirectToAnotherOriginStaysFinal(t *testing.T) {
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer evil.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, evil.URL+"/x", http.StatusFound)
	}))
	defer srv.Close()
	c, err := NewClient(WithBaseURL(srv.URL), WithRetryPolicy(fastPolicy()))
	require.NoError(t, err)
	_, err = c.Do(context.Background(), &Request{Operation: "charges.get", Method: http.MethodGet, Path: "/charge/1"}, nil)
	require.ErrorIs(t, err, ErrRedirectRefused)
	assert.False(t, IsTemporary(err))
}

// A GET may follow a same-origin 302.
func TestGetFollowsSameOriginRedirect(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/old" {
			http.Redirect(w, r, "/new", http.StatusFound)
			return
		}
		_, _ = io.WriteString(w, `{"ok":true}`)
	}))
	defer srv.Close()
	c, err := NewClient(WithBaseURL(srv.URL), WithRetryPolicy(fastPolicy()))
	require.NoError(t, err)
	var out struct{ OK bool }
	meta, err := c.Do(context.Background(), &Request{Operation: "x.get", Method: http.MethodGet, Path: "/old"}, &out)
	require.NoError(t, err)
	assert.True(t, out.OK)
	assert.Equal(t, 1, meta.Attempts)
}

// A same-origin 307 keeps the method, the body and the key, is signed
// afresh, and is one attempt: MaxAttempts 1 is enough.
func TestSameOriginRedirectIsOneAttempt(t *testing.T) {
	log := &hopLog{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.add(r)
		if r.URL.Path == "/charge" {
			http.Redirect(w, r, "/charge/v2", http.StatusTemporaryRedirect)
			return
		}
		_, _ = io.WriteString(w, `{"ok":true}`)
	}))
	defer srv.Close()
	p := fastPolicy()
	p.MaxAttempts = 1
	sig := newBearerSigner(t)
	c, err := NewClient(WithBaseURL(srv.URL), WithRetryPolicy(p), WithSigner(sig))
	require.NoError(t, err)
	var out struct{ OK bool }
	meta, err := c.Do(context.Background(), cardReq(), &out)
	require.NoError(t, err)
	assert.True(t, out.OK)
	assert.Equal(t, 1, meta.Attempts, "a hop is not an attempt")
	require.Equal(t, 2, log.len())
	log.mu.Lock()
	defer log.mu.Unlock()
	assert.Equal(t, log.body[0], log.body[1], "same body bytes")
	assert.Equal(t, meta.Key.String(), log.hops[1].Header.Get(corekit.HeaderIdempotencyKey))
	assert.Equal(t, http.MethodPost, log.hops[1].Method)
	assert.NotEqual(t, log.hops[0].Header.Get("X-Nonce"), log.hops[1].Header.Get("X-Nonce"), "the hop is signed afresh")
	assert.Equal(t, int32(2), sig.calls.Load())
}

// A 3xx the http.Client does not follow says so, instead of "malformed
// response".
func TestUnfollowedRedirectSaysWhy(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/moved", http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	hc := &http.Client{Timeout: 0, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	p := fastPolicy()
	c, err := NewClient(WithBaseURL(srv.URL), WithRetryPolicy(p), WithHTTPClient(hc))
	require.NoError(t, err)
	_, err = c.Do(context.Background(), postReq(), nil)
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrRedirectRefused)
	assert.False(t, errors.Is(err, ErrMalformedResponse), "%v", err)
	assert.Contains(t, err.Error(), "not followed")
	assert.False(t, IsTemporary(err))
	assert.NotEmpty(t, KeyOf(err).String())
}

// A 303 the http.Client does not follow, answering a POST, is resumable
// with the key: the POST may have run.
func TestUnfollowedSeeOtherAfterPostIsResumable(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/result", http.StatusSeeOther)
	}))
	defer srv.Close()
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	c, err := NewClient(WithBaseURL(srv.URL), WithRetryPolicy(fastPolicy()), WithHTTPClient(hc))
	require.NoError(t, err)
	_, err = c.Do(context.Background(), postReq(), nil)
	require.ErrorIs(t, err, ErrRedirectRefused)
	assert.True(t, IsResumable(err), "%v", err)
}

// The per-attempt transport itself never signs nor sends a request for
// another origin, whatever let it through.
func TestAttemptTransportRefusesAnotherOrigin(t *testing.T) {
	sig := newBearerSigner(t)
	var sent atomic.Int32
	next := roundTripFunc(func(*http.Request) (*http.Response, error) { sent.Add(1); return nil, errors.New("sent") })
	c, err := NewClient(WithBaseURL("https://api.example"), WithSigner(sig), WithHTTPClient(&http.Client{Transport: next, Timeout: time.Second}))
	require.NoError(t, err)
	op := &operation{c: c, ctx: context.Background(), req: cardReq(), policy: c.policy, timeout: time.Second}
	ctx := context.WithValue(context.Background(), operationKey{}, op)
	tr := &attemptTransport{c: c}
	for _, target := range []string{"https://evil.example/charge", "http://api.example/charge", "https://api.example:8443/charge"} {
		r, err := http.NewRequestWithContext(ctx, http.MethodPost, target, nil)
		require.NoError(t, err)
		_, err = tr.RoundTrip(r)
		assert.ErrorIs(t, err, ErrRedirectRefused, target)
		assert.Empty(t, r.Header.Get("Authorization"))
	}
	assert.Zero(t, sig.calls.Load())
	assert.Zero(t, sent.Load())
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, "https://API.example:443/charge", nil)
	require.NoError(t, err)
	_, _ = tr.RoundTrip(r)
	assert.Equal(t, int32(1), sig.calls.Load(), "the configured origin, default port and any case, is signed")
	assert.Equal(t, int32(1), sent.Load())
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// A redirect whose Location cannot be parsed is refused like any other
// redirect: final, not retried, and the Location (its query above all)
// stays out of the error and its causes.
func TestUnparseableLocationIsARefusedRedirectWithoutItsQuery(t *testing.T) {
	var n int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n++
		w.Header().Set("Location", "/x%zz?session=SECRETVALUE")
		w.WriteHeader(http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	c, err := NewClient(WithBaseURL(srv.URL), WithRetryPolicy(fastPolicy()))
	require.NoError(t, err)
	_, err = c.Do(context.Background(), postReq(), nil)
	require.ErrorIs(t, err, ErrRedirectRefused)
	assert.False(t, IsTemporary(err))
	assert.Equal(t, 1, n, "a redirect is not retried")
	var ae *APIError
	require.ErrorAs(t, err, &ae)
	assert.NotEmpty(t, ae.Key)
	assert.False(t, ae.Key.Created().IsZero())
	assert.Equal(t, http.StatusTemporaryRedirect, ae.StatusCode)
	for e := error(ae); e != nil; e = errors.Unwrap(e) {
		assert.NotContains(t, e.Error(), "SECRETVALUE")
	}
	assert.NotContains(t, ae.Err.Error(), "SECRETVALUE")
}

// urlRecorder records the URL of every request its transport sends.
type urlRecorder struct {
	mu   sync.Mutex
	urls []string
	next http.RoundTripper
}

func (u *urlRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	u.mu.Lock()
	u.urls = append(u.urls, r.URL.Scheme+"://"+r.URL.Host)
	u.mu.Unlock()
	return u.next.RoundTrip(r)
}

func TestRedirectToPlainHTTPIsRefused(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://payments.example/things", http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	rt := &urlRecorder{next: srv.Client().Transport}
	c, err := NewClient(WithBaseURL(srv.URL), WithRetryPolicy(fastPolicy()), WithHTTPClient(&http.Client{Transport: rt}))
	require.NoError(t, err)
	req := postReq()
	req.Body = map[string]any{"card": map[string]any{"number": "4111111111111111", "cvv": "123"}}
	_, err = c.Do(context.Background(), req, nil)
	require.Error(t, err)
	assert.NotEmpty(t, KeyOf(err).String())
	rt.mu.Lock()
	defer rt.mu.Unlock()
	for _, u := range rt.urls {
		assert.NotEqual(t, "http://payments.example", u, "the card must never be re-sent over plain http")
	}
}
