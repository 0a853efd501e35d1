package payonce

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"
)

// rawServer answers every connection with the raw bytes of answer after
// reading the request head, then closes the connection.
func rawServer(t *testing.T, answer string) (string, *atomic.Int32) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	var n atomic.Int32
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			go func() {
				defer func() { _ = conn.Close() }()
				r := bufio.NewReader(conn)
				req, err := http.ReadRequest(r)
				if err != nil {
					return
				}
				_, _ = io.Copy(io.Discard, req.Body)
				_, _ = io.WriteString(conn, answer)
			}()
		}
	}()
	return "http://" + l.Addr().String(), &n
}

// A server announcing 16 MiB and sending 10 bytes costs the client what it
// sent, not what it announced.
func TestAnnouncedLengthIsNotPreallocated(t *testing.T) {
	url, _ := rawServer(t, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 16000000\r\n\r\n{\"a\":1234}")
	p := fastPolicy()
	p.MaxAttempts = 1
	c, err := NewClient(WithBaseURL(url), WithRetryPolicy(p))
	require.NoError(t, err)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = c.Do(context.Background(), postReq(), nil)
	runtime.ReadMemStats(&after)
	require.Error(t, err)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(4<<20), "bytes allocated for a 10-byte answer")
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
	assert.Equal(t, int64(maxResponseHeaderBytes), DefaultHTTPClient().Transport.(*http.Transport).MaxResponseHeaderBytes)
}

// An attempt must always have a timeout.
func TestAttemptWithoutTimeoutIsRefused(t *testing.T) {
	p := fastPolicy()
	p.AttemptTimeout = 0
	_, err := NewClient(WithBaseURL("https://api.example"), WithRetryPolicy(p), WithHTTPClient(&http.Client{}))
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrInvalidConfig)
	_, err = NewClient(WithBaseURL("https://api.example"), WithRetryPolicy(p), WithHTTPClient(&http.Client{Timeout: time.Second}))
	require.NoError(t, err, "the http.Client's own timeout is enough")
	_, err = NewClient(WithBaseURL("https://api.example"), WithRetryPolicy(p))
	require.NoError(t, err, "the default http.Client has a timeout")
}

// The limiter's wait happens before the attempt's timer starts: a wait
// longer than the attempt timeout is not a transport failure.
func TestLimiterWaitIsOutsideTheAttemptTimeout(t *testing.T) {
	rec := &recorder{}
	p := fastPolicy()
	// The second call waits 3 s for the limiter, longer than the 2 s
	// attempt timeout, which still leaves an attempt on a loaded machine
	// ample time for a loopback answer.
	p.AttemptTimeout = 2 * time.Second
	lim := rate.NewLimiter(rate.Every(3*time.Second), 1)
	c := setup(t, rec, WithRetryPolicy(p), WithLimiter(lim))
	for range 2 {
		meta, err := c.Do(context.Background(), postReq(), nil)
		require.NoError(t, err)
		assert.Equal(t, 1, meta.Attempts)
	}
	assert.Len(t, rec.seen(), 2)
}

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
	assert.NotEmpty(t, KeyOf(err).ID())

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
	// FastRetryPolicy's 2 s: a timed-out read is rightly retried, which
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
	assert.NotEmpty(t, KeyOf(err).ID())
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

// HEAD, 204 and 304 answers have no body, whatever Content-Length says.
func TestAnswersWithoutBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodHead:
			w.Header().Set("Content-Length", "1234")
			w.WriteHeader(http.StatusOK)
		case r.Header.Get("If-None-Match") != "":
			w.WriteHeader(http.StatusNotModified)
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	}))
	defer srv.Close()
	p := fastPolicy()
	p.MaxAttempts = 1
	c, err := NewClient(WithBaseURL(srv.URL), WithRetryPolicy(p))
	require.NoError(t, err)
	meta, err := c.Do(context.Background(), &Request{Operation: "x.head", Method: http.MethodHead, Path: "/x"}, nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, meta.StatusCode)
	var out map[string]any
	meta, err = c.Do(context.Background(), &Request{Operation: "x.delete", Method: http.MethodDelete, Path: "/x"}, &out)
	require.NoError(t, err)
	assert.Equal(t, http.StatusNoContent, meta.StatusCode)
	meta, err = c.Do(context.Background(), &Request{Operation: "x.get", Method: http.MethodGet, Path: "/x"}, &out, WithHeader("If-None-Match", `"v1"`))
	require.NoError(t, err)
	assert.Equal(t, http.StatusNotModified, meta.StatusCode)
}

// TLS failures that a retry cannot mend are not retried: a protocol
// version the server refuses, and plain HTTP where TLS was expected.
func TestTLSProtocolFailuresAreNotRetried(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	srv.TLS = &tls.Config{MinVersion: tls.VersionTLS13}
	srv.StartTLS()
	defer srv.Close()
	tr := srv.Client().Transport.(*http.Transport).Clone()
	tr.TLSClientConfig.MaxVersion = tls.VersionTLS12
	rt := &urlRecorder{next: tr}
	c, err := NewClient(WithBaseURL(srv.URL), WithRetryPolicy(fastPolicy()), WithHTTPClient(&http.Client{Transport: rt}))
	require.NoError(t, err)
	meta, err := c.Do(context.Background(), postReq(), nil)
	require.Error(t, err)
	assert.NotErrorIs(t, err, ErrRetriesExhausted, "%v", err)
	assert.Equal(t, 1, meta.Attempts)
	assert.Len(t, rt.urls, 1)
	assert.Zero(t, hits.Load())

	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer plain.Close()
	c, err = NewClient(WithBaseURL(strings.Replace(plain.URL, "http://", "https://", 1)), WithRetryPolicy(fastPolicy()))
	require.NoError(t, err)
	meta, err = c.Do(context.Background(), postReq(), nil)
	require.Error(t, err)
	assert.NotErrorIs(t, err, ErrRetriesExhausted, "%v", err)
	assert.Equal(t, 1, meta.Attempts)
}

func TestRetryableErrorTLSShapes(t *testing.T) {
	for _, err := range []error{
		tls.AlertError(70),
		tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"},
		errors.New("http: server gave HTTP response to HTTPS client"),
		&net.OpError{Op: "remote error", Err: fakeAlert("tls: protocol version not supported")},
		&net.OpError{Op: "local error", Err: fakeAlert("tls: unexpected message")},
		x509.UnknownAuthorityError{},
		x509.CertificateInvalidError{},
		x509.HostnameError{},
		x509.SystemRootsError{},
		x509.ConstraintViolationError{},
		x509.UnhandledCriticalExtension{},
		x509.InsecureAlgorithmError(x509.SHA1WithRSA),
		&tls.CertificateVerificationError{Err: errors.New("x")},
		fmt.Errorf("dial: %w", errors.New("tls: server selected unsupported protocol version 301")),
	} {
		assert.False(t, retryableError(err), "%T %v", err, err)
	}
	assert.True(t, retryableError(io.ErrUnexpectedEOF))
	assert.True(t, retryableError(&net.OpError{Op: "read", Err: errors.New("connection reset by peer")}))
}

type fakeAlert string

func (a fakeAlert) Error() string { return string(a) }
