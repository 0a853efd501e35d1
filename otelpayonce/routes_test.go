package otelpayonce_test

import (
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/coinepay"
	"github.com/payonce/payonce/coinepay/coinepaytest"
	"github.com/payonce/payonce/internal/corekit"
	"github.com/payonce/payonce/otelpayonce"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

type answerOK struct{}

func (answerOK) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(`{}`)), Request: r}, nil
}

// templates returns, by span name, the url.template of the spans ended.
func (tm *telemetry) templates(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, s := range tm.spans.Ended() {
		v, ok := attr(s, otelpayonce.AttrRoute)
		require.True(t, ok, s.Name())
		out[s.Name()] = v.AsString()
	}
	return out
}

// 300 GETs of one resource by base62 IDs give one span name and one
// url.template: no raw ID in a span.
func TestSpansOfBase62IDsShareOneRoute(t *testing.T) {
	tm := newTelemetry(t)
	c, err := payonce.NewClient(payonce.WithBaseURL("http://127.0.0.1:1"), payonce.WithObserver(tm.obs.Hooks()),
		payonce.WithHTTPClient(&http.Client{Transport: answerOK{}}))
	require.NoError(t, err)
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	rng := rand.New(rand.NewPCG(5, 6))
	for range 300 {
		id := make([]byte, 10)
		for j := range id {
			id[j] = alphabet[rng.IntN(len(alphabet))]
		}
		_, err := c.Do(t.Context(), &payonce.Request{Operation: "customers.get", Method: http.MethodGet, Path: "/v1/customers/" + string(id)}, nil)
		require.NoError(t, err)
	}
	assert.Equal(t, map[string]string{"customers.get": "/v1/customers/{id}", "GET /v1/customers/{id}": "/v1/customers/{id}"}, tm.templates(t))
}

// An Observer fed 10,000 kinds of operation (many clients, or hostile
// OperationInfo) keeps at most MaxRoutes of them, and MaxRoutes/4 more with
// the overflow route; the rest share the overflow kind, in span names,
// url.template and metric attributes.
func TestObserverRouteTableStaysBounded(t *testing.T) {
	const kept = otelpayonce.MaxRoutes + otelpayonce.MaxRoutes/4
	tm := newTelemetry(t)
	hooks := tm.obs.Hooks()
	for i := range 10000 {
		info := payonce.OperationInfo{Provider: "p", Operation: "op" + strconv.Itoa(i), Method: http.MethodGet, Route: "/r/" + strconv.Itoa(i)}
		ctx := hooks.StartOperation(context.Background(), info)
		hooks.EndOperation(ctx, payonce.OperationResult{OperationInfo: info, Outcome: "success"})
	}
	names := map[string]int{}
	for _, s := range tm.spans.Ended() {
		names[s.Name()]++
	}
	assert.LessOrEqual(t, len(names), kept+1)
	assert.Equal(t, 10000-kept, names[corekit.RouteOverflow+" "+corekit.RouteOverflow])
	var rm metricdata.ResourceMetrics
	require.NoError(t, tm.reader.Collect(context.Background(), &rm))
	ops := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != otelpayonce.MetricOperations {
				continue
			}
			for _, p := range m.Data.(metricdata.Sum[int64]).DataPoints {
				v, _ := p.Attributes.Value(otelpayonce.AttrOperation)
				ops[v.AsString()] += p.Value
			}
		}
	}
	assert.Equal(t, kept+1, len(ops))
	assert.Equal(t, int64(10000-kept), ops[corekit.RouteOverflow])
}

// The typed clients name every operation by its exact path template.
func TestTypedClientRoutesAreTheirTemplates(t *testing.T) {
	tm := newTelemetry(t)
	srv := a55test.New(t)
	client, err := srv.Client(payonce.WithObserver(tm.obs.Hooks()))
	require.NoError(t, err)
	ctx := t.Context()
	w, err := client.Wallets.Create(ctx, a55test.WalletRequest("shop"))
	require.NoError(t, err)
	amount, _ := payonce.ParseAmount("100.00")
	card := &payonce.Card{Number: a55test.CardConfirms, HolderName: "TEST", ExpirationMonth: "12", ExpirationYear: "2099", CVV: "123"}
	noCapture := false
	ch, err := client.Charges.Create(ctx, a55test.Complete(&a55.ChargeCreateRequest{InstallmentValue: amount, Currency: payonce.BRL, TypeCharge: a55.TypeCreditCard,
		Card: card, WalletUUID: w.UUID, MerchantID: w.MerchantUUID, Capture: &noCapture}))
	require.NoError(t, err)
	_, err = client.Charges.Get(ctx, ch.UUID, w.UUID)
	require.NoError(t, err)
	_, err = client.Charges.List(ctx, &a55.ChargeListOptions{WalletUUID: w.UUID, Limit: 10})
	require.NoError(t, err)
	_, err = client.Charges.Capture(ctx, &a55.CaptureRequest{ChargeUUID: ch.UUID, WalletUUID: w.UUID})
	require.NoError(t, err)
	_, err = client.Charges.Refund(ctx, &a55.RefundRequest{ChargeUUID: ch.UUID, WalletUUID: w.UUID, Amount: amount})
	require.NoError(t, err)
	ch2, err := client.Charges.Create(ctx, a55test.Complete(&a55.ChargeCreateRequest{InstallmentValue: amount, Currency: payonce.BRL, TypeCharge: a55.TypeCreditCard,
		Card: card, WalletUUID: w.UUID, MerchantID: w.MerchantUUID, Capture: &noCapture}))
	require.NoError(t, err)
	_, err = client.Charges.Cancel(ctx, &a55.CancelRequest{ChargeUUID: ch2.UUID, WalletUUID: w.UUID})
	require.NoError(t, err)
	_, err = client.Charges.Fetch(ctx, ch2.UUID)
	require.NoError(t, err)

	cp := coinepaytest.New(t)
	cpc, err := cp.Client(payonce.WithObserver(tm.obs.Hooks()))
	require.NoError(t, err)
	c, err := cpc.Cards.Apply(ctx, &coinepay.ApplyRequest{HeaderID: "h1", PackageID: "p1"})
	require.NoError(t, err)
	_, err = cpc.Cards.Recharge(ctx, &coinepay.RechargeRequest{CardID: c.CardID, Amount: amount})
	require.NoError(t, err)
	_, err = cpc.Cards.Info(ctx, c.CardID)
	require.NoError(t, err)
	_, err = cpc.Cards.List(ctx, &coinepay.ListOptions{Page: 1, PageSize: 10})
	require.NoError(t, err)

	want := map[string]string{
		"a55 wallets.create": a55.PathWallets, "POST " + a55.PathWallets: a55.PathWallets,
		"a55 charges.create": a55.PathCharges, "POST " + a55.PathCharges: a55.PathCharges,
		"a55 charges.get": a55.PathCharges, "GET " + a55.PathCharges: a55.PathCharges,
		"a55 charges.list": a55.PathChargeList, "GET " + a55.PathChargeList: a55.PathChargeList,
		"a55 charges.capture": a55.PathChargeCapture, "POST " + a55.PathChargeCapture: a55.PathChargeCapture,
		"a55 charges.refund": a55.PathChargeRefund, "POST " + a55.PathChargeRefund: a55.PathChargeRefund,
		"a55 charges.cancel": a55.PathChargeCancel, "POST " + a55.PathChargeCancel: a55.PathChargeCancel,
		"a55 charges.fetch": a55.PathChargeByUUID, "GET " + a55.PathChargeByUUID: a55.PathChargeByUUID,
		"coinepay cards.apply": coinepay.PathCardApply, "POST " + coinepay.PathCardApply: coinepay.PathCardApply,
		"coinepay cards.recharge": coinepay.PathCardRecharge, "POST " + coinepay.PathCardRecharge: coinepay.PathCardRecharge,
		"coinepay cards.info": coinepay.PathCardInfo, "GET " + coinepay.PathCardInfo: coinepay.PathCardInfo,
		"coinepay cards.list": coinepay.PathCardList, "GET " + coinepay.PathCardList: coinepay.PathCardList,
	}
	assert.Equal(t, want, tm.templates(t))
}

// An Observer shared by a typed client and by generic clients whose
// callers forward paths of words (each client reporting its own bounded
// set of routes) fills its table with those; an operation of the typed
// client first seen afterwards keeps its provider and operation in its
// span name and its metrics: only its route is the overflow one.
func TestOperationsSeenAfterAFloodKeepTheirNames(t *testing.T) {
	tm := newTelemetry(t)
	for c := range otelpayonce.MaxRoutes/corekit.MaxRoutes + 1 {
		gc, err := payonce.NewClient(payonce.WithBaseURL("http://127.0.0.1:1"), payonce.WithObserver(tm.obs.Hooks()),
			payonce.WithHTTPClient(&http.Client{Transport: answerOK{}}))
		require.NoError(t, err)
		for i := range corekit.MaxRoutes {
			path := "/proxy/" + strings.Repeat(string(rune('a'+c)), 1+i/26) + "/" + string(rune('a'+i%26))
			_, err := gc.Do(t.Context(), &payonce.Request{Operation: "proxy.get", Method: http.MethodGet, Path: path}, nil)
			require.NoError(t, err)
		}
	}
	srv := coinepaytest.New(t)
	cpc, err := srv.Client(payonce.WithObserver(tm.obs.Hooks()))
	require.NoError(t, err)
	_, err = cpc.Cards.Apply(t.Context(), &coinepay.ApplyRequest{HeaderID: "h1", PackageID: "p1"})
	require.NoError(t, err)

	names := map[string]bool{}
	for _, s := range tm.spans.Ended() {
		names[s.Name()] = true
	}
	assert.True(t, names["coinepay cards.apply"], "the operation span keeps its name")
	assert.Equal(t, int64(1), tm.sum(t, otelpayonce.MetricOperations, otelpayonce.AttrOperation.String("cards.apply")))
	assert.Equal(t, int64(1), tm.sum(t, otelpayonce.MetricAttempts, otelpayonce.AttrProvider.String("coinepay")))
}
