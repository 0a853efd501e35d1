package payonce_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/otelpayonce"
	"go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

func BenchmarkSignAttempt(b *testing.B) {
	s, err := payonce.NewHMACSigner("demo-key", "demo-secret")
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

// BenchmarkOperation compares one successful keyed operation through the
// SDK (key, JSON, retry loop, signing, decode) with the same POST done with
// a bare net/http client, on the same httptest server. The README reports
// the ratio. sdk-otel adds the OpenTelemetry observer on SDK providers
// whose spans and metrics go nowhere (a no-op span exporter behind the
// batch processor, a manual metric reader never read); sdk-otel-unsampled
// is the same with spans sampled out.
func BenchmarkOperation(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"code":200,"message":"ok","message_key":"ok","data":{"card_id":"card_1","status":"active"}}`)
	}))
	defer srv.Close()
	hc := payonce.DefaultHTTPClient()
	payload := map[string]string{"header_id": "hdr_1", "package_id": "pkg_basic"}
	type result struct {
		Data struct {
			CardID string `json:"card_id"`
		} `json:"data"`
	}
	// runSDK runs the benchmark's operation through c.
	runSDK := func(b *testing.B, c *payonce.Client) {
		b.ReportAllocs()
		defer reportCPU(b)()
		for b.Loop() {
			var out result
			_, err := c.Do(context.Background(), &payonce.Request{Operation: "cards.apply", Method: http.MethodPost,
				Path: "/api/v1/openapi/card/apply", Body: payload, Keyed: true}, &out)
			if err != nil || out.Data.CardID == "" {
				b.Fatal(err)
			}
		}
	}

	b.Run("bare-net-http", func(b *testing.B) {
		b.ReportAllocs()
		defer reportCPU(b)()
		for b.Loop() {
			key, _ := payonce.NewKey()
			body, _ := json.Marshal(payload)
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, srv.URL+"/api/v1/openapi/card/apply", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set(payonce.HeaderIdempotencyKey, key)
			resp, err := hc.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			var out result
			err = json.NewDecoder(resp.Body).Decode(&out)
			_ = resp.Body.Close()
			if err != nil || out.Data.CardID == "" {
				b.Fatal("bad answer")
			}
		}
	})
	b.Run("sdk", func(b *testing.B) {
		c, err := payonce.NewClient(payonce.WithBaseURL(srv.URL), payonce.WithHTTPClient(hc))
		if err != nil {
			b.Fatal(err)
		}
		runSDK(b, c)
	})
	b.Run("sdk-signed", func(b *testing.B) {
		s, _ := payonce.NewHMACSigner("demo-key", "demo-secret")
		c, err := payonce.NewClient(payonce.WithBaseURL(srv.URL), payonce.WithHTTPClient(hc), payonce.WithSigner(s))
		if err != nil {
			b.Fatal(err)
		}
		runSDK(b, c)
	})
	otel := func(name string, sampler sdktrace.Sampler) {
		b.Run(name, func(b *testing.B) {
			tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(noopExporter{}), sdktrace.WithSampler(sampler))
			defer func() { _ = tp.Shutdown(context.Background()) }()
			mp := metric.NewMeterProvider(metric.WithReader(metric.NewManualReader()))
			obs, err := otelpayonce.New(otelpayonce.WithTracerProvider(tp), otelpayonce.WithMeterProvider(mp))
			if err != nil {
				b.Fatal(err)
			}
			c, err := payonce.NewClient(payonce.WithBaseURL(srv.URL), payonce.WithHTTPClient(hc), payonce.WithObserver(obs))
			if err != nil {
				b.Fatal(err)
			}
			runSDK(b, c)
		})
	}
	otel("sdk-otel", sdktrace.AlwaysSample())          // every operation traced: two spans
	otel("sdk-otel-unsampled", sdktrace.NeverSample()) // metrics and trace context only, as for the operations a ratio sampler leaves out
}

// reportCPU reports the process's CPU time (user and system, every
// goroutine: the client, the httptest server, the GC) per operation as
// cpu-ns/op. On a loaded machine wall time mostly measures the other
// processes; CPU time stays the work one operation costs. Call it as
// defer reportCPU(b)().
func reportCPU(b *testing.B) func() {
	start := cpuTime()
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
		}
	}
}

// noopExporter drops every span.
type noopExporter struct{}

func (noopExporter) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (noopExporter) Shutdown(context.Context) error                             { return nil }
