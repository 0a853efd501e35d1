package payonce_test

import (
	"time"

	"github.com/payonce/payonce/internal/corekit"

	"github.com/payonce/payonce/coinepay"

	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/uuid"
	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/devtools/benchpair"
	"github.com/payonce/payonce/otelpayonce"
	"go.opentelemetry.io/otel/attribute"
	otelmetric "go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

func BenchmarkSignAttempt(b *testing.B) {
	s, err := coinepay.NewHMACSigner("demo-key", "demo-secret")
	if err != nil {
		b.Fatal(err)
	}
	body := []byte(`{"header_id":"hdr_1","package_id":"pkg_basic"}`)
	req, _ := http.NewRequest(http.MethodPost, "https://x/api/v1/openapi/card/apply", bytes.NewReader(body))
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Sign(req, body); err != nil {
			b.Fatal(err)
		}
	}
}

// benchAnswer is the answer the benchmark server gives every request.
const benchAnswer = `{"code":200,"message":"ok","message_key":"ok","data":{"card_id":"card_1","status":"active"}}`

// benchResult is what the benchmark's operation decodes.
type benchResult struct {
	Data struct {
		CardID string `json:"card_id"`
	} `json:"data"`
}

// benchBody is the benchmark's request body.
var benchBody = map[string]string{"header_id": "hdr_1", "package_id": "pkg_basic"}

// benchSetup is the httptest server and the clients the operation
// benchmarks share: the bare net/http client and one SDK client per row.
type benchSetup struct {
	srv  *httptest.Server
	hc   *http.Client
	url  string
	rows []benchRow
	// byHand are the OpenTelemetry rows' floors, on the same providers:
	// byHandObserver, spans sampled and sampled out.
	byHand []benchRow
}

type benchRow struct {
	name string
	c    *payonce.Client
}

// newBenchSetup starts the server and builds the rows: sdk (no signer,
// no observer), sdk-signed (HMAC signing), sdk-otel (the OpenTelemetry
// observer on SDK providers whose spans and metrics go nowhere: a no-op
// span exporter behind the batch processor, a manual metric reader never
// read) and sdk-otel-unsampled (the same with spans sampled out).
func newBenchSetup(b *testing.B) *benchSetup {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, benchAnswer)
	}))
	b.Cleanup(srv.Close)
	st := &benchSetup{srv: srv, hc: corekit.DefaultHTTPClient(), url: srv.URL + "/api/v1/openapi/card/apply"}
	add := func(name string, opts ...payonce.Option) { st.rows = append(st.rows, st.newRow(b, name, opts...)) }
	add("sdk")
	s, err := coinepay.NewHMACSigner("demo-key", "demo-secret")
	if err != nil {
		b.Fatal(err)
	}
	add("sdk-signed", payonce.WithSigner(s))
	for _, row := range []struct {
		name    string
		sampler sdktrace.Sampler
	}{
		{"sdk-otel", sdktrace.AlwaysSample()},          // every operation traced: two spans
		{"sdk-otel-unsampled", sdktrace.NeverSample()}, // metrics and trace context only, as for the operations a ratio sampler leaves out
	} {
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(noopExporter{}), sdktrace.WithSampler(row.sampler))
		b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
		mp := metric.NewMeterProvider(metric.WithReader(metric.NewManualReader()))
		obs, err := otelpayonce.New(otelpayonce.WithTracerProvider(tp), otelpayonce.WithMeterProvider(mp))
		if err != nil {
			b.Fatal(err)
		}
		add(row.name, payonce.WithObserver(obs.Hooks()))
		st.byHand = append(st.byHand, st.newRow(b, "otel-by-hand"+row.name[len("sdk-otel"):], payonce.WithObserver(byHandObserver(tp, mp))))
	}
	return st
}

// byHandObserver does by hand, directly on the OpenTelemetry SDK, what
// otelpayonce's observer does for the benchmark's one operation: a span
// for the operation and, when it records, one for the attempt, their
// attributes set once they are known to record, the trace context
// injected, and the same four metric records on attribute sets built
// once. It knows the route and the answer in advance, so it pays only the
// SDK's work: the floor of any observer built on the SDK.
func byHandObserver(tp trace.TracerProvider, mp otelmetric.MeterProvider) payonce.Observer {
	tr, m := tp.Tracer("bench"), mp.Meter("bench")
	ops, _ := m.Int64Counter("ops")
	attempts, _ := m.Int64Counter("attempts")
	opTime, _ := m.Float64Histogram("op.time")
	attemptTime, _ := m.Float64Histogram("attempt.time")
	base := []attribute.KeyValue{otelpayonce.AttrProvider.String(""), otelpayonce.AttrOperation.String("cards.apply"),
		otelpayonce.AttrMethod.String(http.MethodPost), otelpayonce.AttrRoute.String("/api/v1/openapi/card/apply")}
	opStart := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal)}
	attemptStart := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient)}
	attemptAttrs := append(base[:4:4], otelpayonce.AttrAttempt.Int(1))
	status := otelpayonce.AttrStatusCode.Int(http.StatusOK)
	set := []otelmetric.AddOption{otelmetric.WithAttributeSet(attribute.NewSet(base[0], base[1]))}
	ok := otelmetric.WithAttributeSet(attribute.NewSet(base[0], base[1], otelpayonce.AttrOutcome.String("success")))
	okAdd, okRec := []otelmetric.AddOption{ok}, []otelmetric.RecordOption{ok}
	statusRec := []otelmetric.RecordOption{otelmetric.WithAttributeSet(attribute.NewSet(base[0], base[1], status))}
	prop := propagation.TraceContext{}
	return payonce.Observer{
		StartOperation: func(ctx context.Context, _ payonce.OperationInfo) context.Context {
			ctx, _ = tr.Start(ctx, "cards.apply", opStart...)
			return ctx
		},
		StartAttempt: func(ctx context.Context, info payonce.AttemptInfo) context.Context {
			if trace.SpanFromContext(ctx).IsRecording() {
				var span trace.Span
				ctx, span = tr.Start(ctx, "POST /api/v1/openapi/card/apply", attemptStart...)
				span.SetAttributes(attemptAttrs...)
			}
			prop.Inject(ctx, headerCarrier{&info})
			return ctx
		},
		EndAttempt: func(ctx context.Context, res payonce.AttemptResult) {
			if span := trace.SpanFromContext(ctx); span.IsRecording() {
				span.SetAttributes(status)
				span.End()
			}
			attempts.Add(ctx, 1, set...)
			attemptTime.Record(ctx, res.Duration.Seconds(), statusRec...)
		},
		EndOperation: func(ctx context.Context, res payonce.OperationResult) {
			span := trace.SpanFromContext(ctx)
			if span.IsRecording() {
				span.SetAttributes(base[0], base[1], base[2], base[3], otelpayonce.AttrOutcome.String(res.Outcome),
					otelpayonce.AttrAttempts.Int(res.Attempts), otelpayonce.AttrIdempotencyKey.String(res.Key), status)
			}
			span.End()
			ops.Add(ctx, 1, okAdd...)
			opTime.Record(ctx, res.Duration.Seconds(), okRec...)
		},
	}
}

// headerCarrier sets headers through AttemptInfo.SetHeader, as a
// propagator's carrier.
type headerCarrier struct{ info *payonce.AttemptInfo }

func (c headerCarrier) Set(k, v string) { c.info.SetHeader(k, v) }
func (headerCarrier) Get(string) string { return "" }
func (headerCarrier) Keys() []string    { return nil }

// newRow builds an SDK client on the setup's server and HTTP client.
func (st *benchSetup) newRow(b *testing.B, name string, opts ...payonce.Option) benchRow {
	c, err := payonce.NewClient(append([]payonce.Option{payonce.WithBaseURL(st.srv.URL), payonce.WithHTTPClient(st.hc)}, opts...)...)
	if err != nil {
		b.Fatal(err)
	}
	return benchRow{name, c}
}

// headerObserver is an observer that records nothing; with header set it
// sends a fixed traceparent header on every attempt, as an observer
// propagating trace context does.
type headerObserver struct{ header bool }

func (headerObserver) StartOperation(ctx context.Context, _ payonce.OperationInfo) context.Context {
	return ctx
}

func (o headerObserver) StartAttempt(ctx context.Context, info payonce.AttemptInfo) context.Context {
	if o.header {
		info.SetHeader("Traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00")
	}
	return ctx
}

func (headerObserver) EndAttempt(context.Context, payonce.AttemptResult)     {}
func (headerObserver) EndOperation(context.Context, payonce.OperationResult) {}

// observer is the Observer of o's four hooks, every one set, so that the
// core calls each of them.
func (o headerObserver) observer() payonce.Observer {
	return payonce.Observer{StartOperation: o.StartOperation, StartAttempt: o.StartAttempt, EndAttempt: o.EndAttempt, EndOperation: o.EndOperation}
}

// bare runs the benchmark's operation with net/http alone: a new key, the
// body marshalled, one POST, the answer decoded.
func (st *benchSetup) bare(b *testing.B) { st.bareWith(b, nil) }

// bareSigned is bare, signed by hand as the Coinepay scheme asks: a
// nonce, a timestamp, the HMAC of the canonical string, four headers.
func (st *benchSetup) bareSigned(b *testing.B, s *coinepay.HMACSigner) { st.bareWith(b, s) }

// bareWith is bare, signed with s unless s is nil.
func (st *benchSetup) bareWith(b *testing.B, s *coinepay.HMACSigner) {
	key, _ := payonce.NewKey(time.Now(), uuid.NewString())
	body, _ := json.Marshal(benchBody)
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, st.url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(corekit.HeaderIdempotencyKey, key.String())
	if s != nil {
		if err := s.Sign(req, body); err != nil {
			b.Fatal(err)
		}
	}
	resp, err := st.hc.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	var out benchResult
	err = json.NewDecoder(resp.Body).Decode(&out)
	_ = resp.Body.Close()
	if err != nil || out.Data.CardID == "" {
		b.Fatal("bad answer")
	}
}

// sdk runs the same operation through c.
func sdk(b *testing.B, c *payonce.Client) {
	var out benchResult
	_, err := c.Do(context.Background(), &payonce.Request{Operation: "cards.apply", Method: http.MethodPost,
		Path: "/api/v1/openapi/card/apply", Body: benchBody, Keyed: true}, &out)
	if err != nil || out.Data.CardID == "" {
		b.Fatal(err)
	}
}

// BenchmarkOperation compares one successful keyed operation through the
// SDK (key, JSON, retry loop, signing, decode) with the same POST done with
// a bare net/http client, on the same httptest server: one row each, for
// benchstat. docs/chaos.md reports the ratios. BenchmarkOperationPaired
// measures the same ratios with each SDK operation next to a bare one.
func BenchmarkOperation(b *testing.B) {
	st := newBenchSetup(b)
	b.Run("bare-net-http", func(b *testing.B) {
		b.ReportAllocs()
		defer reportCPU(b)()
		for b.Loop() {
			st.bare(b)
		}
	})
	for _, row := range st.rows {
		b.Run(row.name, func(b *testing.B) {
			b.ReportAllocs()
			defer reportCPU(b)()
			for b.Loop() {
				sdk(b, row.c)
			}
		})
	}
}

// BenchmarkOperationPaired runs, in every iteration, one operation of a
// baseline and one of the row's in turn (the order alternates), timing
// each, and reports their ratio: a drift of the machine's speed during
// the run touches both sides alike, where BenchmarkOperation's separate
// rows each see a different moment. The SDK rows are measured against
// bare net/http; bare-signed is bare net/http signing by hand, with the
// same HMAC and headers, against bare net/http unsigned (what the signing
// scheme costs by itself), sdk-signed-vs-bare-signed is the SDK's own
// cost on a signed call, the -vs-sdk rows the observer's own cost
// (against the SDK without one), and sdk-otel-vs-otel-by-hand (and
// -unsampled) otelpayonce's observer against its floor, the same work
// done by hand on the SDK (byHandObserver). base-ns/op and row-ns/op are the two means;
// cpu-ratio is ratio in the process's CPU time (benchpair.Run).
func BenchmarkOperationPaired(b *testing.B) {
	st := newBenchSetup(b)
	signer, err := coinepay.NewHMACSigner("demo-key", "demo-secret")
	if err != nil {
		b.Fatal(err)
	}
	bareSigned := func(b *testing.B) { st.bareSigned(b, signer) }
	type pair struct {
		name      string
		base, row func(*testing.B)
	}
	var pairs []pair
	for _, r := range st.rows {
		pairs = append(pairs, pair{r.name, st.bare, func(b *testing.B) { sdk(b, r.c) }})
	}
	core := func(b *testing.B) { sdk(b, st.rows[0].c) }
	// The observer's own cost, against the SDK without one: the
	// OpenTelemetry rows, and two floors under them, an observer that does
	// nothing (what the core's hooks cost) and one that only sets a
	// traceparent header (what sending trace context costs).
	floors := []benchRow{st.newRow(b, "nop-observer", payonce.WithObserver(headerObserver{}.observer())),
		st.newRow(b, "header-observer", payonce.WithObserver(headerObserver{header: true}.observer()))}
	for _, r := range append(append(st.rows[2:], floors...), st.byHand...) {
		pairs = append(pairs, pair{r.name + "-vs-sdk", core, func(b *testing.B) { sdk(b, r.c) }})
	}
	// otelpayonce's observer against its floor, the same work done by hand
	// on the same providers.
	for i, r := range st.rows[2:4] {
		floor := st.byHand[i]
		pairs = append(pairs, pair{r.name + "-vs-" + floor.name, func(b *testing.B) { sdk(b, floor.c) }, func(b *testing.B) { sdk(b, r.c) }})
	}
	pairs = append(pairs, pair{"bare-signed", st.bare, bareSigned},
		pair{"sdk-signed-vs-bare-signed", bareSigned, func(b *testing.B) { sdk(b, st.rows[1].c) }})
	for _, p := range pairs {
		b.Run(p.name, func(b *testing.B) { benchpair.Run(b, p.base, p.row) })
	}
}

// reportCPU reports the process's CPU time (user and system, every
// goroutine: the client, the httptest server, the GC) per operation as
// cpu-ns/op. On a loaded machine wall time mostly measures the other
// processes; CPU time stays the work one operation costs. Call it as
// defer reportCPU(b)().
func reportCPU(b *testing.B) func() {
	start := benchpair.CPUTime()
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64(benchpair.CPUTime()-start)/float64(b.N), "cpu-ns/op")
		}
	}
}

// noopExporter drops every span.
type noopExporter struct{}

func (noopExporter) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (noopExporter) Shutdown(context.Context) error                             { return nil }
