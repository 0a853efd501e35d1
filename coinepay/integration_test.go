package coinepay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payonce/payonce/internal/corekit"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/coinepay"
	"github.com/payonce/payonce/coinepay/coinepaytest"
	"github.com/payonce/payonce/internal/testsupport/keytest"
	"github.com/payonce/payonce/internal/testsupport/retrytest"
	"github.com/payonce/payonce/payoncetest"
)

var applyReq = &coinepay.ApplyRequest{HeaderID: "hdr_1", PackageID: "pkg_basic"}

// newFake starts the fake and a fast-retrying client for it.
func newFake(t *testing.T, opts ...payonce.Option) (*coinepaytest.Server, *coinepay.Client) {
	t.Helper()
	srv := coinepaytest.New(t)
	// The fake's clock, millisecond retries, a generous attempt timeout.
	c, err := srv.Client(append([]payonce.Option{payonce.WithRetryPolicy(fastPolicy())}, opts...)...)
	require.NoError(t, err)
	return srv, c
}

func addFault(t *testing.T, srv *coinepaytest.Server, r payoncetest.Rule) {
	t.Helper()
	require.NoError(t, srv.AddFault(r))
}

// captured is one attempt as it left the client.
type captured struct {
	Header http.Header
	Body   []byte
	Method string
	URL    string
}

// captureTransport records every attempt the client sends.
type captureTransport struct {
	base http.RoundTripper
	mu   sync.Mutex
	reqs []captured
}

func (c *captureTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(r.Body)
		_ = r.Body.Close()
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	c.mu.Lock()
	c.reqs = append(c.reqs, captured{Header: r.Header.Clone(), Body: body, Method: r.Method, URL: r.URL.String()})
	c.mu.Unlock()
	return c.base.RoundTrip(r)
}

func (c *captureTransport) all() []captured {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]captured(nil), c.reqs...)
}

func TestLostResponseReturnsFirstCardAsReplay(t *testing.T) {
	srv, c := newFake(t)
	addFault(t, srv, payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: coinepay.PathCardApply, Count: 1})

	res, err := c.Cards.Apply(context.Background(), applyReq)
	require.NoError(t, err)
	assert.True(t, res.Meta.Replayed, "the second attempt got the stored answer")
	assert.Equal(t, 2, res.Meta.Attempts)
	assert.NotEmpty(t, res.CardID)
	assert.Equal(t, "1.00", res.Fee.String())

	ops := srv.Ledger().Operations()
	require.Len(t, ops, 1, "one card in the ledger")
	assert.Equal(t, res.CardID, ops[0].ID, "the replay is the first attempt's card")
	assert.True(t, srv.Ledger().ExecutedOnce(res.Meta.Key.String()))
	assert.Equal(t, "999.00", srv.Balance(srv.APIKey()).String(), "the fee was charged once")

	info, err := c.Cards.Info(context.Background(), res.CardID)
	require.NoError(t, err)
	assert.Equal(t, res.CardID, info.CardID)
	assert.Equal(t, "active", info.Status)
	assert.False(t, info.CreatedAt.IsZero())
	assert.Empty(t, info.Meta.Key, "info sends no key")
}

func TestLostRechargeMovesMoneyOnce(t *testing.T) {
	srv, c := newFake(t)
	ctx := context.Background()
	card, err := c.Cards.Apply(ctx, applyReq)
	require.NoError(t, err)
	addFault(t, srv, payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: coinepay.PathCardRecharge, Count: 2})

	rc, err := c.Cards.Recharge(ctx, &coinepay.RechargeRequest{CardID: card.CardID, Amount: mustAmount(t, "25.50")})
	require.NoError(t, err)
	assert.True(t, rc.Meta.Replayed)
	assert.Equal(t, 3, rc.Meta.Attempts)
	assert.Equal(t, "25.50", rc.CardBalance.String())
	assert.Equal(t, "973.50", srv.Balance(srv.APIKey()).String())
	assert.Equal(t, 1, srv.Ledger().CountKind("card.recharge"))

	info, err := c.Cards.Info(ctx, card.CardID)
	require.NoError(t, err)
	assert.Equal(t, "25.50", info.Balance.String())
}

// TestAsyncTaskPatternNewClientEachRun follows Coinepay's task-queue
// pattern: the job runs five times, each run in a "new process" (a new
// client), all with the key NewKey(jobCreated, "openapi:apply", taskID). The first four runs
// lose their answer; the fifth gets the card the first one opened.
func TestAsyncTaskPatternNewClientEachRun(t *testing.T) {
	srv := coinepaytest.New(t)
	addFault(t, srv, payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: coinepay.PathCardApply, Count: 4})
	const taskID = "task-7f3a"
	key, err := payonce.NewKey(srv.Clock().Now(), "openapi:apply", taskID)
	require.NoError(t, err)
	policy := fastPolicy()
	policy.MaxAttempts = 1 // the queue, not the client, retries

	var res *coinepay.ApplyResult
	for run := 1; run <= 5; run++ {
		c, err := srv.Client(payonce.WithRetryPolicy(policy)) // a new process
		require.NoError(t, err)
		res, err = c.Cards.Apply(context.Background(), applyReq, payonce.WithKey(key))
		if run < 5 {
			require.Error(t, err, "run %d", run)
			assert.True(t, payonce.IsTemporary(err), "run %d: %v", run, err)
			assert.Equal(t, key, payonce.KeyOf(err))
			continue
		}
		require.NoError(t, err)
	}
	assert.Equal(t, "openapi:apply:"+taskID, res.Meta.Key.String())
	assert.True(t, res.Meta.Replayed)
	assert.Equal(t, 1, srv.Ledger().CountKind("card.apply"), "exactly one card")
	assert.Equal(t, res.CardID, srv.Ledger().ByKey(key.String())[0].ID)
	assert.Len(t, srv.Requests(), 5)
}

func TestConcurrentAppliesSameKeyOneCard(t *testing.T) {
	srv, c := newFake(t)
	// Hold the first request before it commits, so the second arrives
	// while the first is in flight.
	addFault(t, srv, payoncetest.Rule{Fault: payoncetest.FaultDelay, Path: coinepay.PathCardApply, Count: 1, Delay: 150 * time.Millisecond})

	const n = 2
	var wg sync.WaitGroup
	results := make([]*coinepay.ApplyResult, n)
	errs := make([]error, n)
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			results[i], errs[i] = c.Cards.Apply(context.Background(), applyReq, payonce.WithKey(keytest.Now(t, "concurrent-1")))
		})
	}
	close(start)
	wg.Wait()
	for i := range n {
		require.NoError(t, errs[i])
	}
	assert.Equal(t, results[0].CardID, results[1].CardID, "both callers get the one card")
	assert.Equal(t, 1, srv.Ledger().CountKind("card.apply"))
	assert.Equal(t, "999.00", srv.Balance(srv.APIKey()).String())
}

func TestInsufficientBalanceNotStored(t *testing.T) {
	srv, c := newFake(t)
	ctx := context.Background()
	srv.SetBalance(srv.APIKey(), mustAmount(t, "0.50"))

	_, err := c.Cards.Apply(ctx, applyReq, payonce.WithKey(keytest.Now(t, "order-1001")))
	require.ErrorIs(t, err, coinepay.ErrInsufficientBalance)
	var ae *payonce.APIError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "insufficient_balance", ae.Code)
	assert.Equal(t, "余额不足", ae.Message)
	assert.Equal(t, http.StatusBadRequest, ae.StatusCode)
	assert.Equal(t, 1, ae.Attempts, "a business failure is not retried")
	assert.False(t, payonce.IsTemporary(err))
	assert.Zero(t, srv.Ledger().Len())

	srv.SetBalance(srv.APIKey(), mustAmount(t, "10.00"))
	res, err := c.Cards.Apply(ctx, applyReq, payonce.WithKey(payonce.KeyOf(err)))
	require.NoError(t, err)
	assert.Equal(t, "order-1001", res.Meta.Key.String(), "the same key")
	assert.False(t, res.Meta.Replayed, "executed now, not replayed")
	assert.Equal(t, 1, srv.Ledger().Count("order-1001"))
	assert.Equal(t, "9.00", res.AccountBalance.String())
}

func TestConflictNotRetried(t *testing.T) {
	srv, c := newFake(t)
	ctx := context.Background()
	_, err := c.Cards.Apply(ctx, applyReq, payonce.WithKey(keytest.Now(t, "dup-1")))
	require.NoError(t, err)
	_, err = c.Cards.Apply(ctx, &coinepay.ApplyRequest{HeaderID: "hdr_1", PackageID: "pkg_gold"}, payonce.WithKey(keytest.Now(t, "dup-1")))
	require.ErrorIs(t, err, payonce.ErrIdempotencyConflict)
	var ae *payonce.APIError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, 1, ae.Attempts)
	assert.Equal(t, "Idempotency-Key 冲突", ae.Message)
	assert.Equal(t, 1, srv.Ledger().Len())
}

func TestRateLimitAndServerErrorsRetried(t *testing.T) {
	retries, observe := retrytest.New()
	srv, c := newFake(t, observe)
	addFault(t, srv, payoncetest.Rule{Fault: payoncetest.FaultRateLimit, Path: coinepay.PathCardApply, Count: 1, RetryAfter: 1})
	addFault(t, srv, payoncetest.Rule{Fault: payoncetest.FaultErrorBeforeCommit, Path: coinepay.PathCardApply, Count: 1, Status: 502})
	addFault(t, srv, payoncetest.Rule{Fault: payoncetest.FaultResetBeforeRead, Path: coinepay.PathCardApply, Count: 1})
	res, err := c.Cards.Apply(context.Background(), applyReq)
	require.NoError(t, err)
	assert.Equal(t, 4, res.Meta.Attempts)
	assert.False(t, res.Meta.Replayed)
	// The waits the client chose, as its observer saw them, rather than
	// timed: a loaded machine cannot make them look longer.
	waits := retries.All()
	require.Len(t, waits, 3)
	capped := payoncetest.FastRetryPolicy().MaxRetryAfter
	assert.Contains(t, waits, capped, "the 1 s Retry-After capped by MaxRetryAfter")
	for _, w := range waits {
		assert.LessOrEqual(t, w, capped)
	}
	assert.Equal(t, 1, srv.Ledger().Len())
}

func TestKeyRulesClientAndServer(t *testing.T) {
	srv, c := newFake(t)
	ctx := context.Background()
	cases := []struct {
		name string
		opt  payonce.CallOption
		key  string // the raw header ("" for none)
		kind error
		code string
	}{
		{"missing", payonce.WithoutKey(), "", payonce.ErrKeyRequired, "openapi_idempotency_key_required"},
		{"too long", payonce.WithKey(keytest.Now(t, strings.Repeat("k", 129))), strings.Repeat("k", 129), payonce.ErrKeyTooLong, "openapi_idempotency_key_too_long"},
		{"invalid chars", payonce.WithKey(keytest.Now(t, "order/42 x")), "order/42 x", payonce.ErrKeyInvalidChars, "openapi_idempotency_key_invalid_chars"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Cards.Apply(ctx, applyReq, tc.opt)
			require.ErrorIs(t, err, tc.kind)
			_, err = c.Cards.Recharge(ctx, &coinepay.RechargeRequest{CardID: "card_x", Amount: mustAmount(t, "1")}, tc.opt)
			require.ErrorIs(t, err, tc.kind)
			assert.Empty(t, srv.Requests(), "refused before sending")

			// Sent raw, validly signed, the fake answers the documented key.
			for _, path := range []string{coinepay.PathCardApply, coinepay.PathCardRecharge} {
				req, err := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(`{"header_id":"hdr_1","package_id":"pkg_basic"}`))
				require.NoError(t, err)
				if tc.key != "" {
					req.Header.Set(corekit.HeaderIdempotencyKey, tc.key)
				}
				resp, err := srv.HTTPClient().Do(req)
				require.NoError(t, err)
				var env coinepay.Envelope
				require.NoError(t, json.NewDecoder(resp.Body).Decode(&env))
				_ = resp.Body.Close()
				assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
				assert.Equal(t, http.StatusBadRequest, env.Code)
				assert.Equal(t, tc.code, env.MessageKey)
				assert.ErrorIs(t, messageKeyKind(env.MessageKey), tc.kind)
			}
			assert.Zero(t, srv.Ledger().Len())
			srv.Reset()
		})
	}
}

func TestServerClockTenMinutesAhead(t *testing.T) {
	// The client signs with the local clock, as a merchant's host would
	// (the test client's default is the fake's clock).
	srv, c := newFake(t, payoncetest.ClientClock(time.Now))
	srv.Clock().Advance(10 * time.Minute)

	res, err := c.Cards.Apply(context.Background(), applyReq)
	require.NoError(t, err)
	assert.Equal(t, 2, res.Meta.Attempts)
	reqs := srv.Requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, http.StatusUnauthorized, reqs[0].Status, "first attempt stale")
	require.True(t, reqs[0].SignatureChecked)
	assert.False(t, reqs[0].SignatureValid)
	assert.Equal(t, http.StatusOK, reqs[1].Status, "corrected retry accepted")
	assert.Equal(t, reqs[0].IdempotencyKey, reqs[1].IdempotencyKey)
	assert.NotEqual(t, reqs[0].Nonce, reqs[1].Nonce)
	assert.NotEqual(t, reqs[0].Timestamp, reqs[1].Timestamp)
	assert.InDelta(t, 600, c.ClockOffset().Seconds(), 2)
	assert.Equal(t, 1, srv.Ledger().Len())

	// Later calls use the learned offset at once.
	info, err := c.Cards.Info(context.Background(), res.CardID)
	require.NoError(t, err)
	assert.Equal(t, 1, info.Meta.Attempts)
}

func TestCapturedSignatureReplayRefused(t *testing.T) {
	capture := &captureTransport{base: http.DefaultTransport}
	srv, c := newFake(t, payonce.WithHTTPClient(&http.Client{Transport: capture}))
	_, err := c.Cards.Apply(context.Background(), applyReq)
	require.NoError(t, err)
	sent := capture.all()
	require.Len(t, sent, 1)

	// An eavesdropper replays the captured request byte for byte: same
	// headers (key, nonce, timestamp, signature) and body.
	attack, err := http.NewRequest(sent[0].Method, sent[0].URL, bytes.NewReader(sent[0].Body))
	require.NoError(t, err)
	attack.Header = sent[0].Header.Clone()
	resp, err := http.DefaultClient.Do(attack)
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	var env coinepay.Envelope
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&env))
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.Equal(t, "openapi_nonce_replayed", env.MessageKey)
	assert.ErrorIs(t, messageKeyKind(env.MessageKey), coinepay.ErrNonceReplayed)
	assert.Equal(t, 1, srv.Ledger().Len(), "no second card")
}

// tickingClock advances one second per reading, so every attempt's
// signature carries a distinct timestamp.
func tickingClock() func() time.Time {
	var n atomic.Int64
	start := time.Now()
	return func() time.Time { return start.Add(time.Duration(n.Add(1)) * time.Second) }
}

func TestEveryAttemptResignedSameKeyAndBody(t *testing.T) {
	capture := &captureTransport{base: http.DefaultTransport}
	srv := coinepaytest.New(t)
	signer, err := coinepay.NewHMACSigner(srv.APIKey(), srv.Secret(), coinepay.WithSignerClock(tickingClock()))
	require.NoError(t, err)
	c, err := srv.Client(payonce.WithSigner(signer),
		payonce.WithHTTPClient(&http.Client{Transport: capture}))
	require.NoError(t, err)
	addFault(t, srv, payoncetest.Rule{Fault: payoncetest.FaultErrorBeforeCommit, Path: coinepay.PathCardRecharge, Count: 1, Status: 503})
	addFault(t, srv, payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: coinepay.PathCardRecharge, Count: 1})

	card, err := c.Cards.Apply(context.Background(), applyReq)
	require.NoError(t, err)
	rc, err := c.Cards.Recharge(context.Background(), &coinepay.RechargeRequest{CardID: card.CardID, Amount: mustAmount(t, "5")})
	require.NoError(t, err)
	assert.Equal(t, 3, rc.Meta.Attempts)

	// The fake's request log: one key, new nonce and timestamp each time,
	// every signature checked valid (the first attempt failed before the
	// check).
	logged := srv.Requests()[1:]
	require.Len(t, logged, 3)
	nonces, stamps := map[string]bool{}, map[string]bool{}
	for i, a := range logged {
		assert.Equal(t, rc.Meta.Key.String(), a.IdempotencyKey)
		if i > 0 {
			require.True(t, a.SignatureChecked)
			assert.True(t, a.SignatureValid)
		}
		nonces[a.Nonce], stamps[a.Timestamp] = true, true
	}
	assert.Len(t, nonces, 3)
	assert.Len(t, stamps, 3)

	// What left the client: identical body bytes, new signatures.
	sent := capture.all()[1:]
	require.Len(t, sent, 3)
	sigs := map[string]bool{}
	for _, s := range sent {
		assert.Equal(t, sent[0].Body, s.Body)
		assert.Equal(t, rc.Meta.Key.String(), s.Header.Get(corekit.HeaderIdempotencyKey))
		sigs[s.Header.Get(coinepay.HeaderSignature)] = true
	}
	assert.Len(t, sigs, 3)
	assert.JSONEq(t, `{"card_id":"`+card.CardID+`","amount":"5.00"}`, string(sent[0].Body))
	assert.Equal(t, 1, srv.Ledger().CountKind("card.recharge"))
}

// TestLostReadOnReusedConnection loses the answer of a GET on a reused
// keep-alive connection: the retry must be signed afresh, not re-sent by
// net/http with the nonce the server already saw.
func TestLostReadOnReusedConnection(t *testing.T) {
	srv, c := newFake(t)
	ctx := context.Background()
	card, err := c.Cards.Apply(ctx, applyReq)
	require.NoError(t, err)
	addFault(t, srv, payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: coinepay.PathCardInfo, Count: 1})
	info, err := c.Cards.Info(ctx, card.CardID)
	require.NoError(t, err)
	assert.Equal(t, 2, info.Meta.Attempts)
	reqs := srv.Requests()[1:]
	require.Len(t, reqs, 2)
	assert.NotEqual(t, reqs[0].Nonce, reqs[1].Nonce)
}

func TestListAndAllAgainstFake(t *testing.T) {
	_, c := newFake(t)
	ctx := context.Background()
	var ids []string
	for range 5 {
		res, err := c.Cards.Apply(ctx, applyReq)
		require.NoError(t, err)
		ids = append(ids, res.CardID)
	}
	page, err := c.Cards.List(ctx, &coinepay.ListOptions{Page: 2, PageSize: 2})
	require.NoError(t, err)
	assert.Equal(t, 5, page.Total)
	assert.Equal(t, 2, page.Page)
	require.Len(t, page.Cards, 2)
	assert.Equal(t, ids[2], page.Cards[0].CardID)
	assert.True(t, page.HasMore())
	assert.Empty(t, page.Meta.Key)

	var got []string
	for card, err := range c.Cards.All(ctx, &coinepay.ListOptions{PageSize: 2}) {
		require.NoError(t, err)
		got = append(got, card.CardID)
	}
	assert.Equal(t, ids, got)

	_, err = c.Cards.Info(ctx, "card_missing")
	require.ErrorIs(t, err, payonce.ErrNotFound)
	_, err = c.Cards.List(ctx, &coinepay.ListOptions{PageSize: 1000})
	require.ErrorIs(t, err, payonce.ErrInvalidRequest)
}

func TestWrongSecretRefused(t *testing.T) {
	srv := coinepaytest.New(t)
	c, err := coinepay.NewClient(srv.APIKey(), "not-the-secret", payonce.WithBaseURL(srv.URL), payonce.WithRetryPolicy(fastPolicy()))
	require.NoError(t, err)
	_, err = c.Cards.Apply(context.Background(), applyReq)
	require.ErrorIs(t, err, coinepay.ErrSignatureInvalid)
	assert.NotContains(t, err.Error(), "not-the-secret")
	assert.NotContains(t, err.Error(), srv.Secret())

	c, err = coinepay.NewClient("unknown-key", srv.Secret(), payonce.WithBaseURL(srv.URL), payonce.WithRetryPolicy(fastPolicy()))
	require.NoError(t, err)
	_, err = c.Cards.Info(context.Background(), "card_1")
	require.ErrorIs(t, err, payonce.ErrUnauthorized)
	var ae *payonce.APIError
	require.True(t, errors.As(err, &ae))
	assert.Equal(t, "openapi_api_key_invalid", ae.Code)
	assert.Zero(t, srv.Ledger().Len())
}

// TestNoSecretsInLogsOrErrors runs retries, a replay and a conflict
// against the fake with a debug logger, then looks for the secret, every
// signature and every nonce sent in the log and the errors.
func TestNoSecretsInLogsOrErrors(t *testing.T) {
	var logBuf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logBuf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	capture := &captureTransport{base: http.DefaultTransport}
	srv, c := newFake(t, payonce.WithLogger(logger), payonce.WithHTTPClient(&http.Client{Transport: capture}))
	addFault(t, srv, payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: coinepay.PathCardApply, Count: 1})
	ctx := context.Background()

	_, err := c.Cards.Apply(ctx, applyReq, payonce.WithKey(keytest.Now(t, "log-1")))
	require.NoError(t, err)
	_, err = c.Cards.Apply(ctx, &coinepay.ApplyRequest{HeaderID: "hdr_2", PackageID: "pkg_basic"}, payonce.WithKey(keytest.Now(t, "log-1")))
	require.ErrorIs(t, err, payonce.ErrIdempotencyConflict)
	_, infoErr := c.Cards.Info(ctx, "card_secret_lookup")
	require.ErrorIs(t, infoErr, payonce.ErrNotFound)

	text := logBuf.String() + err.Error() + infoErr.Error() + fmt.Sprintf("%+v %#v", err, infoErr)
	require.Contains(t, logBuf.String(), "log-1", "the key is logged, it is not a secret")
	assert.NotContains(t, text, srv.Secret())
	assert.NotContains(t, text, "card_secret_lookup", "no query string")
	sent := capture.all()
	require.Len(t, sent, 4)
	for _, s := range sent {
		assert.NotContains(t, text, s.Header.Get(coinepay.HeaderSignature))
		assert.NotContains(t, text, s.Header.Get(coinepay.HeaderNonce))
	}
}

// messageKeyKind is the kind the codec gives an error answer carrying the
// message_key key.
func messageKeyKind(key string) error {
	body, _ := json.Marshal(map[string]any{"code": http.StatusBadRequest, "message_key": key})
	e := &payonce.APIError{}
	coinepay.Codec{}.DecodeError(http.StatusBadRequest, nil, body, e)
	return e.Kind
}
