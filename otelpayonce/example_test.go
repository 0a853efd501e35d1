package otelpayonce_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/coinepay"
	"github.com/payonce/payonce/coinepay/coinepaytest"
	"github.com/payonce/payonce/otelpayonce"
	"github.com/payonce/payonce/payoncetest"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// A card apply whose first answer is lost: one operation span, two
// attempt spans, and the metrics an on-call merchant reads: two attempts,
// one retry after a transport failure, one replayed answer.
func ExampleNew() {
	// In production: your TracerProvider and MeterProvider (or the global
	// ones, otelpayonce.New() with no options).
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	obs, err := otelpayonce.New(otelpayonce.WithTracerProvider(tp), otelpayonce.WithMeterProvider(mp))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer obs.Close()

	srv := coinepaytest.NewServer()
	defer srv.Close()
	_ = srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: coinepay.PathCardApply, Count: 1})
	client, err := srv.Client(payonce.WithObserver(obs.Hooks()), payonce.WithRetryPolicy(payoncetest.FastRetryPolicy()))
	if err != nil {
		fmt.Println(err)
		return
	}
	key, err := payonce.NewKey(srv.Clock().Now(), "order", "42", "card-apply")
	if err != nil {
		fmt.Println(err)
		return
	}
	_, err = client.Cards.Apply(context.Background(), &coinepay.ApplyRequest{HeaderID: "h1", PackageID: "p1"},
		payonce.WithKey(key))
	if err != nil {
		fmt.Println(err)
		return
	}

	for _, s := range spans.GetSpans() {
		fmt.Println("span:", s.Name, s.SpanKind)
	}
	var rm metricdata.ResourceMetrics
	_ = reader.Collect(context.Background(), &rm)
	for _, m := range rm.ScopeMetrics[0].Metrics {
		if sum, ok := m.Data.(metricdata.Sum[int64]); ok {
			for _, p := range sum.DataPoints {
				cause, _ := p.Attributes.Value(otelpayonce.AttrRetryCause)
				fmt.Println(strings.TrimSpace(fmt.Sprint("metric: ", m.Name, " ", p.Value, " ", cause.AsString())))
			}
		}
	}
	// Output:
	// span: POST /api/v1/openapi/card/apply client
	// span: POST /api/v1/openapi/card/apply client
	// span: coinepay cards.apply internal
	// metric: payonce.operations 1
	// metric: payonce.attempts 2
	// metric: payonce.retries 1 transport
	// metric: payonce.replays 1
}
