package otelpayonce_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/coinepay"
	"github.com/payonce/payonce/coinepay/coinepaytest"
	"github.com/payonce/payonce/internal/testsupport/keytest"
	"github.com/payonce/payonce/journal"
	"github.com/payonce/payonce/otelpayonce"
	"github.com/payonce/payonce/payoncetest"
)

// telemetry is an in-memory OpenTelemetry pipeline: a span recorder and a
// manual metric reader.
type telemetry struct {
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
	obs    *otelpayonce.Observer
}

func newTelemetry(t *testing.T) *telemetry {
	t.Helper()
	tm := &telemetry{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tm.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(tm.reader))
	obs, err := otelpayonce.New(otelpayonce.WithTracerProvider(tp), otelpayonce.WithMeterProvider(mp))
	require.NoError(t, err)
	t.Cleanup(func() { _ = obs.Close() })
	tm.obs = obs
	return tm
}

// sum returns the value of counter name for the data point whose
// attributes include want (every point when want is empty), summed.
func (tm *telemetry) sum(t *testing.T, name string, want ...attribute.KeyValue) int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, tm.reader.Collect(context.Background(), &rm))
	var total int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					if hasAll(p.Attributes, want) {
						total += p.Value
					}
				}
			case metricdata.Gauge[int64]:
				for _, p := range d.DataPoints {
					if hasAll(p.Attributes, want) {
						total += p.Value
					}
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					if hasAll(p.Attributes, want) {
						total += int64(p.Count)
					}
				}
			}
		}
	}
	return total
}

// attributeKeys lists every attribute key used by any data point of any
// payonce metric.
func (tm *telemetry) attributeKeys(t *testing.T) map[attribute.Key]bool {
	keys := map[attribute.Key]bool{}
	tm.eachAttribute(t, func(kv attribute.KeyValue) { keys[kv.Key] = true })
	return keys
}

// eachAttribute calls fn with every attribute of every data point of the
// counters and histograms.
func (tm *telemetry) eachAttribute(t *testing.T, fn func(attribute.KeyValue)) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, tm.reader.Collect(context.Background(), &rm))
	add := func(s attribute.Set) {
		for _, kv := range s.ToSlice() {
			fn(kv)
		}
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					add(p.Attributes)
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					add(p.Attributes)
				}
			}
		}
	}
}

func hasAll(s attribute.Set, want []attribute.KeyValue) bool {
	for _, kv := range want {
		v, ok := s.Value(kv.Key)
		if !ok || v != kv.Value {
			return false
		}
	}
	return true
}

func attr(s sdktrace.ReadOnlySpan, k attribute.Key) (attribute.Value, bool) {
	for _, kv := range s.Attributes() {
		if kv.Key == k {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

// headerLog records the traceparent of every request the SDK sends.
type headerLog struct {
	mu     sync.Mutex
	byPath map[string][]string
	next   http.RoundTripper
}

func (h *headerLog) RoundTrip(r *http.Request) (*http.Response, error) {
	h.mu.Lock()
	h.byPath[r.URL.Path] = append(h.byPath[r.URL.Path], r.Header.Get("Traceparent"))
	h.mu.Unlock()
	return h.next.RoundTrip(r)
}

// A charge whose connection is reset: one operation span with two
// attempt spans below it, the second marked as a retry after a transport
// failure; each attempt carried its own span's traceparent; the customer
// paid once. (The charge list the client reads before it sends the key
// again, finding nothing, has spans of its own.)
func TestChargeWithLostAnswerTraces(t *testing.T) {
	tm := newTelemetry(t)
	srv := a55test.New(t)
	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultResetBeforeRead, Path: a55test.ChargePath, Count: 1}))
	hl := &headerLog{byPath: map[string][]string{}, next: http.DefaultTransport}
	client, err := srv.Client(payonce.WithRetryPolicy(fastPolicy()), payonce.WithObserver(tm.obs.Hooks()),
		payonce.WithHTTPClient(&http.Client{Transport: hl}))
	require.NoError(t, err)
	amount, _ := payonce.ParseAmount("100.00")
	ch, err := client.Charges.Create(context.Background(), a55test.Complete(&a55.ChargeCreateRequest{
		InstallmentValue: amount, Currency: payonce.BRL, TypeCharge: a55.TypeCreditCard,
		Card: &payonce.Card{Number: "4111111111111111", HolderName: "TEST", ExpirationMonth: "12", ExpirationYear: "2099", CVV: "123"},
	}))
	require.NoError(t, err)
	require.Equal(t, 2, ch.Meta.Attempts)
	require.True(t, srv.Ledger().ExecutedOnce(ch.Meta.Key.String()))

	spans := tm.spans.Ended()
	var op sdktrace.ReadOnlySpan
	var attempts []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.Name() == "a55 charges.create" {
			op = s
		}
	}
	require.NotNil(t, op)
	for _, s := range spans {
		if s.Parent().SpanID() == op.SpanContext().SpanID() && s.SpanKind() == trace.SpanKindClient {
			attempts = append(attempts, s)
		}
	}
	assert.Equal(t, trace.SpanKindInternal, op.SpanKind())
	v, _ := attr(op, otelpayonce.AttrIdempotencyKey)
	assert.Equal(t, ch.Meta.Key.String(), v.AsString())
	v, _ = attr(op, otelpayonce.AttrOutcome)
	assert.Equal(t, "success", v.AsString())
	v, _ = attr(op, otelpayonce.AttrAttempts)
	assert.Equal(t, int64(2), v.AsInt64())
	v, _ = attr(op, otelpayonce.AttrRoute)
	assert.Equal(t, a55.PathCharges, v.AsString())
	assert.Equal(t, codes.Unset, op.Status().Code)

	require.Len(t, attempts, 2)
	sent := hl.byPath[a55test.ChargePath]
	require.Len(t, sent, 2)
	for i, a := range attempts {
		assert.Equal(t, "POST "+a55.PathCharges, a.Name())
		assert.Equal(t, trace.SpanKindClient, a.SpanKind())
		assert.Equal(t, op.SpanContext().SpanID(), a.Parent().SpanID(), "attempt spans are children of the operation span")
		assert.Equal(t, op.SpanContext().TraceID(), a.SpanContext().TraceID())
		want := fmt.Sprintf("00-%s-%s-01", a.SpanContext().TraceID(), a.SpanContext().SpanID())
		assert.Equal(t, want, sent[i], "attempt %d carries its own span's traceparent", i+1)
		n, _ := attr(a, otelpayonce.AttrAttempt)
		assert.Equal(t, int64(i+1), n.AsInt64())
	}
	assert.Equal(t, codes.Error, attempts[0].Status().Code, "the lost answer is an error on the first attempt")
	et, _ := attr(attempts[0], otelpayonce.AttrErrorType)
	assert.Equal(t, "transport", et.AsString())
	require.Len(t, attempts[0].Events(), 1)
	assert.Equal(t, "payonce.retry", attempts[0].Events()[0].Name)
	cause, _ := attr(attempts[1], otelpayonce.AttrRetryCause)
	assert.Equal(t, "transport", cause.AsString())
	resend, _ := attr(attempts[1], otelpayonce.AttrResendCount)
	assert.Equal(t, int64(1), resend.AsInt64())
	status, _ := attr(attempts[1], otelpayonce.AttrStatusCode)
	assert.Equal(t, int64(200), status.AsInt64())
	for _, tp := range hl.byPath[a55test.TokenPath] {
		assert.Empty(t, tp, "token requests are not operations")
	}

	base := []attribute.KeyValue{otelpayonce.AttrProvider.String("a55"), otelpayonce.AttrOperation.String("charges.create")}
	assert.Equal(t, int64(2), tm.sum(t, otelpayonce.MetricAttempts, base...))
	assert.Equal(t, int64(1), tm.sum(t, otelpayonce.MetricRetries, append(base, otelpayonce.AttrRetryCause.String("transport"))...))
	assert.Equal(t, int64(1), tm.sum(t, otelpayonce.MetricOperations, append(base, otelpayonce.AttrOutcome.String("success"))...))
	assert.Equal(t, int64(1), tm.sum(t, otelpayonce.MetricOperationTime, base...))
	assert.Equal(t, int64(2), tm.sum(t, otelpayonce.MetricAttemptTime, base...))
}

// A card apply that meets two 503s, then a replay of it: the metrics
// count the attempts, the retries by cause, the replay and the outcome;
// the retry budget gauge reports the tokens left.
func TestApplyWith503sAndReplayMetrics(t *testing.T) {
	tm := newTelemetry(t)
	srv := coinepaytest.New(t)
	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultErrorBeforeCommit, Status: 503, Path: coinepay.PathCardApply, Count: 2}))
	budget := payonce.NewRetryBudget(100)
	client, err := srv.Client(payonce.WithRetryPolicy(fastPolicy()), payonce.WithObserver(tm.obs.Hooks()), payonce.WithRetryBudget(budget))
	require.NoError(t, err)
	req := &coinepay.ApplyRequest{HeaderID: "h1", PackageID: "p1"}
	card, err := client.Cards.Apply(context.Background(), req, payonce.WithKey(keytest.Now(t, "order-1-card")))
	require.NoError(t, err)
	require.Equal(t, 3, card.Meta.Attempts)
	again, err := client.Cards.Apply(context.Background(), req, payonce.WithKey(keytest.Now(t, "order-1-card")))
	require.NoError(t, err)
	require.True(t, again.Meta.Replayed)

	base := []attribute.KeyValue{otelpayonce.AttrProvider.String("coinepay"), otelpayonce.AttrOperation.String("cards.apply")}
	assert.Equal(t, int64(4), tm.sum(t, otelpayonce.MetricAttempts, base...))
	assert.Equal(t, int64(2), tm.sum(t, otelpayonce.MetricRetries, append(base, otelpayonce.AttrRetryCause.String("Service Unavailable"))...))
	assert.Equal(t, int64(2), tm.sum(t, otelpayonce.MetricRetries, base...))
	assert.Equal(t, int64(1), tm.sum(t, otelpayonce.MetricReplays, base...))
	assert.Equal(t, int64(2), tm.sum(t, otelpayonce.MetricOperations, append(base, otelpayonce.AttrOutcome.String("success"))...))
	assert.Equal(t, int64(2), tm.sum(t, otelpayonce.MetricAttemptTime, append(base, otelpayonce.AttrStatusCode.Int(503), otelpayonce.AttrErrorType.String("503"))...))
	assert.Equal(t, int64(100), tm.sum(t, otelpayonce.MetricBudgetAvailable, otelpayonce.AttrProvider.String("coinepay")),
		"a success gives back what its retries cost")
	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultErrorBeforeCommit, Status: 503, Path: coinepay.PathCardInfo}))
	_, err = client.Cards.Info(context.Background(), card.CardID)
	require.ErrorIs(t, err, payonce.ErrRetriesExhausted)
	assert.Equal(t, 80, budget.Available(), "four retries spent 5 tokens each")
	assert.Equal(t, int64(80), tm.sum(t, otelpayonce.MetricBudgetAvailable, otelpayonce.AttrProvider.String("coinepay")))

	// Low cardinality: no metric carries a key, a request ID or a path.
	keys := tm.attributeKeys(t)
	for _, k := range []attribute.Key{otelpayonce.AttrIdempotencyKey, otelpayonce.AttrRequestID, "url.path", "url.full"} {
		assert.False(t, keys[k], "metric attribute %s", k)
	}
}

// A conflict (same key, another body) and retries that run out end the
// operation span in error with the outcome; nothing reported holds the
// card number, the secret or the query string.
func TestFailuresAndNoSecrets(t *testing.T) {
	tm := newTelemetry(t)
	srv := coinepaytest.New(t)
	client, err := srv.Client(payonce.WithRetryPolicy(fastPolicy()), payonce.WithObserver(tm.obs.Hooks()))
	require.NoError(t, err)
	ctx := context.Background()
	_, err = client.Cards.Apply(ctx, &coinepay.ApplyRequest{HeaderID: "h1", PackageID: "p1"}, payonce.WithKey(keytest.Now(t, "k-conflict")))
	require.NoError(t, err)
	_, err = client.Cards.Apply(ctx, &coinepay.ApplyRequest{HeaderID: "h1", PackageID: "p2"}, payonce.WithKey(keytest.Now(t, "k-conflict")))
	require.ErrorIs(t, err, payonce.ErrIdempotencyConflict)
	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultErrorBeforeCommit, Status: 503, Path: coinepay.PathCardInfo}))
	_, err = client.Cards.Info(ctx, "card-4111111111111111")
	require.ErrorIs(t, err, payonce.ErrRetriesExhausted)

	var outcomes []string
	var dump strings.Builder
	for _, s := range tm.spans.Ended() {
		fmt.Fprintf(&dump, "%s %v %v %v\n", s.Name(), s.Attributes(), s.Events(), s.Status())
		if s.SpanKind() != trace.SpanKindInternal {
			continue
		}
		v, _ := attr(s, otelpayonce.AttrOutcome)
		outcomes = append(outcomes, v.AsString())
		if v.AsString() != "success" {
			assert.Equal(t, codes.Error, s.Status().Code)
		}
	}
	assert.Equal(t, []string{"success", "idempotency_conflict", "retries_exhausted"}, outcomes)
	assert.Equal(t, int64(1), tm.sum(t, otelpayonce.MetricOperations, otelpayonce.AttrOutcome.String("retries_exhausted")))
	assert.Equal(t, int64(4), tm.sum(t, otelpayonce.MetricRetries, otelpayonce.AttrOperation.String("cards.info")))
	assert.NotContains(t, dump.String(), "4111111111111111")
	assert.NotContains(t, dump.String(), "card_id=")
	assert.NotContains(t, dump.String(), coinepaytest.DefaultSecret)
	assert.Contains(t, dump.String(), "k-conflict", "the key is a span attribute")
}

// With the global no-op providers the observer still propagates nothing
// and records nothing, and the operation works.
func TestNoopProviders(t *testing.T) {
	obs, err := otelpayonce.New()
	require.NoError(t, err)
	defer obs.Close()
	srv := coinepaytest.New(t)
	hl := &headerLog{byPath: map[string][]string{}, next: http.DefaultTransport}
	client, err := srv.Client(payonce.WithObserver(obs.Hooks()), payonce.WithHTTPClient(&http.Client{Transport: hl}))
	require.NoError(t, err)
	_, err = client.Cards.Apply(context.Background(), &coinepay.ApplyRequest{HeaderID: "h1", PackageID: "p1"})
	require.NoError(t, err)
	assert.Equal(t, []string{""}, hl.byPath[coinepay.PathCardApply], "no span, no traceparent")
}

// A caller's own span is the parent of the operation span, and the trace
// continues into the provider.
func TestCallerSpanIsParent(t *testing.T) {
	tm := newTelemetry(t)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tm.spans))
	ctx, parent := tp.Tracer("merchant").Start(context.Background(), "checkout")
	srv := coinepaytest.New(t)
	client, err := srv.Client(payonce.WithObserver(tm.obs.Hooks()))
	require.NoError(t, err)
	_, err = client.Cards.Apply(ctx, &coinepay.ApplyRequest{HeaderID: "h1", PackageID: "p1"})
	require.NoError(t, err)
	parent.End()
	for _, s := range tm.spans.Ended() {
		assert.Equal(t, parent.SpanContext().TraceID(), s.SpanContext().TraceID(), s.Name())
		if s.SpanKind() == trace.SpanKindInternal && s.Name() != "checkout" {
			assert.Equal(t, parent.SpanContext().SpanID(), s.Parent().SpanID())
		}
	}
}

// fastPolicy is FastRetryPolicy with an attempt timeout no loopback answer
// reaches, even in a loaded -race run: FastRetryPolicy's 2 s can be
// reached there, and a timed-out attempt is rightly retried, which changes
// the attempt, span and metric counts these tests assert.
func fastPolicy() payonce.RetryPolicy {
	p := payoncetest.FastRetryPolicy()
	p.AttemptTimeout = time.Minute
	return p
}

// A server that puts a card number, encoded, in its error code, message
// and request ID: no span attribute or event holds it in any form.
func TestSpanAttributesHideEncodedCardNumbers(t *testing.T) {
	for _, enc := range []string{
		"%34%31%31%31%31%31%31%31%31%31%31%31%31%31%31%31",
		"NDExMTExMTExMTExMTExMQ==",
		"eyJudW1iZXIiOiI0MTExMTExMTExMTExMTExIn0",
		"&#52;&#49;&#49;&#49;&#49;&#49;&#49;&#49;&#49;&#49;&#49;&#49;&#49;&#49;&#49;&#49;",
		"4111|1111|1111|1111",
	} {
		t.Run(enc[:8], func(t *testing.T) {
			tm := newTelemetry(t)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("X-Request-Id", "req "+enc)
				w.WriteHeader(http.StatusBadRequest)
				_, _ = fmt.Fprintf(w, `{"code":400,"message":"card %s","message_key":"bad_%s","data":null}`, enc, enc)
			}))
			defer srv.Close()
			c, err := coinepay.NewClient("ak_span", "sk_span_secret", payonce.WithBaseURL(srv.URL),
				payonce.WithRetryPolicy(fastPolicy()), payonce.WithObserver(tm.obs.Hooks()))
			require.NoError(t, err)
			_, err = c.Cards.Apply(t.Context(), &coinepay.ApplyRequest{HeaderID: "h1", PackageID: "p1"})
			require.Error(t, err)
			var dump strings.Builder
			for _, s := range tm.spans.Ended() {
				fmt.Fprintf(&dump, "%s %v %v %v\n", s.Name(), s.Attributes(), s.Events(), s.Status())
			}
			require.Contains(t, dump.String(), "payonce.error.code")
			assert.NotContains(t, dump.String(), enc)
			assert.NotContains(t, dump.String(), "4111111111111111")
		})
	}
}

// metricValues joins every attribute value of every data point.
func (tm *telemetry) metricValues(t *testing.T) string {
	var b strings.Builder
	tm.eachAttribute(t, func(kv attribute.KeyValue) { b.WriteString(kv.Value.String() + "\n") })
	return b.String()
}

// A call answered from the journal says so on its span and in the
// operations metric, and both calls name the reference by its template:
// the raw reference reaches no span and no metric.
func TestAnswerFromTheJournalIsMarked(t *testing.T) {
	tm := newTelemetry(t)
	c, err := payonce.NewClient(payonce.WithBaseURL("http://127.0.0.1:1"), payonce.WithObserver(tm.obs.Hooks()),
		payonce.WithHTTPClient(&http.Client{Transport: answerOK{}}), payonce.WithJournal(journal.NewMemory()), payonce.WithScope("test:merchant"))
	require.NoError(t, err)
	req := &payonce.Request{Operation: "charges.create", Method: http.MethodPost, Path: "/v1/charges", Body: map[string]string{"amount": "1.00"}, Keyed: true}
	for range 2 {
		_, err := c.Do(t.Context(), req, nil, payonce.WithReference("order-42/charge"))
		require.NoError(t, err)
	}
	var fromJournal []bool
	for _, s := range tm.spans.Ended() {
		if s.SpanKind() != trace.SpanKindInternal {
			continue
		}
		v, ok := attr(s, otelpayonce.AttrFromJournal)
		require.True(t, ok, "every operation span says where its answer came from")
		fromJournal = append(fromJournal, v.AsBool())
		tmpl, ok := attr(s, otelpayonce.AttrReferenceTemplate)
		require.True(t, ok)
		assert.Equal(t, "order-{id}/charge", tmpl.AsString())
		for _, kv := range s.Attributes() {
			assert.NotContains(t, kv.Value.String(), "order-42", kv.Key)
		}
	}
	assert.Equal(t, []bool{false, true}, fromJournal)

	tmpl := otelpayonce.AttrReferenceTemplate.String("order-{id}/charge")
	assert.EqualValues(t, 1, tm.sum(t, otelpayonce.MetricOperations, otelpayonce.AttrFromJournal.Bool(true), tmpl))
	assert.EqualValues(t, 1, tm.sum(t, otelpayonce.MetricOperations, otelpayonce.AttrFromJournal.Bool(false), tmpl))
	assert.EqualValues(t, 1, tm.sum(t, otelpayonce.MetricAttempts, tmpl), "one attempt, the first call's")
	for k := range tm.attributeKeys(t) {
		assert.False(t, strings.Contains(string(k), "order-42"), k)
	}
	assert.NotContains(t, tm.metricValues(t), "order-42")
}

// A call without a reference carries neither attribute on its metrics.
func TestCallWithoutReferenceHasNoTemplate(t *testing.T) {
	tm := newTelemetry(t)
	c, err := payonce.NewClient(payonce.WithBaseURL("http://127.0.0.1:1"), payonce.WithObserver(tm.obs.Hooks()),
		payonce.WithHTTPClient(&http.Client{Transport: answerOK{}}))
	require.NoError(t, err)
	_, err = c.Do(t.Context(), &payonce.Request{Operation: "customers.get", Method: http.MethodGet, Path: "/v1/customers"}, nil)
	require.NoError(t, err)
	keys := tm.attributeKeys(t)
	assert.False(t, keys[otelpayonce.AttrReferenceTemplate])
	assert.False(t, keys[otelpayonce.AttrFromJournal])
}

// retriedTraceparents runs one keyed operation whose first attempt gets a
// 503 under an observer on a tracer provider with sampler, and returns the
// traceparent of each attempt, the context the caller's span gave, and
// the attempts and retries counted.
func retriedTraceparents(t *testing.T, sampler sdktrace.Sampler) (tps []string, caller trace.SpanContext, attempts, retries int64) {
	t.Helper()
	var n atomic.Int32
	hl := &headerLog{byPath: map[string][]string{}, next: http.DefaultTransport}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if n.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"op_1"}`)
	}))
	t.Cleanup(srv.Close)
	tm := &telemetry{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tm.spans), sdktrace.WithSampler(sampler))
	obs, err := otelpayonce.New(otelpayonce.WithTracerProvider(tp),
		otelpayonce.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(tm.reader))))
	require.NoError(t, err)
	t.Cleanup(func() { _ = obs.Close() })
	tm.obs = obs
	c, err := payonce.NewClient(payonce.WithBaseURL(srv.URL), payonce.WithObserver(obs.Hooks()),
		payonce.WithRetryPolicy(fastPolicy()), payonce.WithHTTPClient(&http.Client{Transport: hl}))
	require.NoError(t, err)
	ctx, span := tp.Tracer("merchant").Start(context.Background(), "checkout")
	defer span.End()
	var out struct{ ID string }
	_, err = c.Do(ctx, &payonce.Request{Operation: "ops.create", Method: http.MethodPost, Path: "/ops",
		Body: map[string]string{"a": "b"}, Keyed: true}, &out)
	require.NoError(t, err)
	require.Equal(t, "op_1", out.ID)
	return hl.byPath["/ops"], span.SpanContext(), tm.sum(t, otelpayonce.MetricAttempts), tm.sum(t, otelpayonce.MetricRetries)
}

// parentID is the parent-id field of a W3C traceparent.
func parentID(t *testing.T, tp string) string {
	parts := strings.Split(tp, "-")
	require.Len(t, parts, 4, tp)
	return parts[2]
}

// An operation sampled out still sends trace context on every attempt,
// its trace's, marked not sampled, and is counted as a sampled one is; its
// attempts start no span of their own, so each carries the operation
// span's ID. A sampled operation's attempts each carry their own span's.
func TestSampledOutAttemptsCarryTheOperationsContext(t *testing.T) {
	tps, caller, attempts, retries := retriedTraceparents(t, sdktrace.ParentBased(sdktrace.TraceIDRatioBased(0)))
	require.Len(t, tps, 2)
	assert.False(t, caller.IsSampled())
	for _, tp := range tps {
		assert.True(t, strings.HasPrefix(tp, "00-"+caller.TraceID().String()+"-"), tp)
		assert.True(t, strings.HasSuffix(tp, "-00"), "not sampled: %s", tp)
		assert.NotEqual(t, caller.SpanID().String(), parentID(t, tp), "the operation's span, below the caller's")
	}
	assert.Equal(t, parentID(t, tps[0]), parentID(t, tps[1]), "both attempts: the operation's span")
	assert.Equal(t, int64(2), attempts)
	assert.Equal(t, int64(1), retries)

	tps, caller, attempts, retries = retriedTraceparents(t, sdktrace.AlwaysSample())
	require.Len(t, tps, 2)
	for _, tp := range tps {
		assert.True(t, strings.HasPrefix(tp, "00-"+caller.TraceID().String()+"-"), tp)
		assert.True(t, strings.HasSuffix(tp, "-01"), "sampled: %s", tp)
	}
	assert.NotEqual(t, parentID(t, tps[0]), parentID(t, tps[1]), "each attempt: its own span")
	assert.Equal(t, int64(2), attempts)
	assert.Equal(t, int64(1), retries)
}
