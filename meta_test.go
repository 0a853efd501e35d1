package payonce_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/redact"
)

// echoHeaderServer answers 200 with headers that echo card data, a
// cookie, a token and a query string, as a careless or hostile server may.
func echoHeaderServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("X-Echo", "card 4111111111111111 cvv=737")
		h.Set("Set-Cookie", "session=topsecretsessionvalue; Path=/")
		h.Set("X-Access-Token", "tok_live_abcdefgh")
		h.Set("Content-Location", "/v1/charges?card_number=5555555555554444")
		h.Set("X-Request-Id", "req_1")
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// echoedMeta is the Meta of a call answered by echoHeaderServer.
func echoedMeta(t *testing.T) payonce.Meta {
	t.Helper()
	srv := echoHeaderServer(t)
	c, err := payonce.NewClient(payonce.WithBaseURL(srv.URL))
	require.NoError(t, err)
	var out map[string]any
	m, err := c.Do(t.Context(), &payonce.Request{Operation: "x", Method: http.MethodPost, Path: "/x",
		Body: map[string]string{"a": "b"}, Keyed: true}, &out)
	require.NoError(t, err)
	return m
}

// leaks are the strings the echoed headers carry that no printed or
// logged Meta may show. The CVV is looked for with its label: the output
// also holds a random key, the key's creation time and the call's
// duration, whose digits hold "737" now and then.
var leaks = []string{"4111111111111111", "cvv=737", "topsecretsessionvalue", "tok_live_abcdefgh", "5555555555554444", "card_number="}

func TestMetaPrintedOrLoggedHidesWhatHeadersEcho(t *testing.T) {
	m := echoedMeta(t)

	// The headers stay the server's, for code that reads them on purpose.
	assert.Equal(t, "card 4111111111111111 cvv=737", m.Header.Get("X-Echo"))
	// What is printed of the echo holds no digit of the CVV.
	assert.NotContains(t, redact.Header(m.Header).Get("X-Echo"), "737")

	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("done", "meta", m)
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x"} {
		s := fmt.Sprintf(verb, m)
		for _, leak := range leaks {
			assert.NotContains(t, s, leak, verb)
		}
		if verb != "%x" {
			assert.Contains(t, s, m.Key.String(), verb)
			assert.Contains(t, s, "req_1", verb)
			assert.Contains(t, s, "application/json", verb)
		}
	}
	for _, leak := range leaks {
		assert.NotContains(t, logged.String(), leak)
		assert.NotContains(t, fmt.Sprint(&m), leak)
		assert.NotContains(t, fmt.Sprint([]payonce.Meta{m}), leak)
	}
	assert.Contains(t, logged.String(), m.Key.String())
	assert.Contains(t, fmt.Sprintf("%#v", m), "payonce.Meta{")
	assert.Contains(t, fmt.Sprintf("%+v", m), "StatusCode:200")
}

// A Meta written as JSON (a result stored whole, a job payload) holds what
// its printed form holds: the echoed headers redacted, the key's text form
// that ParseKey reads back.
func TestMetaAsJSONHidesWhatHeadersEcho(t *testing.T) {
	m := echoedMeta(t)
	m.RequestID, m.Reference = "req 5555555555554444", "order-4111111111111111"

	for _, v := range []any{m, &m, []payonce.Meta{m}, struct{ Meta payonce.Meta }{m}} {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		for _, leak := range append(leaks, "order-4111111111111111") {
			assert.NotContains(t, string(b), leak)
		}
		assert.Contains(t, string(b), "application/json")
	}
	b, err := json.Marshal(m)
	require.NoError(t, err)
	var back struct {
		Key        payonce.Key
		StatusCode int
	}
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, m.Key, back.Key)
	assert.Equal(t, 200, back.StatusCode)
}
