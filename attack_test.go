package payonce

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Attacks on the hardening, as an outside reviewer would run them: each
// test failed before the fix it names.

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

// Whatever a server echoes in its error code stays out of the error text.
func TestServerErrorCodeIsRedacted(t *testing.T) {
	rec := &recorder{statuses: []int{400}, body: `{"code":"card 4111111111111111 refused, token=SECRETTOKEN","message":"no"}`}
	c := setup(t, rec)
	_, err := c.Do(context.Background(), postReq(), nil)
	require.ErrorIs(t, err, ErrInvalidRequest)
	assert.NotContains(t, err.Error(), "4111111111111111")
	assert.NotContains(t, err.Error(), "SECRETTOKEN")
	// The key is the client's own UUID, nothing of the code (a bare
	// "4111" needle matched random UUIDs now and then).
	assert.Regexp(t, `^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`, KeyOf(err).ID())
	var ae *APIError
	require.ErrorAs(t, err, &ae)
	assert.NotContains(t, ae.Code, "4111111111111111")
}

// A known code is still recognised after redaction.
func TestKnownServerCodeKeepsItsKind(t *testing.T) {
	rec := &recorder{statuses: []int{409}, body: `{"message_key":"openapi_idempotency_key_conflict","message":"conflict"}`}
	c := setup(t, rec)
	_, err := c.Do(context.Background(), postReq(), nil)
	require.ErrorIs(t, err, ErrIdempotencyConflict)
	var ae *APIError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "openapi_idempotency_key_conflict", ae.Code)
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
		assert.NotEmpty(t, KeyOf(err).ID(), name)
		assert.Empty(t, rec.seen(), name)
	}
	rec := &recorder{}
	c := setup(t, rec)
	_, err := c.Do(context.Background(), postReq(), nil, WithHeader("X_Correlation_Id", "abc"))
	require.NoError(t, err, "an underscore name that is no alias stays allowed")
}

// An HTTP/1.1 answer without Content-Length or chunked encoding ends when
// the server closes the connection, so a connection cut mid-answer looks
// like a complete body. A 2xx JSON answer framed that way that is not
// whole JSON was cut short: the operation ran and its answer was lost, a
// temporary transport failure retried with the same key, never a final
// malformed answer nor (for an empty body) a success with nothing decoded.
func TestCloseDelimitedSuccessCutShortIsALostAnswer(t *testing.T) {
	for name, answer := range map[string]string{
		"cut mid-body": "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{\"id\":\"ch_1\",\"sta",
		"cut at once":  "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n",
	} {
		url, n := rawServer(t, answer)
		p := fastPolicy()
		p.MaxAttempts = 3
		c, err := NewClient(WithBaseURL(url), WithRetryPolicy(p))
		require.NoError(t, err)
		var out struct{ ID string }
		_, err = c.Do(context.Background(), postReq(), &out)
		require.Error(t, err, name)
		assert.ErrorIs(t, err, ErrTransport, name)
		assert.NotErrorIs(t, err, ErrMalformedResponse, name)
		assert.True(t, IsTemporary(err), name)
		assert.NotEmpty(t, KeyOf(err).ID(), name)
		assert.Equal(t, int32(3), n.Load(), name)
	}
	// A whole close-delimited answer is fine.
	url, _ := rawServer(t, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{\"id\":\"ch_1\"}")
	c, err := NewClient(WithBaseURL(url), WithRetryPolicy(fastPolicy()))
	require.NoError(t, err)
	var out struct{ ID string }
	_, err = c.Do(context.Background(), postReq(), &out)
	require.NoError(t, err)
	assert.Equal(t, "ch_1", out.ID)
}

// A call may run its attempts longer than 30 s (WithCallTimeout(45*time.Second)
// for a background job, or AttemptTimeout): the default transport must not
// cut the wait for the answer's headers shorter than the attempt's own
// timeout, which always bounds it.
func TestDefaultTransportLeavesTheAttemptTimeoutAlone(t *testing.T) {
	tr := DefaultHTTPClient().Transport.(*http.Transport)
	assert.Zero(t, tr.ResponseHeaderTimeout, "a fixed header timeout silently caps WithCallTimeout and AttemptTimeout")
	assert.Positive(t, DefaultHTTPClient().Timeout, "the http.Client alone is still bounded")
}

// A key the rules refuse is still given back (KeyOf), but the error text
// cannot be used to forge log lines with it, nor grow without end.
func TestRefusedKeyCannotForgeTheErrorText(t *testing.T) {
	rec := &recorder{}
	c := setup(t, rec)
	forged := "abcdefghijklmnop\nlevel=ERROR msg=\"forged\"\r\x1b[2J"
	_, err := c.Do(context.Background(), postReq(), nil, WithKey(testKey(forged)))
	require.ErrorIs(t, err, ErrKeyInvalidChars)
	assert.Equal(t, forged, KeyOf(err).ID())
	assert.NotContains(t, err.Error(), "\n")
	assert.NotContains(t, err.Error(), "\r")
	assert.NotContains(t, err.Error(), "\x1b")

	long := strings.Repeat("k", 5000)
	_, err = c.Do(context.Background(), postReq(), nil, WithKey(testKey(long)))
	require.ErrorIs(t, err, ErrKeyTooLong)
	assert.Equal(t, long, KeyOf(err).ID())
	assert.Less(t, len(err.Error()), 600)
	assert.Empty(t, rec.seen())
}

// A hostile server cannot forge log lines through the text of its error
// answer: control characters (CR, LF, escapes) in its code, message,
// request ID or details never reach the error.
func TestServerTextCannotForgeTheErrorText(t *testing.T) {
	rec := &recorder{statuses: []int{400}, header: http.Header{"X-Request-Id": {"req_1"}},
		body: `{"error":{"code":"x\ny","message":"declined\nlevel=INFO msg=\"payment ok\"\u001b[2J\u0085","details":[{"field":"a\rb","reason":"c\nd"}]}}`}
	c := setup(t, rec)
	_, err := c.Do(context.Background(), postReq(), nil)
	require.ErrorIs(t, err, ErrInvalidRequest)
	var ae *APIError
	require.ErrorAs(t, err, &ae)
	for _, s := range []string{err.Error(), ae.Code, ae.Message, ae.Details[0].Field, ae.Details[0].Reason} {
		assert.NotContains(t, s, "\n")
		assert.NotContains(t, s, "\r")
		assert.NotContains(t, s, "\x1b")
		assert.NotContains(t, s, "\u0085")
	}
	assert.Contains(t, ae.Message, "declined")
}

type echoingSigner struct{}

// Sign fails like a token endpoint that echoes a hostile error_description.
func (echoingSigner) Sign(*http.Request, []byte) error {
	return errors.New("token endpoint said: bad\nlevel=INFO msg=\"ok\"\x1b[2J")
}

// Nor through a cause whose text came from a server (a token endpoint's
// error description).
func TestCauseTextCannotForgeTheErrorText(t *testing.T) {
	rec := &recorder{}
	c := setup(t, rec, WithSigner(echoingSigner{}))
	_, err := c.Do(context.Background(), postReq(), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "token endpoint said")
	assert.NotContains(t, err.Error(), "\n")
	assert.NotContains(t, err.Error(), "\x1b")
}
