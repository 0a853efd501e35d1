package a55_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/internal/testsupport/keytest"
	"github.com/payonce/payonce/payoncetest"
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

// newFake starts the fake A55 and a client for it, acting for the fake's
// own account (srv.Account()).
func newFake(t *testing.T, opts ...payonce.Option) (*a55test.Server, *a55.Client) {
	t.Helper()
	srv := a55test.New(t, payoncetest.WithSeed(7))
	c, err := srv.Client(append([]payonce.Option{payonce.WithRetryPolicy(fastPolicy())}, opts...)...)
	require.NoError(t, err)
	return srv, c
}

// testAccount is the merchant and wallet of the handwritten servers'
// charges (the fake has its own: srv.Account()).
var testAccount = a55.Account{MerchantID: testMerchant, WalletUUID: testWallet}

func amount(t testing.TB, s string) payonce.Amount {
	t.Helper()
	a, err := payonce.ParseAmount(s)
	require.NoError(t, err)
	return a
}

// refCharge is a card charge in the create-charge reference's form: every
// required field, the card number given; the merchant and wallet are the
// client's account.
func refCharge(_ testing.TB, number string) *a55.ChargeCreateRequest {
	return chargeOf("100.00", number)
}

// chargeOf is refCharge for amount in one instalment.
func chargeOf(amount, number string) *a55.ChargeCreateRequest {
	return &a55.ChargeCreateRequest{
		TypeCharge: a55.TypeCreditCard, Currency: payonce.BRL, InstallmentValue: payoncetest.Amount(amount), InstallmentCount: 1,
		DueDate: "2099-12-31", Description: "Order 42",
		Payer: a55.Payer{Name: "张伟", Email: "zhangwei@example.com", TaxID: "39999999999", CellPhone: "+5511988887777",
			Address: a55.Address{Street: "Av. Paulista", Number: "1000", City: "São Paulo", State: "SP", PostalCode: "01310-100", Country: "BR"}},
		Card: &payonce.Card{Number: payonce.CardNumber(number), HolderName: "TEST",
			ExpirationMonth: "12", ExpirationYear: "2098", CVV: "123"},
	}
}

// The merchant and wallet of the handwritten servers' charges (the
// create-wallet page's examples).
const (
	testMerchant = "6ba7b810-9dad-11d1-80b4-00c04fd430c8"
	testWallet   = "f47ac10b-58cc-4372-a567-0e02b2c3d479"
)

func preauth(t testing.TB) *a55.ChargeCreateRequest {
	r := refCharge(t, a55test.CardConfirms)
	r.Capture = a55.Bool(false)
	return r
}

func key(name string) string { return "test-key-" + name + "-0123456789" }

// apiAttempts returns the API attempts (not token requests) that carried key.
func apiAttempts(srv *a55test.Server, k string) []payoncetest.Attempt {
	var out []payoncetest.Attempt
	for _, a := range srv.Requests() {
		if a.IdempotencyKey == k {
			out = append(out, a)
		}
	}
	return out
}

func tokenRequests(srv *a55test.Server) int { return pathRequests(srv, a55test.TokenPath) }

// The guide's story: the charge commits, the answer is lost. The client
// looks the charge up before sending the key again (A55 keeps only 2xx
// answers under a key: a TIMEOUT lost on the way would run again) and
// finds it: the create's answer, one attempt, one charge.
func TestGuideLostAnswerChargesOnce(t *testing.T) {
	srv, c := newFake(t)
	ctx := context.Background()
	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: a55test.ChargePath, Count: 1}))

	k := "550e8400-e29b-41d4-a716-446655440000"
	ch, err := c.Charges.Create(ctx, refCharge(t, a55test.CardConfirms), payonce.WithKey(keytest.Now(t, k)))
	require.NoError(t, err)
	assert.Equal(t, a55.StatusConfirmed, ch.Status)
	assert.Equal(t, "100.00", ch.Amount.String())
	assert.Equal(t, k, ch.Meta.Key.String())
	assert.Equal(t, 1, ch.Meta.Attempts)
	assert.Equal(t, 1, srv.Ledger().Count(k))
	assert.Equal(t, 1, srv.Ledger().CountKind("charge.create"))
	att := apiAttempts(srv, k)
	require.Len(t, att, 1, "looked up, not sent again")
	assert.True(t, att[0].Executed)
	assert.Equal(t, 1, pathRequests(srv, a55test.ChargesPath), "one list")

	// Running the operation again (a worker restart) replays it too.
	again, err := c.Charges.Create(ctx, refCharge(t, a55test.CardConfirms), payonce.WithKey(keytest.Now(t, k)))
	require.NoError(t, err)
	assert.Equal(t, ch.UUID, again.UUID)
	assert.Equal(t, 1, srv.Ledger().Count(k))

	got, err := c.Charges.Get(ctx, ch.UUID, ch.WalletUUID)
	require.NoError(t, err)
	assert.Equal(t, ch.UUID, got.UUID)
	assert.Equal(t, a55.StatusConfirmed, got.Status)
	assert.Empty(t, got.Meta.Key)
	assert.Equal(t, 100, got.Meta.RateLimit.Limit)
	assert.Positive(t, got.Meta.RateLimit.Remaining)
	assert.False(t, got.Meta.RateLimit.Reset.IsZero())
	assert.NotEmpty(t, got.Meta.RequestID)
}

func TestGeneratedKeyIsReusedAcrossRetries(t *testing.T) {
	srv, c := newFake(t)
	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultErrorBeforeCommit, Path: a55test.ChargePath, Count: 2, Status: 503}))
	ch, err := c.Charges.Create(context.Background(), refCharge(t, a55test.CardConfirms))
	require.NoError(t, err)
	assert.Len(t, ch.Meta.Key.String(), 36, "a UUID v4")
	assert.Equal(t, 3, ch.Meta.Attempts)
	assert.Len(t, apiAttempts(srv, ch.Meta.Key.String()), 3)
	assert.Equal(t, 1, srv.Ledger().Count(ch.Meta.Key.String()))
}

func TestConcurrentSameKeyOneCharge(t *testing.T) {
	srv, c := newFake(t)
	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDelay, Path: a55test.ChargePath, Delay: 20 * time.Millisecond, Count: 1}))
	k := key("concurrent")
	var wg sync.WaitGroup
	ids := make([]string, 8)
	errs := make([]error, 8)
	for i := range ids {
		wg.Go(func() {
			ch, err := c.Charges.Create(context.Background(), refCharge(t, a55test.CardConfirms), payonce.WithKey(keytest.Now(t, k)))
			errs[i] = err
			if err == nil {
				ids[i] = ch.UUID
			}
		})
	}
	wg.Wait()
	for i := range ids {
		require.NoError(t, errs[i])
		assert.Equal(t, ids[0], ids[i])
	}
	assert.Equal(t, 1, srv.Ledger().Count(k))
}

func TestChangedPayloadSameKeyConflicts(t *testing.T) {
	srv, c := newFake(t)
	ctx := context.Background()
	k := key("conflict")
	_, err := c.Charges.Create(ctx, refCharge(t, a55test.CardConfirms), payonce.WithKey(keytest.Now(t, k)))
	require.NoError(t, err)

	changed := refCharge(t, a55test.CardConfirms)
	changed.InstallmentValue = amount(t, "200.00")
	ch, err := c.Charges.Create(ctx, changed, payonce.WithKey(keytest.Now(t, k)))
	require.Error(t, err)
	assert.Nil(t, ch)
	assert.ErrorIs(t, err, payonce.ErrIdempotencyConflict)
	assert.False(t, payonce.IsTemporary(err))
	assert.Equal(t, k, payonce.KeyOf(err).String())
	var ae *payonce.APIError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, http.StatusConflict, ae.StatusCode)
	assert.Equal(t, "IDEMPOTENCY_KEY_CONFLICT", ae.Code)
	assert.Equal(t, 1, ae.Attempts, "a 409 is never retried")
	assert.Equal(t, 1, srv.Ledger().Count(k), "nothing more was charged")
	assert.Equal(t, 1, srv.Ledger().CountKind("charge.create"))
}

// After A55's 24 h window the same key is a new operation.
func TestSameKeyAfter24hIsNewCharge(t *testing.T) {
	srv, c := newFake(t)
	ctx := context.Background()
	k := key("day-later")
	first, err := c.Charges.Create(ctx, refCharge(t, a55test.CardConfirms), payonce.WithKey(keytest.Now(t, k)))
	require.NoError(t, err)

	srv.Clock().Advance(24*time.Hour + time.Minute) // the token expires too
	// The client remembers the key's first use and refuses it bare; told
	// the key is new (its creation time given), it sends it.
	_, err = c.Charges.Create(ctx, refCharge(t, a55test.CardConfirms), payonce.WithKey(keytest.Now(t, k)))
	require.ErrorIs(t, err, payonce.ErrKeyExpired)
	second, err := c.Charges.Create(ctx, refCharge(t, a55test.CardConfirms), payonce.WithKey(keytest.Key(t, k, srv.Clock().Now())))
	require.NoError(t, err)
	assert.NotEqual(t, first.UUID, second.UUID)
	assert.Equal(t, 2, srv.Ledger().Count(k))
	assert.Equal(t, 1, second.Meta.Attempts, "the token expired on the client's clock too: refreshed before sending")
}

// hookTransport calls after once per API round trip (token requests pass
// untouched), e.g. to move the fake clock while an attempt is in flight.
type hookTransport struct {
	n     atomic.Int32
	after func(n int)
}

func (h *hookTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if strings.HasPrefix(r.URL.Path, "/api/") && h.after != nil {
		h.after(int(h.n.Add(1)))
	}
	return resp, err
}

// The key-age guard stops a retry loop before an attempt that A55 could
// take for a new operation.
func TestKeyAgeGuardStopsRetryLoop(t *testing.T) {
	srv := a55test.New(t)
	clk := srv.Clock()
	slow := &hookTransport{after: func(int) { clk.Advance(20 * time.Minute) }} // every attempt takes 20 min
	c, err := srv.Client(payonce.WithRetryPolicy(fastPolicy()), payoncetest.ClientClock(clk.Now),
		payonce.WithHTTPClient(&http.Client{Transport: slow}))
	require.NoError(t, err)
	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultErrorBeforeCommit, Path: a55test.ChargePath}))

	k := key("old")
	created := clk.Now().Add(-22*time.Hour - 30*time.Minute)
	_, err = c.Charges.Create(context.Background(), refCharge(t, a55test.CardConfirms),
		payonce.WithKey(keytest.Key(t, k, created)))
	require.Error(t, err)
	assert.ErrorIs(t, err, payonce.ErrKeyExpired)
	assert.False(t, payonce.IsTemporary(err))
	// 22h30 and 22h50 are inside 24 h minus the 1 h margin; 23h10 is not.
	assert.Len(t, apiAttempts(srv, k), 2)
	assert.Zero(t, srv.Ledger().Count(k))

	// Resuming the stored operation the next day sends nothing at all.
	srv.ClearFaults()
	clk.Advance(24 * time.Hour)
	_, err = c.Charges.Create(context.Background(), refCharge(t, a55test.CardConfirms), payonce.WithKey(payonce.KeyOf(err)))
	assert.ErrorIs(t, err, payonce.ErrKeyExpired)
	assert.Len(t, apiAttempts(srv, k), 2)
}

func TestResumeAfterTemporaryFailure(t *testing.T) {
	srv, c := newFake(t)
	ctx := context.Background()
	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultErrorBeforeCommit, Path: a55test.ChargePath, Count: 5}))
	_, err := c.Charges.Create(ctx, refCharge(t, a55test.CardConfirms))
	require.Error(t, err)
	assert.ErrorIs(t, err, payonce.ErrRetriesExhausted)
	require.True(t, payonce.IsTemporary(err))
	k := payonce.KeyOf(err).String()
	assert.Zero(t, srv.Ledger().Count(k), "nothing ran")

	ch, err := c.Charges.Create(ctx, refCharge(t, a55test.CardConfirms), payonce.WithKey(payonce.KeyOf(err)))
	require.NoError(t, err)
	assert.Equal(t, k, ch.Meta.Key.String())
	again, err := c.Charges.Create(ctx, refCharge(t, a55test.CardConfirms), payonce.WithKey(ch.Meta.Key))
	require.NoError(t, err)
	assert.Equal(t, ch.UUID, again.UUID)
	assert.Equal(t, 1, srv.Ledger().Count(k), "resuming replays, it does not charge again")
}

// The token expires between two attempts of one operation: the 401 is
// answered by one token refresh and the attempt is repeated, same key.
func TestTokenExpiryMidRetry(t *testing.T) {
	srv := a55test.New(t)
	clk := srv.Clock()
	hook := &hookTransport{after: func(n int) {
		if n == 1 {
			clk.Advance(2 * time.Hour) // while the 503 travels back, the token expires
		}
	}}
	// The client runs on the local clock, so it cannot see the server's
	// token expire: the retry goes out with the old token, is answered
	// 401, and the client refreshes and sends it again under the same key.
	c, err := srv.Client(payonce.WithRetryPolicy(fastPolicy()), payonce.WithHTTPClient(&http.Client{Transport: hook}),
		payoncetest.ClientClock(time.Now))
	require.NoError(t, err)
	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultErrorBeforeCommit, Path: a55test.ChargePath, Count: 1}))

	ch, err := c.Charges.Create(context.Background(), refCharge(t, a55test.CardConfirms), payonce.WithKey(keytest.Now(t, key("token"))))
	require.NoError(t, err)
	assert.Equal(t, 3, ch.Meta.Attempts)
	att := apiAttempts(srv, key("token"))
	require.Len(t, att, 3)
	assert.Equal(t, []int{503, 401, 200}, []int{att[0].Status, att[1].Status, att[2].Status})
	assert.Equal(t, 2, tokenRequests(srv), "one token at start, one refresh")
	assert.Equal(t, 1, srv.Ledger().Count(key("token")))
}

func TestRateLimitRetryAfter(t *testing.T) {
	srv, c := newFake(t)
	ctx := context.Background()

	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultRateLimit, Path: a55test.ChargePath, Count: 2, RetryAfter: 1}))
	start := time.Now()
	ch, err := c.Charges.Create(ctx, refCharge(t, a55test.CardConfirms))
	require.NoError(t, err)
	assert.Equal(t, 3, ch.Meta.Attempts)
	assert.GreaterOrEqual(t, time.Since(start), 40*time.Millisecond, "waited Retry-After, capped at 20 ms, twice")
	assert.Equal(t, 1, srv.Ledger().Count(ch.Meta.Key.String()))

	// The fake's own limit: 2 a minute.
	srv.SetRateLimit(2, time.Minute)
	ch, err = c.Charges.Create(ctx, refCharge(t, a55test.CardConfirms))
	require.NoError(t, err)
	assert.Equal(t, 2, ch.Meta.RateLimit.Limit)
	assert.Equal(t, 1, ch.Meta.RateLimit.Remaining)
	_, err = c.Charges.Create(ctx, refCharge(t, a55test.CardConfirms))
	require.NoError(t, err)
	_, err = c.Charges.Create(ctx, refCharge(t, a55test.CardConfirms))
	require.Error(t, err)
	assert.ErrorIs(t, err, payonce.ErrRateLimited)
	assert.ErrorIs(t, err, payonce.ErrRetriesExhausted)
	assert.True(t, payonce.IsTemporary(err))
	var ae *payonce.APIError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, http.StatusTooManyRequests, ae.StatusCode)
	assert.Positive(t, ae.RetryAfter)
	assert.Equal(t, fastPolicy().MaxAttempts, ae.Attempts)

	srv.Clock().Advance(61 * time.Second)
	ch, err = c.Charges.Create(ctx, refCharge(t, a55test.CardConfirms), payonce.WithKey(payonce.KeyOf(err)))
	require.NoError(t, err)
	assert.Equal(t, ae.Key, ch.Meta.Key)
	assert.Equal(t, 1, srv.Ledger().Count(ae.Key.String()))
}

type countingLimiter struct{ n atomic.Int32 }

func (l *countingLimiter) Wait(context.Context) error { l.n.Add(1); return nil }

func TestClientSideLimiterPacesEveryAttempt(t *testing.T) {
	lim := &countingLimiter{}
	srv, c := newFake(t, payonce.WithLimiter(lim))
	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultErrorBeforeCommit, Path: a55test.ChargePath, Count: 1}))
	ch, err := c.Charges.Create(context.Background(), refCharge(t, a55test.CardConfirms))
	require.NoError(t, err)
	assert.EqualValues(t, ch.Meta.Attempts, lim.n.Load())
}

func TestTestCards(t *testing.T) {
	srv, c := newFake(t)
	ctx := context.Background()

	ok, err := c.Charges.Create(ctx, refCharge(t, a55test.CardConfirms))
	require.NoError(t, err)
	assert.Equal(t, a55.StatusConfirmed, ok.Status)

	// CardProcError's PROCESSING_ERROR is retried under its key
	// (TestDocumentedTestCardsKeepTheirAnswers); a decline is final.
	for _, tc := range []struct {
		number string
		kind   error
		status a55.Status
	}{
		{a55test.CardDeclined, a55.ErrCardDeclined, "declined"},
	} {
		ch, err := c.Charges.Create(ctx, refCharge(t, tc.number))
		require.Error(t, err)
		assert.Nil(t, ch)
		assert.ErrorIs(t, err, tc.kind)
		var ce *a55.ChargeError
		require.ErrorAs(t, err, &ce)
		require.NotNil(t, ce.Charge)
		assert.NotEmpty(t, ce.Charge.UUID)
		assert.Equal(t, tc.status, ce.Charge.Status, "the quickstart's cards: declined, error")
		assert.NotEmpty(t, payonce.KeyOf(err).String())
		assert.Equal(t, payonce.KeyOf(err).String(), ce.Charge.Meta.Key.String())
		assert.False(t, payonce.IsTemporary(err))
		assert.Equal(t, 1, ce.Err.Attempts)
		assert.NotContains(t, err.Error(), tc.number)

		got, err := c.Charges.Get(ctx, ce.Charge.UUID, refCharge(t, tc.number).WalletUUID)
		require.NoError(t, err)
		assert.Equal(t, tc.status, got.Status)
	}
	assert.Equal(t, 1, srv.Ledger().CountKind("charge.create"), "failed charges are not in the ledger")
}

var cvvInLog = regexp.MustCompile(`(?i)cvv\W*\d`)

// testCVV is the CVV the test sends. Any four digits can occur inside the
// UUIDs, keys and hex IDs a run generates ("…c9a296a59731"), so the CVV
// is searched as a value of its own (cvvAlone): not inside a run of
// letters, digits or hyphens, which is where those IDs put digits.
const testCVV = "9731"

var cvvAlone = regexp.MustCompile(`(^|[^0-9A-Za-z-])` + testCVV + `([^0-9A-Za-z-]|$)`)

func TestSecretsNeverInErrorsOrLogs(t *testing.T) {
	require.True(t, cvvAlone.MatchString(`{"card_cvv":"`+testCVV+`"}`), "the search finds the CVV as a value")
	require.False(t, cvvAlone.MatchString("charge 6585012c-a3f2-4fb3-928d-c9a296a5"+testCVV+" status error"), "and not inside a UUID")
	var buf bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewJSONHandler(&lockedWriter{w: &buf, mu: &mu}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	srv, c := newFake(t, payonce.WithLogger(logger))
	ctx := context.Background()
	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultErrorBeforeCommit, Path: a55test.ChargePath, Count: 1}))
	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: a55test.ChargePath, Count: 1}))

	var errs []error
	for _, n := range []string{a55test.CardConfirms, a55test.CardDeclined, a55test.CardProcError} {
		r := refCharge(t, n)
		r.Card.CVV = testCVV
		_, err := c.Charges.Create(ctx, r, payonce.WithKey(keytest.Now(t, key("secret-"+n[12:]))))
		errs = append(errs, err)
	}
	bad := refCharge(t, "4111111111111112") // fails Luhn, refused locally
	bad.Card.CVV = testCVV
	_, err := c.Charges.Create(ctx, bad)
	errs = append(errs, err)
	_, err = c.Charges.Get(ctx, "no-such-charge", "secret-wallet-query")
	errs = append(errs, err)

	tok, terr := c.Token(ctx)
	require.NoError(t, terr)
	secrets := []string{a55test.CardConfirms, a55test.CardDeclined, a55test.CardProcError, "4111111111111112",
		srv.ClientSecret(), tok, "secret-wallet-query"}
	for i, err := range errs {
		if i == 0 {
			require.NoError(t, err)
			continue
		}
		require.Error(t, err)
		for _, s := range secrets {
			assert.NotContains(t, err.Error(), s)
		}
		assert.False(t, cvvAlone.MatchString(err.Error()), "the CVV in %q", err)
		assert.False(t, cvvInLog.MatchString(err.Error()), "the CVV in %q", err)
	}
	mu.Lock()
	logs := buf.String()
	mu.Unlock()
	require.NotEmpty(t, logs)
	for _, s := range secrets {
		assert.NotContains(t, logs, s)
	}
	assert.False(t, cvvAlone.MatchString(logs), "the CVV in the logs")
	assert.False(t, cvvInLog.MatchString(logs))
	assert.NotContains(t, c.String(), srv.ClientSecret())
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
