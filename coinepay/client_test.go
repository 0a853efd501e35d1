package coinepay_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payonce/payonce/payoncetest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/coinepay"
	"github.com/payonce/payonce/coinepay/coinepaytest"
	"github.com/payonce/payonce/internal/corekit"
	"github.com/payonce/payonce/internal/testsupport/keytest"
	"github.com/payonce/payonce/journal"
	"github.com/payonce/payonce/journal/journaltest"
)

const (
	testAPIKey = "ak_unit"
	testSecret = "sk_unit_very_secret_value"
)

// fastPolicy is FastRetryPolicy with an attempt timeout no loopback answer
// reaches, even in a loaded -race run: FastRetryPolicy's 2 s can be
// reached there, and a timed-out attempt is rightly retried, which changes
// the attempt counts these tests assert.
func fastPolicy() payonce.RetryPolicy {
	p := payoncetest.FastRetryPolicy()
	p.AttemptTimeout = time.Minute
	return p
}

// seenRequest is one request the unit-test server received.
type seenRequest struct {
	Method, Path, Query string
	Header              http.Header
	Body                []byte
}

// setup starts an httptest server whose handler is mux (after every
// request is recorded and its signature verified) and a client for it,
// go-github style. It returns the client, the mux and a function listing
// the requests seen.
func setup(t *testing.T, opts ...payonce.Option) (*coinepay.Client, *http.ServeMux, func() []seenRequest) {
	t.Helper()
	mux := http.NewServeMux()
	verifier := coinepay.NewVerifier(func(k string) (string, bool) { return testSecret, k == testAPIKey }, nil)
	var mu sync.Mutex
	var seen []seenRequest
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen = append(seen, seenRequest{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body})
		mu.Unlock()
		if _, err := verifier.Verify(r, body); err != nil {
			var se *coinepay.SignatureError
			require.True(t, errors.As(err, &se))
			writeEnvelope(w, http.StatusUnauthorized, se.Code, "签名错误", nil)
			return
		}
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	base := []payonce.Option{payonce.WithBaseURL(srv.URL), payonce.WithRetryPolicy(fastPolicy())}
	c, err := coinepay.NewClient(testAPIKey, testSecret, append(base, opts...)...)
	require.NoError(t, err)
	return c, mux, func() []seenRequest {
		mu.Lock()
		defer mu.Unlock()
		return append([]seenRequest(nil), seen...)
	}
}

func writeEnvelope(w http.ResponseWriter, status int, key, msg string, data any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"code": status, "message": msg, "message_key": key, "data": data})
}

func TestNewClientConfig(t *testing.T) {
	_, err := coinepay.NewClient(testAPIKey, testSecret)
	require.ErrorIs(t, err, payonce.ErrInvalidConfig, "no base URL")
	assert.Contains(t, err.Error(), "base URL")

	_, err = coinepay.NewClient("", testSecret, payonce.WithBaseURL("https://coinepay.example"))
	require.ErrorIs(t, err, payonce.ErrInvalidConfig)
	_, err = coinepay.NewClient(testAPIKey, "", payonce.WithBaseURL("https://coinepay.example"))
	require.ErrorIs(t, err, payonce.ErrInvalidConfig)

	_, err = coinepay.NewClient(testAPIKey, testSecret, payonce.WithBaseURL("http://coinepay.example"))
	require.ErrorIs(t, err, payonce.ErrInvalidConfig, "plain http to a remote host")
	assert.NotContains(t, err.Error(), testSecret)

	c, err := coinepay.NewClient(testAPIKey, testSecret, payonce.WithBaseURL("https://coinepay.example/"))
	require.NoError(t, err)
	view := c.Core().Settings()
	assert.Equal(t, "coinepay", view.Provider)
	assert.Equal(t, payonce.KeyRules{Provider: "coinepay", Required: true, MaxLen: 128, Window: 24 * time.Hour,
		Charset: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:"}, view.KeyRules, "the rules the core's tests use")
	assert.Equal(t, "https://coinepay.example", view.BaseURL)
	assert.NotContains(t, fmt.Sprintf("%v %+v %#v", c, c, c), testSecret)
}

func TestApplySendsSignedKeyedRequest(t *testing.T) {
	c, mux, seen := setup(t)
	mux.HandleFunc("POST "+coinepay.PathCardApply, func(w http.ResponseWriter, r *http.Request) {
		var body map[string]string
		require.NoError(t, json.NewDecoder(r.Body).Decode(&body))
		assert.Equal(t, map[string]string{"header_id": "h1", "package_id": "p1"}, body)
		w.Header().Set("X-Request-Id", "req_1")
		writeEnvelope(w, 200, "success", "成功", map[string]any{"card_id": "card_1", "header_id": "h1", "package_id": "p1", "balance": "0.00", "extra": 7,
			"fee": "1.00", "account_balance": "99.00", "created_at": "2026-01-01T00:00:00Z"})
	})
	res, err := c.Cards.Apply(context.Background(), &coinepay.ApplyRequest{HeaderID: "h1", PackageID: "p1"},
		payonce.WithKey(keytest.Now(t, "order-42")))
	require.NoError(t, err)
	assert.Equal(t, "card_1", res.CardID)
	assert.Equal(t, "order-42", res.Meta.Key.String())
	assert.Equal(t, 1, res.Meta.Attempts)
	assert.False(t, res.Meta.Replayed)
	assert.Equal(t, "req_1", res.Meta.RequestID)
	assert.Equal(t, "1.00", res.Fee.String())
	assert.Equal(t, "99.00", res.AccountBalance.String())
	assert.Equal(t, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), res.CreatedAt.UTC())
	var raw map[string]any
	require.NoError(t, json.Unmarshal(res.Raw, &raw))
	assert.EqualValues(t, 7, raw["extra"], "unmodelled fields stay in Raw")

	reqs := seen()
	require.Len(t, reqs, 1)
	h := reqs[0].Header
	assert.Equal(t, "order-42", h.Get(corekit.HeaderIdempotencyKey))
	assert.Equal(t, testAPIKey, h.Get(coinepay.HeaderAPIKey))
	assert.Len(t, h.Get(coinepay.HeaderNonce), 32)
	assert.Len(t, h.Get(coinepay.HeaderSignature), 64)
	assert.Equal(t, "application/json", h.Get("Content-Type"))
}

func TestApplyGeneratesUUIDAndReadsReplay(t *testing.T) {
	c, mux, seen := setup(t)
	mux.HandleFunc("POST "+coinepay.PathCardApply, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set(corekit.HeaderReplay, "true")
		writeEnvelope(w, 200, "success", "成功", map[string]any{"card_id": "card_1"})
	})
	res, err := c.Cards.Apply(context.Background(), &coinepay.ApplyRequest{HeaderID: "h1", PackageID: "p1"})
	require.NoError(t, err)
	assert.True(t, res.Meta.Replayed)
	assert.Len(t, res.Meta.Key.String(), 36, "a UUID v4")
	assert.Equal(t, res.Meta.Key.String(), seen()[0].Header.Get(corekit.HeaderIdempotencyKey))

	// The key the call gives is used, with its creation time.
	key := keytest.Now(t, "call-key")
	res, err = c.Cards.Apply(context.Background(), &coinepay.ApplyRequest{HeaderID: "h1", PackageID: "p1"}, payonce.WithKey(key))
	require.NoError(t, err)
	assert.Equal(t, key, res.Meta.Key)
}

func TestRetriesKeepKeyAndBodyAndResign(t *testing.T) {
	c, mux, seen := setup(t)
	var mu sync.Mutex
	n := 0
	mux.HandleFunc("POST "+coinepay.PathCardRecharge, func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		n++
		i := n
		mu.Unlock()
		if i < 3 {
			writeEnvelope(w, http.StatusServiceUnavailable, "openapi_internal_error", "服务暂时不可用", nil)
			return
		}
		writeEnvelope(w, 200, "success", "成功", map[string]any{"card_id": "card_1", "amount": "12.50", "card_balance": "12.50"})
	})
	res, err := c.Cards.Recharge(context.Background(), &coinepay.RechargeRequest{CardID: "card_1", Amount: mustAmount(t, "12.50")})
	require.NoError(t, err)
	assert.Equal(t, 3, res.Meta.Attempts)
	assert.Equal(t, "12.50", res.Amount.String())
	assert.Equal(t, "12.50", res.CardBalance.String())

	reqs := seen()
	require.Len(t, reqs, 3)
	assert.JSONEq(t, `{"card_id":"card_1","amount":"12.50"}`, string(reqs[0].Body))
	nonces, sigs := map[string]bool{}, map[string]bool{}
	for _, r := range reqs {
		assert.Equal(t, res.Meta.Key.String(), r.Header.Get(corekit.HeaderIdempotencyKey))
		assert.Equal(t, reqs[0].Body, r.Body, "body bytes never change")
		nonces[r.Header.Get(coinepay.HeaderNonce)] = true
		sigs[r.Header.Get(coinepay.HeaderSignature)] = true
	}
	assert.Len(t, nonces, 3, "a fresh nonce per attempt")
	assert.Len(t, sigs, 3, "a fresh signature per attempt")
}

func TestValidationBeforeSending(t *testing.T) {
	c, _, seen := setup(t)
	ctx := context.Background()
	long := strings.Repeat("k", 129)
	cases := []struct {
		name string
		call func() error
		kind error
		key  string
	}{
		{"empty header_id", func() error {
			_, err := c.Cards.Apply(ctx, &coinepay.ApplyRequest{PackageID: "p"}, payonce.WithKey(keytest.Now(t, "k1")))
			return err
		}, payonce.ErrInvalidRequest, "k1"},
		{"blank package_id", func() error {
			_, err := c.Cards.Apply(ctx, &coinepay.ApplyRequest{HeaderID: "h", PackageID: "  "}, payonce.WithKey(keytest.Now(t, "k2")))
			return err
		}, payonce.ErrInvalidRequest, "k2"},
		{"empty card_id", func() error {
			_, err := c.Cards.Recharge(ctx, &coinepay.RechargeRequest{Amount: mustAmount(t, "1")}, payonce.WithKey(keytest.Now(t, "k3")))
			return err
		}, payonce.ErrInvalidRequest, "k3"},
		{"zero amount", func() error {
			_, err := c.Cards.Recharge(ctx, &coinepay.RechargeRequest{CardID: "c"}, payonce.WithKey(keytest.Now(t, "k4")))
			return err
		}, payonce.ErrInvalidAmount, "k4"},
		{"nil apply request", func() error {
			_, err := c.Cards.Apply(ctx, nil, payonce.WithKey(keytest.Now(t, "k5")))
			return err
		}, payonce.ErrInvalidRequest, "k5"},
		{"nil recharge request", func() error {
			_, err := c.Cards.Recharge(ctx, nil, payonce.WithKey(keytest.Now(t, "k6")))
			return err
		}, payonce.ErrInvalidRequest, "k6"},
		{"info without id", func() error { _, err := c.Cards.Info(ctx, ""); return err }, payonce.ErrInvalidRequest, ""},
		{"negative page", func() error { _, err := c.Cards.List(ctx, &coinepay.ListOptions{Page: -1}); return err }, payonce.ErrInvalidRequest, ""},
		{"key missing", func() error {
			_, err := c.Cards.Apply(ctx, &coinepay.ApplyRequest{HeaderID: "h", PackageID: "p"}, payonce.WithoutKey())
			return err
		}, payonce.ErrKeyRequired, ""},
		{"key too long", func() error {
			_, err := c.Cards.Apply(ctx, &coinepay.ApplyRequest{HeaderID: "h", PackageID: "p"}, payonce.WithKey(keytest.Now(t, long)))
			return err
		}, payonce.ErrKeyTooLong, long},
		{"key invalid chars", func() error {
			_, err := c.Cards.Recharge(ctx, &coinepay.RechargeRequest{CardID: "c", Amount: mustAmount(t, "1")}, payonce.WithKey(keytest.Now(t, "order 42/x")))
			return err
		}, payonce.ErrKeyInvalidChars, "order 42/x"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			require.ErrorIs(t, err, tc.kind)
			var ae *payonce.APIError
			require.ErrorAs(t, err, &ae)
			assert.Equal(t, tc.key, ae.Key.String())
			assert.Equal(t, "coinepay", ae.Provider)
			assert.Zero(t, ae.StatusCode)
			assert.False(t, payonce.IsTemporary(ae))
		})
	}
	assert.Empty(t, seen(), "nothing is sent")
}

func TestInfoAndListSendNoKey(t *testing.T) {
	c, mux, seen := setup(t)
	mux.HandleFunc("GET "+coinepay.PathCardInfo, func(w http.ResponseWriter, r *http.Request) {
		writeEnvelope(w, 200, "success", "成功", map[string]any{"card_id": r.URL.Query().Get("card_id"), "status": "active", "balance": 5})
	})
	mux.HandleFunc("GET "+coinepay.PathCardList, func(w http.ResponseWriter, r *http.Request) {
		writeEnvelope(w, 200, "success", "成功", map[string]any{"items": []map[string]any{{"card_id": "a"}}, "total": 1, "page": 1, "page_size": 20})
	})
	ctx := context.Background()
	info, err := c.Cards.Info(ctx, "card 1&x")
	require.NoError(t, err)
	assert.Equal(t, "card 1&x", info.CardID)
	assert.Equal(t, "5.00", info.Balance.String())
	assert.Equal(t, "active", info.Status)
	assert.Empty(t, info.Meta.Key)

	page, err := c.Cards.List(ctx, &coinepay.ListOptions{Page: 1, PageSize: 20})
	require.NoError(t, err)
	assert.Equal(t, 1, page.Total)
	assert.False(t, page.HasMore())
	require.Len(t, page.Cards, 1)

	reqs := seen()
	require.Len(t, reqs, 2)
	for _, r := range reqs {
		assert.Empty(t, r.Header.Get(corekit.HeaderIdempotencyKey))
		assert.NotEmpty(t, r.Header.Get(coinepay.HeaderSignature))
		assert.Empty(t, r.Body, "a GET carries no body")
	}
	assert.Equal(t, "card_id=card+1%26x", reqs[0].Query)
	assert.Equal(t, "page=1&page_size=20", reqs[1].Query)
}

func TestAllPages(t *testing.T) {
	c, mux, seen := setup(t)
	const total = 7
	mux.HandleFunc("GET "+coinepay.PathCardList, func(w http.ResponseWriter, r *http.Request) {
		var page, size int
		_, _ = fmt.Sscan(r.URL.Query().Get("page"), &page)
		_, _ = fmt.Sscan(r.URL.Query().Get("page_size"), &size)
		var list []map[string]any
		for i := (page - 1) * size; i < min(page*size, total); i++ {
			list = append(list, map[string]any{"card_id": fmt.Sprintf("card_%d", i)})
		}
		writeEnvelope(w, 200, "success", "成功", map[string]any{"items": list, "total": total, "page": page, "page_size": size})
	})
	var ids []string
	for card, err := range c.Cards.All(context.Background(), &coinepay.ListOptions{PageSize: 3}) {
		require.NoError(t, err)
		ids = append(ids, card.CardID)
	}
	assert.Len(t, ids, total)
	assert.Equal(t, "card_6", ids[6])
	assert.Len(t, seen(), 3)

	// Breaking out stops the paging.
	n := 0
	for range c.Cards.All(context.Background(), &coinepay.ListOptions{PageSize: 3}) {
		n++
		break
	}
	assert.Equal(t, 1, n)
	assert.Len(t, seen(), 4)
}

func TestListAndAllTakeNilOptions(t *testing.T) {
	c, mux, seen := setup(t)
	var queries []string
	mux.HandleFunc("GET "+coinepay.PathCardList, func(w http.ResponseWriter, r *http.Request) {
		queries = append(queries, r.URL.RawQuery)
		writeEnvelope(w, 200, "success", "成功", map[string]any{"items": []map[string]any{{"card_id": "a"}}, "total": 1})
	})
	page, err := c.Cards.List(context.Background(), nil)
	require.NoError(t, err)
	assert.Equal(t, 1, page.Page)
	require.Len(t, page.Cards, 1)
	assert.Equal(t, 1, page.Meta.Attempts)

	opts := &coinepay.ListOptions{}
	var ids []string
	for card, err := range c.Cards.All(context.Background(), opts) {
		require.NoError(t, err)
		ids = append(ids, card.CardID)
	}
	assert.Equal(t, []string{"a"}, ids)
	assert.Equal(t, coinepay.ListOptions{}, *opts, "All does not change the caller's options")
	assert.Equal(t, []string{"", "page=1&page_size=50"}, queries)
	assert.Len(t, seen(), 2)
}

func TestAllStopsOnError(t *testing.T) {
	c, mux, _ := setup(t)
	mux.HandleFunc("GET "+coinepay.PathCardList, func(w http.ResponseWriter, _ *http.Request) {
		writeEnvelope(w, http.StatusForbidden, "openapi_forbidden", "无权限", nil)
	})
	var errs []error
	for card, err := range c.Cards.All(context.Background(), nil) {
		assert.Nil(t, card)
		errs = append(errs, err)
	}
	require.Len(t, errs, 1)
	assert.ErrorIs(t, errs[0], payonce.ErrForbidden)
}

func mustAmount(t *testing.T, s string) payonce.Amount {
	t.Helper()
	a, err := payonce.ParseAmount(s)
	require.NoError(t, err)
	return a
}

// The journal scope names the credential by a digest keyed with the
// secret (no unkeyed hash of the API key, which is itself a credential)
// and the environment by the base URL's origin.
func TestScopeIsAKeyedDigestAndTheOrigin(t *testing.T) {
	const key = "ak_live_1234567890"
	scope := func(key, secret, base string) string {
		t.Helper()
		c, err := coinepay.NewClient(key, secret, payonce.WithBaseURL(base))
		require.NoError(t, err)
		return c.Core().Scope()
	}
	s := scope(key, "s3cr3t", "https://openapi.example/base")
	sum := sha256.Sum256([]byte(key))
	for _, leak := range []string{key, "s3cr3t", hex.EncodeToString(sum[:])[:8], base64.RawURLEncoding.EncodeToString(sum[:])[:8]} {
		assert.NotContains(t, s, leak)
	}
	assert.Regexp(t, `^coinepay:[0-9a-f]{32}@https://openapi\.example$`, s)
	assert.NotEqual(t, s, scope("ak_live_1234567891", "s3cr3t", "https://openapi.example"), "another API key")
	assert.NotEqual(t, s, scope(key, "s3cr3t", "https://sandbox.openapi.example"), "another environment")
	assert.Equal(t, s, scope(key, "s3cr3t", "https://OPENAPI.example:443/"), "one origin")
}

// The same API key on two environments (two fakes, two origins) records
// under two scopes: the second environment's card is issued, not answered
// from the first's entry.
func TestSameAPIKeyOnTwoEnvironmentsNeverSharesEntries(t *testing.T) {
	sandbox := coinepaytest.New(t, coinepaytest.WithCredentials("ak_shared", "sk_shared_secret"))
	production := coinepaytest.New(t, coinepaytest.WithCredentials("ak_shared", "sk_shared_secret"))
	j := journal.NewMemory()
	apply := &coinepay.ApplyRequest{HeaderID: "hdr_1", PackageID: "pkg_basic"}
	for _, srv := range []*coinepaytest.Server{sandbox, production} {
		c, err := srv.Client(payonce.WithJournal(j), payonce.WithSigner(srv.Signer()))
		require.NoError(t, err)
		res, err := c.Cards.Apply(t.Context(), apply, payonce.WithReference("job-1/apply"))
		require.NoError(t, err)
		assert.False(t, res.Meta.FromJournal)
		assert.Equal(t, 1, srv.Ledger().CountKind("card.apply"), "issued on %s", srv.URL)
	}
}

// A scope given by hand that holds the API key or the secret is refused.
func TestScopeHoldingACredentialIsRefused(t *testing.T) {
	for _, scope := range []string{"coinepay:ak_live_1234567890", "shop:sk_live_secret_1"} {
		_, err := coinepay.NewClient("ak_live_1234567890", "sk_live_secret_1", payonce.WithBaseURL("https://openapi.example"), payonce.WithScope(scope))
		require.ErrorIs(t, err, payonce.ErrInvalidConfig, scope)
		assert.NotContains(t, err.Error(), "1234567890")
		assert.NotContains(t, err.Error(), "secret_1")
	}
}

// Entries an earlier payonce recorded under a plain digest of the API key
// (or, earlier, the key itself) are never missed: a journaled call is
// refused, nothing sent, and the error never holds the key.
func TestEntriesUnderEarlierScopeFormsAreNotMissed(t *testing.T) {
	const key, secret = "ak_golden_1234567890", "sk_golden_secret_1"
	sum := sha256.Sum256([]byte(key))
	for _, old := range []string{"coinepay:" + hex.EncodeToString(sum[:8]), "coinepay:" + key} {
		srv := coinepaytest.New(t, coinepaytest.WithCredentials(key, secret))
		j := journal.NewMemory()
		_, _, err := j.Reserve(t.Context(), journaltest.Entry(old, "job-0/apply"))
		require.NoError(t, err)
		c, err := srv.Client(payonce.WithJournal(j))
		require.NoError(t, err)
		_, err = c.Cards.Apply(t.Context(), &coinepay.ApplyRequest{HeaderID: "hdr_1", PackageID: "pkg_basic"}, payonce.WithReference("job-1/apply"))
		require.ErrorIs(t, err, payonce.ErrInvalidConfig)
		var le *payonce.LegacyScopeError
		require.ErrorAs(t, err, &le)
		assert.Equal(t, old, le.Scope)
		assert.NotContains(t, err.Error(), key)
		assert.Zero(t, srv.Ledger().Len(), "nothing sent")
	}
}
