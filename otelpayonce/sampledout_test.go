package otelpayonce_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/otelpayonce"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

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
	c, err := payonce.NewClient(payonce.WithBaseURL(srv.URL), payonce.WithObserver(obs),
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
