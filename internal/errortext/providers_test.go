package errortext_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/coinepay"
	"github.com/payonce/payonce/coinepay/coinepaytest"
	"github.com/payonce/payonce/internal/errortext"
	"github.com/payonce/payonce/internal/fake/a55fake"
	"github.com/payonce/payonce/internal/fake/coinepayfake"
	"github.com/payonce/payonce/internal/fake/fakeserver"
	"github.com/payonce/payonce/internal/testsupport/keytest"
	"github.com/payonce/payonce/journal"
	"github.com/payonce/payonce/payoncetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// failure is one error path: what it is and the error it gave.
type failure struct {
	name string
	err  error
}

// assertSaidOnce checks that every failure is an error whose text says
// each phrase of three or more words once.
func assertSaidOnce(t *testing.T, failures []failure) {
	t.Helper()
	for _, f := range failures {
		if !assert.Error(t, f.err, f.name) {
			continue
		}
		s := f.err.Error()
		assert.Empty(t, errortext.RepeatedPhrase(s), "%s: %s", f.name, s)
	}
}

// problems are every engine-level problem a fake renders.
func problems() []fakeserver.Problem {
	var out []fakeserver.Problem
	for p := fakeserver.ProblemKeyRequired; p <= fakeserver.ProblemDuplicateKey; p++ {
		out = append(out, p)
	}
	return out
}

// answering is a server that answers every request with resp.
func answering(t *testing.T, resp fakeserver.Response) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		for k, vs := range resp.Header {
			w.Header()[k] = vs
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(resp.Status)
		_, _ = w.Write(resp.Body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func once() payonce.RetryPolicy {
	p := payoncetest.FastRetryPolicy()
	p.MaxAttempts = 1
	return p
}

func card(number string) *payonce.Card {
	return &payonce.Card{Number: payonce.CardNumber(number), HolderName: "TEST", ExpirationMonth: "12", ExpirationYear: "2099", CVV: "123"}
}

func charge(amount string, c *payonce.Card) *a55.ChargeCreateRequest {
	return a55test.Complete(&a55.ChargeCreateRequest{InstallmentValue: payoncetest.Amount(amount), Currency: payonce.BRL, TypeCharge: a55.TypeCreditCard, Card: c})
}

// debit is charge on a debit card: without 3DS, which the debit-card page
// says A55 declines, it is refused before sending.
func debit(amount string, c *payonce.Card) *a55.ChargeCreateRequest {
	r := charge(amount, c)
	r.TypeCharge = a55.TypeDebitCard
	return r
}

// dueDate is a card charge due on date.
func dueDate(amount, date string) *a55.ChargeCreateRequest {
	r := charge(amount, card(a55test.CardConfirms))
	r.DueDate = date
	return r
}

// Every A55 error path says each thing once: every answer of the fake
// (each card code, each illegal move, each general error, each engine
// problem in A55's shape), each validation refusal, the journal's
// refusals and transport failures.
func TestA55ErrorsSayEachThingOnce(t *testing.T) {
	ctx := context.Background()
	srv := a55test.New(t)
	c, err := srv.Client(payonce.WithRetryPolicy(once()), payonce.WithJournal(journal.NewMemory()))
	require.NoError(t, err)
	var fs []failure
	add := func(name string, err error) { fs = append(fs, failure{name, err}) }

	for digit := range 10 {
		if digit == 1 || digit == 4 { // confirms
			continue
		}
		_, err := c.Charges.Create(ctx, charge("10.00", card(a55test.TestCard(digit))))
		if err != nil {
			add("card ending in "+string(rune('0'+digit)), err)
		}
	}
	pre := charge("20.00", card(a55test.CardConfirms))
	pre.Capture = a55.Bool(false)
	held, err := c.Charges.Create(ctx, pre)
	require.NoError(t, err)
	_, err = c.Charges.Capture(ctx, &a55.CaptureRequest{ChargeUUID: held.UUID, Amount: payoncetest.Amount("30.00")})
	add("capture above the authorisation", err)
	_, err = c.Charges.Refund(ctx, &a55.RefundRequest{ChargeUUID: held.UUID})
	add("refund before capture", err)
	_, err = c.Charges.Cancel(ctx, &a55.CancelRequest{ChargeUUID: held.UUID})
	require.NoError(t, err)
	_, err = c.Charges.Capture(ctx, &a55.CaptureRequest{ChargeUUID: held.UUID})
	add("capture canceled", err)
	_, err = c.Charges.Refund(ctx, &a55.RefundRequest{ChargeUUID: held.UUID})
	add("refund canceled", err)
	_, err = c.Charges.Cancel(ctx, &a55.CancelRequest{ChargeUUID: held.UUID})
	add("cancel canceled", err)

	paid, err := c.Charges.Create(ctx, charge("40.00", card(a55test.CardConfirms)))
	require.NoError(t, err)
	_, err = c.Charges.Capture(ctx, &a55.CaptureRequest{ChargeUUID: paid.UUID})
	add("capture paid", err)
	_, err = c.Charges.Cancel(ctx, &a55.CancelRequest{ChargeUUID: paid.UUID})
	add("cancel captured", err)
	_, err = c.Charges.Refund(ctx, &a55.RefundRequest{ChargeUUID: paid.UUID, Amount: payoncetest.Amount("41.00")})
	add("refund above the amount", err)
	_, err = c.Charges.Get(ctx, "00000000-0000-4000-8000-000000000000", "")
	add("charge not found", err)
	_, err = c.Charges.Create(ctx, a55test.Complete(&a55.ChargeCreateRequest{InstallmentValue: payoncetest.Amount("1.00"), Currency: payonce.BRL,
		TypeCharge: a55.TypeBoleto, WalletUUID: "00000000-0000-4000-8000-000000000001"}))
	add("wallet not found", err)

	key := payonce.WithKey(keytest.Key(t, "errortext-key-0000001", srv.Clock().Now()))
	_, err = c.Charges.Create(ctx, charge("50.00", card(a55test.CardConfirms)), key)
	require.NoError(t, err)
	_, err = c.Charges.Create(ctx, charge("51.00", card(a55test.CardConfirms)), key)
	add("key reused with another payload", err)
	_, err = c.Charges.Create(ctx, charge("50.00", card(a55test.CardConfirms)), payonce.WithKey(keytest.Key(t, "short", srv.Clock().Now())))
	add("key too short", err)

	// The journal's refusals.
	_, err = c.Charges.Create(ctx, charge("60.00", card(a55test.TestCard(2))), payonce.WithReference("order-1/charge"))
	add("declined, journaled", err)
	_, err = c.Charges.Create(ctx, charge("60.00", card(a55test.TestCard(2))), payonce.WithReference("order-1/charge"))
	add("declined, from the journal", err)
	_, err = c.Charges.Create(ctx, charge("61.00", card(a55test.TestCard(2))), payonce.WithReference("order-1/charge"))
	add("another request under the reference", err)
	_, err = c.Charges.SettleCreate(ctx, "no-such-order", nil)
	add("settle an unknown reference", err)

	// Validation refusals, nothing sent.
	for name, req := range map[string]*a55.ChargeCreateRequest{
		"zero amount":   charge("0.00", card(a55test.CardConfirms)),
		"Luhn":          charge("1.00", card("4111111111111112")),
		"expired card":  charge("1.00", &payonce.Card{Number: a55test.CardConfirms, HolderName: "T", ExpirationMonth: "01", ExpirationYear: "2001", CVV: "123"}),
		"CVV":           charge("1.00", &payonce.Card{Number: a55test.CardConfirms, HolderName: "T", ExpirationMonth: "12", ExpirationYear: "2099", CVV: "12a"}),
		"debit, no 3DS": debit("1.00", card(a55test.CardConfirms)),
		"due date":      dueDate("1.00", "2099-02-30"),
		"type":          a55test.Complete(&a55.ChargeCreateRequest{InstallmentValue: payoncetest.Amount("1.00"), Currency: payonce.BRL, TypeCharge: "cash"}),
		"currency":      a55test.Complete(&a55.ChargeCreateRequest{InstallmentValue: payoncetest.Amount("1.00"), Currency: "XX", TypeCharge: a55.TypeBoleto}),
		"webhook URL":   a55test.Complete(&a55.ChargeCreateRequest{InstallmentValue: payoncetest.Amount("1.00"), Currency: payonce.BRL, TypeCharge: a55.TypeBoleto, WebhookURL: "ftp://x"}),
		"nil request":   nil,
		"installments":  a55test.Complete(&a55.ChargeCreateRequest{InstallmentValue: payoncetest.Amount("1.00"), Currency: payonce.BRL, TypeCharge: a55.TypeCreditCard, Card: card(a55test.CardConfirms), InstallmentCount: 13}),
		"holder absent": charge("1.00", &payonce.Card{Number: a55test.CardConfirms, ExpirationMonth: "12", ExpirationYear: "2099", CVV: "123"}),
	} {
		_, err := c.Charges.Create(ctx, req)
		add("validation: "+name, err)
	}
	_, err = c.Charges.Capture(ctx, &a55.CaptureRequest{})
	add("validation: capture without a charge", err)
	_, err = c.Wallets.Create(ctx, &a55.WalletCreateRequest{})
	add("validation: wallet without a name", err)

	// Transport: the answer lost, every attempt, of a TIMEOUT that made
	// nothing (the lookup finds nothing); then lost after the commit, the
	// lookup's list failing (it cannot tell).
	require.NoError(t, srv.AddAnswer(a55test.Answer{Code: a55test.AnswerTimeout, Path: a55test.ChargePath, Count: 1}))
	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: a55test.ChargePath, Count: 1}))
	_, err = c.Charges.Create(ctx, charge("70.00", card(a55test.CardConfirms)))
	add("answer lost", err)
	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: a55test.ChargePath, Count: 1}))
	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultErrorBeforeCommit, Path: a55.PathChargeList, Count: 1}))
	_, err = c.Charges.Create(ctx, charge("71.00", card(a55test.CardConfirms)))
	add("answer lost, lookup failed", err)
	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultErrorBeforeCommit, Path: a55test.ChargePath, Count: 1, Status: http.StatusServiceUnavailable}))
	_, err = c.Charges.Create(ctx, charge("71.00", card(a55test.CardConfirms)))
	add("503", err)
	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultRateLimit, Path: a55test.ChargePath, Count: 1}))
	_, err = c.Charges.Create(ctx, charge("72.00", card(a55test.CardConfirms)))
	add("429", err)

	auth := a55.ClientCredentials(srv.ClientID(), "wrong-secret")
	auth.TokenURL = srv.TokenURL()
	wrong, err := a55.NewClient(auth, payonce.WithBaseURL(srv.URL), payonce.WithInsecureHTTP(), payonce.WithRetryPolicy(once()))
	require.NoError(t, err)
	_, err = wrong.Charges.Create(ctx, charge("1.00", card(a55test.CardConfirms)))
	add("wrong client secret", err)

	// Every engine problem, in the fake's own A55 shape.
	fake := a55fake.New(fakeserver.New(fakeserver.Options{}), a55fake.Config{})
	for _, p := range problems() {
		resp := fake.Problem(p, 0, "the detail")
		hs := answering(t, resp)
		pc, err := a55.NewClient(a55.AccessToken("token-1"), payonce.WithBaseURL(hs.URL), payonce.WithRetryPolicy(once()), payonce.WithInsecureHTTP())
		require.NoError(t, err)
		_, err = pc.Charges.Create(ctx, charge("1.00", card(a55test.CardConfirms)))
		add("a55 problem "+string(resp.Body), err)
	}
	assertSaidOnce(t, fs)
}

// Every Coinepay error path says each thing once: every message_key of
// the fake (engine problems, signature failures, business refusals), its
// validation refusals, the journal's and transport failures.
func TestCoinepayErrorsSayEachThingOnce(t *testing.T) {
	ctx := context.Background()
	srv := coinepaytest.New(t)
	c, err := srv.Client(payonce.WithRetryPolicy(once()), payonce.WithJournal(journal.NewMemory()))
	require.NoError(t, err)
	var fs []failure
	add := func(name string, err error) { fs = append(fs, failure{name, err}) }

	res, err := c.Cards.Apply(ctx, &coinepay.ApplyRequest{HeaderID: "h1", PackageID: "p1"})
	require.NoError(t, err)
	_, err = c.Cards.Info(ctx, "no-such-card")
	add("card not found", err)
	key := payonce.WithKey(keytest.Key(t, "errortext-key-0000002", srv.Clock().Now()))
	_, err = c.Cards.Recharge(ctx, &coinepay.RechargeRequest{CardID: res.CardID, Amount: payoncetest.Amount("0.01")}, key)
	require.NoError(t, err)
	_, err = c.Cards.Recharge(ctx, &coinepay.RechargeRequest{CardID: res.CardID, Amount: payoncetest.Amount("0.02")}, key)
	add("key reused with another payload", err)
	srv.SetBalance(srv.APIKey(), payoncetest.Amount("1.00"))
	_, err = c.Cards.Recharge(ctx, &coinepay.RechargeRequest{CardID: res.CardID, Amount: payoncetest.Amount("500.00")})
	add("insufficient balance", err)
	_, err = c.Cards.Apply(ctx, &coinepay.ApplyRequest{}, payonce.WithReference("job-1/apply"))
	add("validation: empty apply, journaled", err)
	_, err = c.Cards.Recharge(ctx, &coinepay.RechargeRequest{CardID: res.CardID})
	add("validation: zero recharge", err)
	_, err = c.Cards.Recharge(ctx, nil)
	add("validation: nil recharge", err)
	_, err = c.Cards.SettleApply(ctx, "no-such-job", &coinepay.ApplyRequest{HeaderID: "h1", PackageID: "p1"}, nil)
	add("settle an unknown reference", err)

	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: coinepay.PathCardApply, Count: 1}))
	_, err = c.Cards.Apply(ctx, &coinepay.ApplyRequest{HeaderID: "h1", PackageID: "p1"})
	add("answer lost", err)

	wrong, err := coinepay.NewClient(srv.APIKey(), "wrong-secret", payonce.WithBaseURL(srv.URL), payonce.WithHTTPClient(srv.HTTPClient()),
		payonce.WithRetryPolicy(once()))
	require.NoError(t, err)
	_, err = wrong.Cards.Info(ctx, res.CardID)
	add("wrong secret", err)

	// Every engine problem and every signature failure, in the fake's
	// own envelope.
	fake := coinepayfake.New(fakeserver.New(fakeserver.Options{}), coinepayfake.Config{})
	var answers []fakeserver.Response
	for _, p := range problems() {
		answers = append(answers, fake.Problem(p, 0, "the detail"))
	}
	for _, code := range []string{coinepayfake.CodeSignatureRequired, coinepayfake.CodeAPIKeyInvalid, coinepayfake.CodeTimestampExpired,
		coinepayfake.CodeNonceReplayed, coinepayfake.CodeSignatureInvalid} {
		answers = append(answers, coinepayfake.Envelope(http.StatusUnauthorized, code, "签名失败", nil))
	}
	answers = append(answers, coinepayfake.Envelope(http.StatusBadRequest, "openapi_package_not_found", "卡头或套餐不存在", nil),
		coinepayfake.Envelope(http.StatusBadRequest, "insufficient_balance", "余额不足", map[string]any{"balance": "1.00"}),
		coinepayfake.Envelope(http.StatusNotFound, "openapi_not_found", "卡片不存在", nil))
	for _, resp := range answers {
		hs := answering(t, resp)
		pc, err := coinepay.NewClient("key-1", "secret-1", payonce.WithBaseURL(hs.URL), payonce.WithRetryPolicy(once()))
		require.NoError(t, err)
		_, err = pc.Cards.Apply(ctx, &coinepay.ApplyRequest{HeaderID: "h1", PackageID: "p1"})
		add("coinepay answer "+string(resp.Body), err)
	}
	assertSaidOnce(t, fs)
}
