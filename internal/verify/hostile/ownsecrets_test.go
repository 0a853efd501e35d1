package hostile

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"unicode"

	"github.com/payonce/payonce/payoncetest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/coinepay"
	"github.com/payonce/payonce/internal/testsupport/keytest"
	"github.com/payonce/payonce/journal"
)

// proseEchoes are the ways a server's error prose quotes a credential:
// the redaction patterns see no secret's name in front of most of them.
func proseEchoes(secret string) []string {
	pct := ""
	for i := 0; i < len(secret); i++ {
		pct += fmt.Sprintf("%%%02X", secret[i])
	}
	return []string{
		"token expired: " + secret,
		"Token has expired: " + secret,
		"the token '" + secret + "' is expired",
		"credential " + secret + " unknown",
		"rejected (" + url.QueryEscape(secret) + ")",
		"rejected " + pct,
		"rejected " + base64.StdEncoding.EncodeToString([]byte(secret)),
		"rejected " + base64.RawURLEncoding.EncodeToString([]byte("key="+secret)),
		"rejected x" + secret + "y",
	}
}

// ownForms is every form of secret no output may hold.
func ownForms(secret string) []string {
	return []string{secret, base64.StdEncoding.EncodeToString([]byte(secret))[:16],
		base64.RawURLEncoding.EncodeToString([]byte("key=" + secret))[4:20]}
}

// allOutput is every text the client gives of err: its text, printed
// forms, JSON form, the journal row of ref and the client's log lines.
func allOutput(t *testing.T, err error, j *journal.Memory, scope, ref string, logs *syncBuffer) string {
	t.Helper()
	out := printed(err)
	b, jerr := json.Marshal(err)
	require.NoError(t, jerr)
	out += string(b)
	e, gerr := j.Get(t.Context(), scope, ref)
	require.NoError(t, gerr)
	out += fmt.Sprintf("%+v", e) + e.ErrorMessage + e.ErrorCode + e.RequestID + e.LastCause + string(e.Result)
	return out + logs.String()
}

// An A55 server that quotes, in prose and however encoded, the access
// token the client sent (an opaque one, not a JWT), one it sent before
// the token was replaced, or the client secret: none reaches the error,
// its printed forms, the journal row or the client's logs.
func TestA55OwnSecretsCutFromProse(t *testing.T) {
	t.Parallel()
	const secret = "cs-9f8e7d6c5b4a39281706"
	tokens := []string{"Zq8vLm3NtR7pKa4WnE8sBd3HyU6cFj1x", "Hn2Wq9Lz4Vx7Bc1Mk5Rt8Yp3Sd6Gf0Ja"}
	for i, echo := range append(proseEchoes(tokens[0]), append(proseEchoes(tokens[1]), proseEchoes(secret)...)...) {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			var fetched, charges atomic.Int32
			mux := http.NewServeMux()
			mux.HandleFunc("POST /oauth2/token", func(w http.ResponseWriter, r *http.Request) {
				n := fetched.Add(1)
				w.Header().Set("Content-Type", "application/json")
				_, _ = fmt.Fprintf(w, `{"access_token":%q,"expires_in":3600,"token_type":"Bearer"}`, tokens[min(int(n), 2)-1])
			})
			mux.HandleFunc("POST "+a55.PathCharges, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				if charges.Add(1) == 1 {
					w.WriteHeader(http.StatusUnauthorized) // the first token is replaced
					_, _ = fmt.Fprint(w, `{"error":{"code":"INVALID_TOKEN","message":"expired"}}`)
					return
				}
				w.Header().Set("X-Request-Id", echo)
				w.WriteHeader(http.StatusBadRequest)
				q := jsonString(echo)
				_, _ = fmt.Fprint(w, `{"error":{"code":`+q+`,"message":`+q+`,"details":[{"field":"card","reason":`+q+`}]}}`)
			})
			srv := httptest.NewServer(mux)
			defer srv.Close()
			auth := a55.ClientCredentials("client-id", secret)
			auth.TokenURL = srv.URL + "/oauth2/token"
			var logs syncBuffer
			j := journal.NewMemory()
			c, err := a55.NewClient(auth, payonce.WithBaseURL(srv.URL), payonce.WithRetryPolicy(payoncetest.FastRetryPolicy()),
				payonce.WithJournal(j), payonce.WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
			require.NoError(t, err)
			_, err = c.Charges.Create(t.Context(), cardCharge(), payonce.WithReference("order-1"),
				payonce.WithKey(keytest.Now(t, "hostile-key-0123456789")))
			require.Error(t, err)
			require.Equal(t, int32(2), fetched.Load(), "the token was replaced once")
			out := allOutput(t, err, j, c.Core().Scope(), "order-1", &logs)
			for _, s := range append(ownForms(tokens[0]), append(ownForms(tokens[1]), ownForms(secret)...)...) {
				assert.NotContains(t, out, s)
			}
			assert.Contains(t, err.Error(), "hostile-key-0123456789")
		})
	}
}

// A fixed access token is cut the same way.
func TestA55FixedTokenCutFromProse(t *testing.T) {
	t.Parallel()
	const token = "fixedOpaqueToken0123456789abcdef"
	for i, echo := range proseEchoes(token) {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusForbidden)
				_, _ = fmt.Fprint(w, `{"error":{"code":"FORBIDDEN","message":`+jsonString(echo)+`}}`)
			}))
			defer srv.Close()
			var logs syncBuffer
			j := journal.NewMemory()
			c, err := a55.NewClient(a55.AccessToken(token), payonce.WithBaseURL(srv.URL), payonce.WithJournal(j), payonce.WithScope("a55:merchant-1"),
				payonce.WithLogger(slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
			require.NoError(t, err)
			_, err = c.Charges.Create(t.Context(), cardCharge(), payonce.WithReference("order-2"),
				payonce.WithKey(keytest.Now(t, "hostile-key-0123456789")))
			require.Error(t, err)
			out := allOutput(t, err, j, c.Core().Scope(), "order-2", &logs)
			for _, s := range ownForms(token) {
				assert.NotContains(t, out, s)
			}
		})
	}
}

// A Coinepay server that quotes the HMAC secret or the API key in its
// error prose, however encoded: none reaches the error, its printed
// forms, the journal row or the logs.
func TestCoinepayOwnSecretsCutFromProse(t *testing.T) {
	t.Parallel()
	const apiKey, secret = "ak_live_7Hq2Xw9Lm4", "sk_live_Vb8Nc3Zt6Qp1Ry5K"
	for i, echo := range append(proseEchoes(secret), proseEchoes(apiKey)...) {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("X-Request-Id", echo)
				w.WriteHeader(http.StatusBadRequest)
				q := jsonString(echo)
				_, _ = fmt.Fprint(w, `{"code":400,"message":`+q+`,"message_key":`+q+`,"data":null}`)
			}))
			defer srv.Close()
			var logs syncBuffer
			j := journal.NewMemory()
			c, err := coinepay.NewClient(apiKey, secret, payonce.WithBaseURL(srv.URL), payonce.WithRetryPolicy(payoncetest.FastRetryPolicy()),
				payonce.WithJournal(j), payonce.WithLogger(slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
			require.NoError(t, err)
			_, err = c.Cards.Apply(t.Context(), &coinepay.ApplyRequest{HeaderID: "h1", PackageID: "p1"},
				payonce.WithReference("apply-1"), payonce.WithKey(keytest.Now(t, "hostile-key-0123456789")))
			require.Error(t, err)
			out := allOutput(t, err, j, c.Core().Scope(), "apply-1", &logs)
			for _, s := range append(ownForms(secret), ownForms(apiKey)...) {
				assert.NotContains(t, out, s)
			}
			assert.True(t, strings.Contains(err.Error(), "hostile-key-0123456789"))
		})
	}
}

// caseEchoes are the ways a server quotes a credential in another letter
// case: upper-cased, lower-cased, mixed, and its hex in mixed case.
func caseEchoes(secret string) []string {
	h := hex.EncodeToString([]byte(secret))
	mixed := []byte(h)
	for i := range mixed {
		if i%2 == 0 {
			mixed[i] = byte(unicode.ToUpper(rune(mixed[i])))
		}
	}
	return []string{
		"invalid signature for secret " + strings.ToUpper(secret),
		"key " + strings.ToLower(secret) + " unknown",
		"rejected (" + strings.ToUpper(secret[:len(secret)/2]) + secret[len(secret)/2:] + ")",
		"rejected " + string(mixed),
		"rejected " + strings.ToUpper(url.QueryEscape(secret)),
	}
}

// A Coinepay 401 whose text quotes the client's own secret or API key in
// another letter case (or their hex in mixed case) keeps none of them in
// Error(), %+v, the JSON form, the journal row or the logs.
func TestCoinepayOwnSecretsCutInAnyCase(t *testing.T) {
	t.Parallel()
	const apiKey, secret = "ak_live_7Hq2Xw9Lm4", "sk_live_Vb8Nc3Zt6Qp1Ry5K"
	for i, echo := range append(caseEchoes(secret), caseEchoes(apiKey)...) {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("X-Request-Id", echo)
				w.WriteHeader(http.StatusUnauthorized)
				q := jsonString(echo)
				_, _ = fmt.Fprint(w, `{"code":401,"message":`+q+`,"message_key":`+q+`,"data":null}`)
			}))
			defer srv.Close()
			var logs syncBuffer
			j := journal.NewMemory()
			c, err := coinepay.NewClient(apiKey, secret, payonce.WithBaseURL(srv.URL), payonce.WithRetryPolicy(payoncetest.FastRetryPolicy()),
				payonce.WithJournal(j), payonce.WithLogger(slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
			require.NoError(t, err)
			_, err = c.Cards.Apply(t.Context(), &coinepay.ApplyRequest{HeaderID: "h1", PackageID: "p1"},
				payonce.WithReference("apply-1"), payonce.WithKey(keytest.Now(t, "hostile-key-0123456789")))
			require.ErrorIs(t, err, payonce.ErrUnauthorized)
			out := strings.ToLower(allOutput(t, err, j, c.Core().Scope(), "apply-1", &logs) + fmt.Sprintf("%+v %v %s", err, err, err.Error()))
			for _, s := range []string{secret, apiKey, hex.EncodeToString([]byte(secret)), hex.EncodeToString([]byte(apiKey))} {
				assert.NotContains(t, out, strings.ToLower(s))
			}
			assert.Contains(t, out, "hostile-key-0123456789")
		})
	}
}

// The A55 client secret quoted upper-cased by the token endpoint, or by
// the API, is cut too.
func TestA55OwnSecretCutInAnyCase(t *testing.T) {
	t.Parallel()
	const secret = "cs-9f8e7d6c5b4a39281706"
	for i, echo := range caseEchoes(secret) {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			mux := http.NewServeMux()
			mux.HandleFunc("POST /oauth2/token", func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusUnauthorized)
				_, _ = fmt.Fprintf(w, `{"error":%s,"error_description":%s}`, jsonString(echo), jsonString(echo))
			})
			srv := httptest.NewServer(mux)
			defer srv.Close()
			auth := a55.ClientCredentials("client-id", secret)
			auth.TokenURL = srv.URL + "/oauth2/token"
			var logs syncBuffer
			j := journal.NewMemory()
			c, err := a55.NewClient(auth, payonce.WithBaseURL(srv.URL), payonce.WithRetryPolicy(payoncetest.FastRetryPolicy()),
				payonce.WithJournal(j), payonce.WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
			require.NoError(t, err)
			_, err = c.Charges.Create(t.Context(), cardCharge(), payonce.WithReference("order-1"),
				payonce.WithKey(keytest.Now(t, "hostile-key-0123456789")))
			require.ErrorIs(t, err, payonce.ErrUnauthorized)
			out := printed(err)
			for e := error(err); e != nil; e = errors.Unwrap(e) {
				out += e.Error()
			}
			out = strings.ToLower(out + allOutput(t, err, j, c.Core().Scope(), "order-1", &logs))
			assert.NotContains(t, out, secret)
			assert.NotContains(t, out, hex.EncodeToString([]byte(secret)))
		})
	}
}
