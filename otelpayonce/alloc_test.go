package otelpayonce_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/otelpayonce"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric/noop"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// recordingSpan is a span that says it records and keeps nothing, so
// that only the observer's own allocations are counted.
type recordingSpan struct{ tracenoop.Span }

func (recordingSpan) IsRecording() bool { return true }

var attemptInfo = payonce.OperationInfo{Provider: "coinepay", Operation: "cards.apply",
	Method: http.MethodPost, Route: "/api/v1/openapi/card/apply"}

// Ending a plain successful attempt (no request ID, not a replay) builds
// no attribute slice: the span takes the route's cached attributes.
func TestEndAttemptDoesNotAllocate(t *testing.T) {
	obs, err := otelpayonce.New(otelpayonce.WithTracerProvider(tracenoop.NewTracerProvider()),
		otelpayonce.WithMeterProvider(noop.NewMeterProvider()))
	require.NoError(t, err)
	defer obs.Close()
	ctx := trace.ContextWithSpan(context.Background(), recordingSpan{})
	res := payonce.AttemptResult{OperationInfo: attemptInfo, Attempt: 1, Sent: true, StatusCode: http.StatusOK}
	hooks := obs.Hooks()
	hooks.EndAttempt(ctx, res) // fills the route's caches
	allocs := testing.AllocsPerRun(100, func() { hooks.EndAttempt(ctx, res) })
	assert.Zero(t, allocs)
}

// The cached attributes of one status are not shared with the attempts
// that carry more: a request ID or a replay mark stays on its own span.
func TestAttemptSpanAttributesByAnswer(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	obs, err := otelpayonce.New(otelpayonce.WithTracerProvider(tp), otelpayonce.WithMeterProvider(noop.NewMeterProvider()))
	require.NoError(t, err)
	defer obs.Close()
	results := []payonce.AttemptResult{
		{OperationInfo: attemptInfo, Attempt: 1, Sent: true, StatusCode: http.StatusOK},
		{OperationInfo: attemptInfo, Attempt: 1, Sent: true, StatusCode: http.StatusOK, RequestID: "req_1", Replayed: true},
		{OperationInfo: attemptInfo, Attempt: 1, Sent: true, StatusCode: http.StatusOK},
		{OperationInfo: attemptInfo, Attempt: 1, Sent: true, StatusCode: http.StatusServiceUnavailable},
		{OperationInfo: attemptInfo, Attempt: 1, Sent: false},
	}
	hooks := obs.Hooks()
	for _, res := range results {
		ctx := hooks.StartAttempt(context.Background(), payonce.AttemptInfo{OperationInfo: attemptInfo, Attempt: 1})
		hooks.EndAttempt(ctx, res)
	}
	spans := rec.Ended()
	require.Len(t, spans, len(results))
	for i, sp := range spans {
		attrs := attribute.NewSet(sp.Attributes()...)
		route, _ := attrs.Value(otelpayonce.AttrRoute)
		n, _ := attrs.Value(otelpayonce.AttrAttempt)
		assert.Equal(t, attemptInfo.Route, route.AsString(), "span %d keeps its start attributes", i)
		assert.Equal(t, int64(1), n.AsInt64(), "span %d", i)
	}
	answer := func(i int) map[attribute.Key]attribute.Value {
		m := map[attribute.Key]attribute.Value{}
		for _, kv := range spans[i].Attributes() {
			switch kv.Key {
			case otelpayonce.AttrStatusCode, otelpayonce.AttrRequestID, otelpayonce.AttrReplayed, otelpayonce.AttrErrorType:
				m[kv.Key] = kv.Value
			}
		}
		return m
	}
	ok := map[attribute.Key]attribute.Value{otelpayonce.AttrStatusCode: attribute.IntValue(200)}
	assert.Equal(t, ok, answer(0))
	assert.Equal(t, map[attribute.Key]attribute.Value{otelpayonce.AttrStatusCode: attribute.IntValue(200),
		otelpayonce.AttrRequestID: attribute.StringValue("req_1"), otelpayonce.AttrReplayed: attribute.BoolValue(true)}, answer(1))
	assert.Equal(t, ok, answer(2))
	assert.Equal(t, map[attribute.Key]attribute.Value{otelpayonce.AttrStatusCode: attribute.IntValue(503),
		otelpayonce.AttrErrorType: attribute.StringValue("503")}, answer(3))
	assert.Equal(t, "503", spans[3].Status().Description)
	assert.Equal(t, map[attribute.Key]attribute.Value{otelpayonce.AttrErrorType: attribute.StringValue("not_sent")}, answer(4))
}
