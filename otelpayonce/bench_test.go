package otelpayonce_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/otelpayonce"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// discardExporter drops every span.
type discardExporter struct{}

func (discardExporter) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discardExporter) Shutdown(context.Context) error                             { return nil }

// BenchmarkObserverCost measures what one successful operation of one
// attempt costs its observer, without any request: hooks is the
// observer's four hooks (the trace context is formatted, but an
// AttemptInfo made outside the SDK has no request to carry it); by-hand is the OpenTelemetry SDK asked for the
// same work directly (two spans with the same attributes, set once the
// span is known to record, or the operation's span alone when it is
// sampled out, the trace context injected, the same four metric records
// with attribute sets built once), the floor any observer built on the
// SDK pays. Both use SDK providers whose spans and
// metrics go nowhere (a no-op exporter behind the batch processor, a
// manual reader never read), as BenchmarkOperation's sdk-otel row does.
func BenchmarkObserverCost(b *testing.B) {
	for _, sampled := range []bool{true, false} {
		name := "sampled"
		sampler := sdktrace.AlwaysSample()
		if !sampled {
			name, sampler = "unsampled", sdktrace.NeverSample()
		}
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(discardExporter{}), sdktrace.WithSampler(sampler))
		b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		b.Run(name+"/hooks", func(b *testing.B) {
			obs, err := otelpayonce.New(otelpayonce.WithTracerProvider(tp), otelpayonce.WithMeterProvider(mp))
			if err != nil {
				b.Fatal(err)
			}
			defer obs.Close()
			hooks := obs.Hooks()
			info := payonce.OperationInfo{Provider: "coinepay", Operation: "cards.apply", Method: http.MethodPost,
				Route: "/api/v1/openapi/card/apply", Keyed: true}
			key := "8c1f2f7e-0d5e-4f3e-9a51-0b6f0b0c9d11"
			b.ReportAllocs()
			for b.Loop() {
				ctx := hooks.StartOperation(context.Background(), info)
				actx := hooks.StartAttempt(ctx, payonce.AttemptInfo{OperationInfo: info, Key: key, Attempt: 1})
				hooks.EndAttempt(actx, payonce.AttemptResult{OperationInfo: info, Key: key, Attempt: 1, Sent: true,
					StatusCode: http.StatusOK, Duration: time.Millisecond})
				hooks.EndOperation(ctx, payonce.OperationResult{OperationInfo: info, Key: key, Outcome: "ok", Attempts: 1,
					StatusCode: http.StatusOK, Duration: time.Millisecond})
			}
		})
		b.Run(name+"/by-hand", func(b *testing.B) {
			tr := tp.Tracer("bench")
			m := mp.Meter("bench")
			ops, _ := m.Int64Counter("ops")
			attempts, _ := m.Int64Counter("attempts")
			opTime, _ := m.Float64Histogram("op.time")
			attemptTime, _ := m.Float64Histogram("attempt.time")
			prop := propagation.TraceContext{}
			base := []attribute.KeyValue{otelpayonce.AttrProvider.String("coinepay"), otelpayonce.AttrOperation.String("cards.apply"),
				otelpayonce.AttrMethod.String(http.MethodPost), otelpayonce.AttrRoute.String("/api/v1/openapi/card/apply")}
			opStart := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal)}
			attemptStart := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient)}
			attemptAttrs := append(base[:4:4], otelpayonce.AttrAttempt.Int(1), otelpayonce.AttrStatusCode.Int(200))
			set := []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(base[0], base[1]))}
			ok := metric.WithAttributeSet(attribute.NewSet(base[0], base[1], otelpayonce.AttrOutcome.String("ok")))
			okAdd, okRec := []metric.AddOption{ok}, []metric.RecordOption{ok}
			statusSet := []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(base[0], base[1], otelpayonce.AttrStatusCode.Int(200)))}
			status := otelpayonce.AttrStatusCode.Int(200)
			carrier := discardCarrier{}
			b.ReportAllocs()
			for b.Loop() {
				ctx, op := tr.Start(context.Background(), "coinepay cards.apply", opStart...)
				actx := ctx
				if op.IsRecording() {
					var at trace.Span
					actx, at = tr.Start(ctx, "POST /api/v1/openapi/card/apply", attemptStart...)
					at.SetAttributes(attemptAttrs...)
					at.End()
				}
				prop.Inject(actx, carrier)
				attempts.Add(actx, 1, set...)
				attemptTime.Record(actx, 0.001, statusSet...)
				if op.IsRecording() {
					op.SetAttributes(base[0], base[1], base[2], base[3], otelpayonce.AttrOutcome.String("ok"), otelpayonce.AttrAttempts.Int(1),
						otelpayonce.AttrIdempotencyKey.String("8c1f2f7e-0d5e-4f3e-9a51-0b6f0b0c9d11"), status)
					op.SetStatus(codes.Unset, "")
				}
				op.End()
				ops.Add(ctx, 1, okAdd...)
				opTime.Record(ctx, 0.001, okRec...)
			}
		})
	}
}

// discardCarrier is a write-only carrier that keeps nothing, as the
// observer's is for an attempt without a request.
type discardCarrier struct{}

func (discardCarrier) Set(string, string) {}
func (discardCarrier) Get(string) string  { return "" }
func (discardCarrier) Keys() []string     { return nil }
