package a55

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/keytest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	testID     = "unit-client"
	testSecret = "unit-secret-s3cr3t"
)

// fastPolicy is FastRetryPolicy with an attempt timeout no loopback answer
// reaches, even in a loaded -race run: FastRetryPolicy's 2 s can be
// reached there, and a timed-out attempt is rightly retried, which changes
// the attempt counts these tests assert.
func fastPolicy() payonce.RetryPolicy {
	p := payonce.FastRetryPolicy()
	p.AttemptTimeout = time.Minute
	return p
}

// unit is a go-github style test rig: a mux behind an httptest server with
// an OAuth2 token endpoint, and a client pointed at both.
type unit struct {
	mux    *http.ServeMux
	srv    *httptest.Server
	client *Client
	tokens atomic.Int32 // tokens issued
}

func setup(t *testing.T, opts ...payonce.Option) *unit {
	t.Helper()
	u := &unit{mux: http.NewServeMux()}
	u.srv = httptest.NewServer(u.mux)
	t.Cleanup(u.srv.Close)
	u.mux.HandleFunc("POST /oauth2/token", func(w http.ResponseWriter, r *http.Request) {
		require.NoError(t, r.ParseForm())
		if r.PostForm.Get("client_id") != testID || r.PostForm.Get("client_secret") != testSecret {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"error":"invalid_client"}`)
			return
		}
		n := u.tokens.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"access_token":"tok-%d","expires_in":3600,"token_type":"Bearer"}`, n)
	})
	auth := ClientCredentials(testID, testSecret)
	auth.TokenURL = u.srv.URL + "/oauth2/token"
	// The client's clock is fixed before the example card's expiry (12/2030),
	// which seedCharge keeps byte for byte; opts may set another.
	base := []payonce.Option{payonce.WithBaseURL(u.srv.URL), payonce.WithRetryPolicy(fastPolicy()),
		payonce.WithClock(func() time.Time { return seedTime })}
	c, err := NewClient(auth, append(base, opts...)...)
	require.NoError(t, err)
	u.client = c
	return u
}

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// seedTime is before the example card's expiry (12/2030).
var seedTime = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// seedCharge is the example payload of A55's idempotency guide (card
// expiring 12/2030).
func seedCharge() *ChargeCreateRequest {
	amt, _ := payonce.ParseAmount("100.00")
	return &ChargeCreateRequest{
		Amount: amt, Currency: payonce.BRL, TypeCharge: TypeCreditCard,
		Card:  &payonce.Card{Number: "4111111111111111", HolderName: "TEST", ExpirationMonth: "12", ExpirationYear: "2030", CVV: "123"},
		Payer: &Payer{Name: "张伟", Email: "zhangwei@example.com", Document: "12345678909", DocumentType: "CPF"},
	}
}

func TestCreateSendsSeedPayloadAndBearer(t *testing.T) {
	u := setup(t)
	var gotBody map[string]any
	var gotAuth, gotKey string
	u.mux.HandleFunc("POST "+PathCharges, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		require.NoError(t, json.Unmarshal(b, &gotBody))
		gotAuth, gotKey = r.Header.Get("Authorization"), r.Header.Get(payonce.HeaderIdempotencyKey)
		w.Header().Set("X-RateLimit-Limit", "100")
		w.Header().Set("X-RateLimit-Remaining", "99")
		w.Header().Set("X-RateLimit-Reset", "1900000000")
		w.Header().Set("X-Request-Id", "req_1")
		writeJSON(w, 200, `{"charge_uuid":"ch_1","status":"confirmed","amount":"100.00","currency":"BRL","new_field":{"x":1},"message":[]}`)
	})
	ch, err := u.client.Charges.Create(context.Background(), seedCharge(), payonce.WithKey(keytest.Key(t, "550e8400-e29b-41d4-a716-446655440000", seedTime)))
	require.NoError(t, err)
	assert.Equal(t, "Bearer tok-1", gotAuth)
	assert.Equal(t, "550e8400-e29b-41d4-a716-446655440000", gotKey)
	var want map[string]any
	require.NoError(t, json.Unmarshal([]byte(`{"amount":"100.00","currency":"BRL","type_charge":"credit_card",
		"card":{"number":"4111111111111111","holder_name":"TEST","expiration_month":"12","expiration_year":"2030","cvv":"123"},
		"payer":{"name":"张伟","email":"zhangwei@example.com","document":"12345678909","document_type":"CPF"}}`), &want))
	assert.Equal(t, want, gotBody)
	assert.Equal(t, "ch_1", ch.UUID)
	assert.Equal(t, StatusConfirmed, ch.Status)
	assert.Equal(t, "100.00", ch.Amount.String())
	assert.Equal(t, gotKey, ch.Meta.Key.ID())
	assert.Equal(t, 1, ch.Meta.Attempts)
	assert.Equal(t, "req_1", ch.Meta.RequestID)
	assert.Equal(t, RateLimit{Limit: 100, Remaining: 99, Reset: time.Unix(1900000000, 0)}, ch.Meta.RateLimit)
}

func TestCardExpiryReadsTheCoreClock(t *testing.T) {
	// The example card expires after December 2030: on a client whose clock
	// (payonce.WithClock) reads January 2031 it is refused before sending;
	// on one that reads 2030-12-31 it goes out.
	for _, tc := range []struct {
		now     time.Time
		refused bool
	}{
		{time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC), true},
		{time.Date(2030, 12, 31, 23, 0, 0, 0, time.UTC), false},
		{seedTime, false},
	} {
		t.Run(tc.now.Format(time.DateOnly), func(t *testing.T) {
			u := setup(t, payonce.WithClock(func() time.Time { return tc.now }))
			require.Equal(t, tc.now, u.client.Core().Now())
			var hits atomic.Int32
			u.mux.HandleFunc("POST "+PathCharges, func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				writeJSON(w, 200, `{"charge_uuid":"ch_1","status":"confirmed","amount":"100.00","currency":"BRL"}`)
			})
			_, err := u.client.Charges.Create(context.Background(), seedCharge())
			if tc.refused {
				require.Error(t, err)
				assert.ErrorIs(t, err, payonce.ErrInvalidCard)
				assert.EqualValues(t, 0, hits.Load(), "refused before any byte is sent")
				return
			}
			require.NoError(t, err)
			assert.EqualValues(t, 1, hits.Load())
		})
	}
}

func TestValidationBeforeSending(t *testing.T) {
	u := setup(t)
	var hits atomic.Int32
	u.mux.HandleFunc("POST "+PathCharges, func(w http.ResponseWriter, r *http.Request) { hits.Add(1) })
	cases := map[string]struct {
		mut  func(*ChargeCreateRequest)
		kind error
	}{
		"zero amount":  {func(r *ChargeCreateRequest) { r.Amount = payonce.Amount{} }, payonce.ErrInvalidAmount},
		"bad currency": {func(r *ChargeCreateRequest) { r.Currency = "brl" }, payonce.ErrInvalidRequest},
		"luhn":         {func(r *ChargeCreateRequest) { r.Card.Number = "4111111111111112" }, payonce.ErrInvalidCard},
		"cvv":          {func(r *ChargeCreateRequest) { r.Card.CVV = "12" }, payonce.ErrInvalidCard},
		"expired":      {func(r *ChargeCreateRequest) { r.Card.ExpirationYear = "2001" }, payonce.ErrInvalidCard},
		"no card":      {func(r *ChargeCreateRequest) { r.Card = nil }, payonce.ErrInvalidCard},
		"no type":      {func(r *ChargeCreateRequest) { r.TypeCharge = "" }, payonce.ErrInvalidRequest},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req := seedCharge()
			tc.mut(req)
			_, err := u.client.Charges.Create(context.Background(), req)
			require.Error(t, err)
			assert.ErrorIs(t, err, tc.kind)
			assert.NotEmpty(t, payonce.KeyOf(err).ID())
			assert.NotContains(t, err.Error(), "411111111111111")
		})
	}
	_, err := u.client.Charges.Create(context.Background(), seedCharge(), payonce.WithKey(keytest.Key(t, "too-short", seedTime)))
	assert.ErrorIs(t, err, payonce.ErrKeyTooShort)
	_, err = u.client.Charges.Create(context.Background(), seedCharge(), payonce.WithKey(keytest.Key(t, strings.Repeat("k", 129), seedTime)))
	assert.ErrorIs(t, err, payonce.ErrKeyTooLong)
	_, err = u.client.Charges.Capture(context.Background(), &CaptureRequest{})
	assert.ErrorIs(t, err, payonce.ErrInvalidRequest)
	_, err = u.client.Charges.Refund(context.Background(), nil)
	assert.ErrorIs(t, err, payonce.ErrInvalidRequest)
	_, err = u.client.Wallets.Create(context.Background(), &WalletCreateRequest{})
	assert.ErrorIs(t, err, payonce.ErrInvalidRequest)
	assert.Zero(t, hits.Load())
	assert.Zero(t, u.tokens.Load(), "nothing, not even a token request, is sent for an invalid request")
}

func TestCodecErrorShapes(t *testing.T) {
	cases := []struct {
		name   string
		status int
		body   string
		kind   error
		code   string
		charge bool
	}{
		{"general conflict", 409, `{"error":{"code":"IDEMPOTENCY_KEY_CONFLICT","message":"reused","details":[]},"request_id":"req_9"}`, payonce.ErrIdempotencyConflict, "IDEMPOTENCY_KEY_CONFLICT", false},
		{"empty 409", 409, ``, payonce.ErrIdempotencyConflict, "", false},
		{"charge-level 409", 409, `{"charge_uuid":"c1","status":"error","message":[{"code":"CANCEL_NOT_ALLOWED","source":"charge","description":"no"}]}`, payonce.ErrInvalidState, "CANCEL_NOT_ALLOWED", false},
		{"charge-level 409 unknown code", 409, `{"charge_uuid":"c1","status":"error","message":[{"code":"SOMETHING_NEW","source":"charge","description":"no"}]}`, payonce.ErrInvalidState, "SOMETHING_NEW", false},
		{"declined", 400, `{"charge_uuid":"c2","status":"error","message":[{"code":"CARD_DECLINED","source":"card","description":"declined"}]}`, payonce.ErrCardDeclined, "CARD_DECLINED", true},
		{"processing", 400, `{"charge_uuid":"c3","status":"error","message":[{"code":"PROCESSING_ERROR","source":"card","description":"failed"}]}`, payonce.ErrChargeFailed, "PROCESSING_ERROR", true},
		{"402 unknown", 402, `{"charge_uuid":"c4","status":"error","message":"nope"}`, payonce.ErrCardDeclined, "", true},
		{"unauthorized", 401, `{"error":{"code":"INVALID_TOKEN","message":"expired"},"request_id":"r"}`, payonce.ErrUnauthorized, "INVALID_TOKEN", false},
		{"forbidden", 403, `{"error":{"code":"X","message":"no"}}`, payonce.ErrForbidden, "X", false},
		{"not found", 404, `{"error":{"code":"NOT_FOUND","message":"no"}}`, payonce.ErrNotFound, "NOT_FOUND", false},
		{"unprocessable", 422, `{"error":{"code":"AMOUNT_INVALID","message":"bad","details":[{"field":"amount","reason":"bad"}]}}`, payonce.ErrInvalidRequest, "AMOUNT_INVALID", false},
		{"422 no code", 422, `not json`, payonce.ErrInvalidRequest, "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			u := setup(t)
			u.mux.HandleFunc("POST "+PathCharges, func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, tc.status, tc.body)
			})
			ch, err := u.client.Charges.Create(context.Background(), seedCharge())
			require.Error(t, err)
			assert.Nil(t, ch)
			assert.ErrorIs(t, err, tc.kind)
			var ae *payonce.APIError
			require.ErrorAs(t, err, &ae)
			assert.Equal(t, tc.status, ae.StatusCode)
			assert.Equal(t, tc.code, ae.Code)
			assert.NotEmpty(t, payonce.KeyOf(err).ID())
			got, ok := ChargeFromError(err)
			assert.Equal(t, tc.charge, ok)
			if tc.charge {
				assert.NotEmpty(t, got.UUID)
				assert.Equal(t, StatusError, got.Status)
			}
			if tc.status == 401 {
				assert.Equal(t, 2, ae.Attempts, "one refresh and one repeat")
				assert.EqualValues(t, 2, u.tokens.Load())
			} else {
				assert.Equal(t, 1, ae.Attempts, "4xx is final")
			}
		})
	}
}

func TestDeclinedAs2xxKeepsCharge(t *testing.T) {
	u := setup(t)
	u.mux.HandleFunc("POST "+PathCharges, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, `{"charge_uuid":"c5","status":"error","amount":"100.00","message":[{"code":"INSUFFICIENT_FUNDS","source":"card","description":"no funds"}]}`)
	})
	_, err := u.client.Charges.Create(context.Background(), seedCharge())
	require.Error(t, err)
	assert.ErrorIs(t, err, payonce.ErrCardDeclined)
	var ce *ChargeError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "c5", ce.Charge.UUID)
	assert.Equal(t, "100.00", ce.Charge.Amount.String())
	assert.Equal(t, []string{"INSUFFICIENT_FUNDS"}, ce.Charge.Messages.Codes())
	assert.Equal(t, ce.Err.Key, ce.Charge.Meta.Key)
	assert.Equal(t, payonce.KeyOf(err).ID(), ce.Err.Key.ID())
	assert.False(t, payonce.IsTemporary(err))
}

func TestUnauthorizedRefreshesOnceSameKey(t *testing.T) {
	u := setup(t)
	var keys []string
	var auths []string
	u.mux.HandleFunc("POST "+PathCharges, func(w http.ResponseWriter, r *http.Request) {
		keys = append(keys, r.Header.Get(payonce.HeaderIdempotencyKey))
		auths = append(auths, r.Header.Get("Authorization"))
		if len(keys) == 1 {
			writeJSON(w, 401, `{"error":{"code":"INVALID_TOKEN","message":"expired"}}`)
			return
		}
		writeJSON(w, 200, `{"charge_uuid":"c6","status":"confirmed","amount":"100.00"}`)
	})
	ch, err := u.client.Charges.Create(context.Background(), seedCharge())
	require.NoError(t, err)
	require.Len(t, keys, 2)
	assert.Equal(t, keys[0], keys[1])
	assert.Equal(t, []string{"Bearer tok-1", "Bearer tok-2"}, auths)
	assert.Equal(t, 2, ch.Meta.Attempts)
}

func TestFixedTokenNoRefresh(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		assert.Equal(t, "Bearer fixed-token-value", r.Header.Get("Authorization"))
		writeJSON(w, 401, `{"error":{"code":"INVALID_TOKEN","message":"expired"}}`)
	}))
	defer srv.Close()
	c, err := NewClient(AccessToken("fixed-token-value"), payonce.WithBaseURL(srv.URL), payonce.WithRetryPolicy(fastPolicy()))
	require.NoError(t, err)
	_, err = c.Charges.Get(context.Background(), "c1", "")
	assert.ErrorIs(t, err, payonce.ErrUnauthorized)
	var ae *payonce.APIError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, 1, ae.Attempts)
	assert.NotContains(t, err.Error(), "fixed-token-value")
}

func TestTokenViaClientHTTPClientAndCached(t *testing.T) {
	var viaClient atomic.Int32
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		viaClient.Add(1)
		return http.DefaultTransport.RoundTrip(r)
	})}
	u := setup(t, payonce.WithHTTPClient(hc))
	u.mux.HandleFunc("GET "+PathCharges, func(w http.ResponseWriter, r *http.Request) {
		assert.Equal(t, "c1", r.URL.Query().Get("charge_uuid"))
		assert.Equal(t, "w1", r.URL.Query().Get("wallet_uuid"))
		assert.Empty(t, r.Header.Get(payonce.HeaderIdempotencyKey))
		writeJSON(w, 200, `{"charge_uuid":"c1","wallet_uuid":"w1","status":"paid","amount":"1.00"}`)
	})
	for range 3 {
		ch, err := u.client.Charges.Get(context.Background(), "c1", "w1")
		require.NoError(t, err)
		assert.Equal(t, StatusPaid, ch.Status)
		assert.Empty(t, ch.Meta.Key)
	}
	assert.EqualValues(t, 1, u.tokens.Load(), "token cached")
	assert.EqualValues(t, 4, viaClient.Load(), "1 token request + 3 API calls through the same http.Client")
}

func TestTokenRefreshedBeforeExpiry(t *testing.T) {
	u := setup(t)
	now := time.Now()
	u.client.auth.now = func() time.Time { return now }
	_, err := u.client.Token(context.Background())
	require.NoError(t, err)
	now = now.Add(3600*time.Second - 2*time.Minute)
	tok, err := u.client.Token(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "tok-1", tok)
	now = now.Add(90 * time.Second) // within a minute of expiry
	tok, err = u.client.Token(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "tok-2", tok)
}

func TestBadCredentialsNotLeaked(t *testing.T) {
	u := setup(t)
	auth := ClientCredentials(testID, "wrong-secret-value")
	auth.TokenURL = u.srv.URL + "/oauth2/token"
	c, err := NewClient(auth, payonce.WithBaseURL(u.srv.URL), payonce.WithRetryPolicy(fastPolicy()))
	require.NoError(t, err)
	_, err = c.Charges.Create(context.Background(), seedCharge())
	require.Error(t, err)
	assert.ErrorIs(t, err, payonce.ErrUnauthorized)
	assert.False(t, payonce.IsTemporary(err), "bad credentials are final: a job queue must not retry them")
	assert.NotEmpty(t, payonce.KeyOf(err).ID())
	for _, s := range []string{"wrong-secret-value", "4111111111111111", "123\"", u.srv.URL + "/oauth2"} {
		assert.NotContains(t, err.Error(), s)
	}
}

func TestPrintedFormsHideSecrets(t *testing.T) {
	u := setup(t)
	_, err := u.client.Token(context.Background())
	require.NoError(t, err)
	auth := ClientCredentials(testID, testSecret)
	fixed := AccessToken("fixed-token-value")
	fixedClient, err := NewClient(fixed, payonce.WithBaseURL(u.srv.URL))
	require.NoError(t, err)
	wv, err := NewWebhookVerifier(testSecret, nil)
	require.NoError(t, err)
	for _, v := range []any{auth, &auth, fixed, u.client.auth, u.client, newAuthorizer(fixed),
		u.client.Core(), fixedClient, fixedClient.Core(), wv, *wv} {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%d", "%x"} {
			s := fmt.Sprintf(verb, v)
			assert.NotContains(t, s, fmt.Sprint([]byte(testSecret)), verb)
			assert.NotContains(t, s, testSecret, verb)
			assert.NotContains(t, s, "fixed-token-value", verb)
			assert.NotContains(t, s, "tok-1", verb)
		}
	}
	req := seedCharge()
	pointerAddr := regexp.MustCompile(`0x[0-9a-f]+`) // a pointer printed by %#v
	for _, v := range []any{req, *req, req.Card} {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
			// %#v prints pointers as 0xc000123...: only the address may hold "123".
			s := pointerAddr.ReplaceAllString(fmt.Sprintf(verb, v), "0x")
			assert.NotContains(t, s, "4111111111111111", verb)
			assert.NotContains(t, s, "123", verb)
		}
	}
	var buf strings.Builder
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("charge", "req", req, "value", *req)
	assert.NotContains(t, buf.String(), "4111111111111111")
	assert.NotContains(t, buf.String(), "cvv")
	assert.Contains(t, buf.String(), `"last4":"1111"`)
}

func TestNewClientConfig(t *testing.T) {
	c, err := NewClient(ClientCredentials("id", "secret"))
	require.NoError(t, err)
	assert.Equal(t, SandboxURL, c.Core().BaseURL())
	assert.Equal(t, "a55", c.Core().Provider())
	assert.Equal(t, KeyRules(), c.Core().KeyRules())
	assert.Equal(t, payonce.KeyRules{Provider: "a55", MinLen: 16, MaxLen: 128, Window: 24 * time.Hour}, KeyRules(), "the rules the core's tests use")
	_, err = NewClient(Auth{})
	assert.ErrorIs(t, err, payonce.ErrInvalidConfig)
	_, err = NewClient(ClientCredentials("id", "secret"), WithProduction())
	assert.ErrorIs(t, err, payonce.ErrInvalidConfig, "production needs its token URL")
	a := ClientCredentials("id", "secret")
	a.TokenURL = "https://auth.example/oauth2/token"
	c, err = NewClient(a, WithProduction(), WithRateLimit())
	require.NoError(t, err)
	assert.Equal(t, ProductionURL, c.Core().BaseURL())
	c, err = NewClient(AccessToken("t"), WithProduction())
	require.NoError(t, err)
	assert.Equal(t, ProductionURL, c.Core().BaseURL())
}

func TestAuthFromEnv(t *testing.T) {
	t.Setenv(EnvAccessToken, "")
	t.Setenv(EnvClientID, "")
	t.Setenv(EnvClientSecret, "")
	_, err := AuthFromEnv()
	assert.ErrorIs(t, err, payonce.ErrInvalidConfig)
	t.Setenv(EnvClientID, "id")
	t.Setenv(EnvClientSecret, "sec")
	t.Setenv(EnvTokenURL, "https://auth.example/t")
	a, err := AuthFromEnv()
	require.NoError(t, err)
	assert.Equal(t, Auth{ClientID: "id", ClientSecret: "sec", TokenURL: "https://auth.example/t"}, a)
	t.Setenv(EnvAccessToken, "tkn")
	a, err = AuthFromEnv()
	require.NoError(t, err)
	assert.Equal(t, "tkn", a.AccessToken)
}

func TestRateLimiter(t *testing.T) {
	l := NewRateLimiter(RequestsPerMinute, 10)
	assert.Equal(t, 10, l.Burst())
	assert.InDelta(t, 90.0/60, float64(l.Limit()), 1e-9)
	// Worst case in any rolling minute: the burst plus a minute of refill.
	assert.LessOrEqual(t, float64(l.Burst())+float64(l.Limit())*60, float64(RequestsPerMinute))
	l = NewRateLimiter(100, 500)
	assert.Equal(t, 10, l.Burst())
	assert.Equal(t, RateLimit{}, ParseRateLimit(nil))
	assert.Equal(t, RateLimit{Limit: 5}, ParseRateLimit(http.Header{"X-Ratelimit-Limit": {"5"}, "X-Ratelimit-Reset": {"x"}}))
}

func TestMessagesForms(t *testing.T) {
	var v struct {
		M Messages `json:"message"`
	}
	require.NoError(t, json.Unmarshal([]byte(`{"message":"plain"}`), &v))
	assert.Equal(t, Messages{{Description: "plain"}}, v.M)
	require.NoError(t, json.Unmarshal([]byte(`{"message":{"code":"A"}}`), &v))
	assert.Equal(t, "A", v.M.String())
	require.NoError(t, json.Unmarshal([]byte(`{"message":null}`), &v))
	assert.Nil(t, v.M)
	assert.True(t, StatusPreChargebackResolution.Known())
	assert.False(t, Status("new").Known())
	assert.Len(t, Statuses(), 12)
}

func TestAmountOmittedWhenZero(t *testing.T) {
	b, err := json.Marshal(RefundRequest{ChargeUUID: "c"})
	require.NoError(t, err)
	assert.JSONEq(t, `{"charge_uuid":"c"}`, string(b))
	amt, _ := payonce.ParseAmount("10.5")
	b, err = json.Marshal(CaptureRequest{ChargeUUID: "c", WalletUUID: "w", Amount: amt})
	require.NoError(t, err)
	assert.JSONEq(t, `{"charge_uuid":"c","wallet_uuid":"w","amount":"10.50"}`, string(b))
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestPlainHTTPTokenURLRefused(t *testing.T) {
	a := ClientCredentials("id", "secret")
	a.TokenURL = "http://auth.example/oauth2/token"
	_, err := NewClient(a)
	require.ErrorIs(t, err, payonce.ErrInvalidConfig, "the client secret must not cross the network in clear text")
	assert.NotContains(t, err.Error(), "secret\"")
	a.TokenURL = "http://127.0.0.1:8080/oauth2/token"
	_, err = NewClient(a, payonce.WithBaseURL("http://127.0.0.1:8080"))
	require.NoError(t, err, "loopback is fine")
	a.TokenURL = "http://auth.internal/oauth2/token"
	_, err = NewClient(a, payonce.WithBaseURL("http://api.internal"), payonce.WithInsecureHTTP())
	require.NoError(t, err, "an explicit WithInsecureHTTP covers the token URL too")
	a.TokenURL = "ftp://auth.example/token"
	_, err = NewClient(a)
	require.ErrorIs(t, err, payonce.ErrInvalidConfig)
}

// A plain-http webhook URL to a non-loopback host passes only when the
// client itself was opted into plain HTTP (a non-loopback http:// base
// URL, which payonce.NewClient allows only with payonce.WithInsecureHTTP).
func TestCheckWebhookURLFollowsTheInsecureOptIn(t *testing.T) {
	const hook = "http://merchant.example/hooks/a55"
	require.ErrorIs(t, checkWebhookURL(hook, "https://api.example"), payonce.ErrInvalidRequest)
	require.ErrorIs(t, checkWebhookURL(hook, "http://127.0.0.1:8080"), payonce.ErrInvalidRequest)
	assert.NoError(t, checkWebhookURL(hook, "http://api.internal:8080"))
	assert.NoError(t, checkWebhookURL("http://[::ffff:127.0.0.1]:9/h", "https://api.example"), "an IPv4-mapped loopback address is loopback")
}

// The authorizer's SecretValues are its client secret and its last
// keptTokens tokens: bounded however often tokens rotate, newest kept.
func TestAuthorizerSecretValuesBounded(t *testing.T) {
	z := newAuthorizer(ClientCredentials("id", "client-secret-bound"))
	for i := range 10 {
		z.secrets(fmt.Sprintf("token-%02d-opaque", i))
	}
	vals := z.SecretValues()
	require.Len(t, vals, keptTokens+1)
	assert.Equal(t, "client-secret-bound", vals[0])
	assert.Equal(t, []string{"token-06-opaque", "token-07-opaque", "token-08-opaque", "token-09-opaque"}, vals[1:])
	assert.Equal(t, []string{"fixed-token-bound"}, newAuthorizer(AccessToken("fixed-token-bound")).SecretValues())
}
