package chaos

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/payonce/payonce/internal/corekit"
	"github.com/payonce/payonce/otelpayonce"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Telemetry is what the OpenTelemetry instruments and spans of otelpayonce
// counted during a run (Config.Telemetry, the -otel flag): the same figures as the
// report's, from another source, so the two can be checked against each
// other.
type Telemetry struct {
	Operations []OutcomeCount `json:"operations"` // Do calls by outcome (payonce.operations)
	Attempts   int            `json:"attempts"`   // payonce.attempts
	Retries    []CauseCount   `json:"retries"`    // payonce.retries by cause, signer recoveries apart
	Recoveries int            `json:"recoveries"` // payonce.retries with cause signer_recovery
	Replays    int            `json:"replays"`    // payonce.replays: answers marked as replays
	Spans      SpanCounts     `json:"spans"`      // the spans otelpayonce ended
}

// SpanCounts is a summary of the spans otelpayonce ended during a run.
type SpanCounts struct {
	Operations      int `json:"operations"`       // operation spans (kind internal)
	OperationErrors int `json:"operation_errors"` // operation spans with status error
	Attempts        int `json:"attempts"`         // attempt spans (kind client)
	AttemptErrors   int `json:"attempt_errors"`   // attempt spans with status error
}

// spanCounter is a span processor that counts the spans it sees end.
type spanCounter struct {
	mu sync.Mutex
	n  SpanCounts
}

func (c *spanCounter) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

func (c *spanCounter) OnEnd(s sdktrace.ReadOnlySpan) {
	failed := s.Status().Code == codes.Error
	c.mu.Lock()
	defer c.mu.Unlock()
	switch s.SpanKind() {
	case trace.SpanKindInternal:
		c.n.Operations++
		if failed {
			c.n.OperationErrors++
		}
	case trace.SpanKindClient:
		c.n.Attempts++
		if failed {
			c.n.AttemptErrors++
		}
	}
}

func (c *spanCounter) Shutdown(context.Context) error   { return nil }
func (c *spanCounter) ForceFlush(context.Context) error { return nil }

func (c *spanCounter) counts() SpanCounts {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// OutcomeCount is a number of operations that ended one way.
type OutcomeCount struct {
	Outcome string `json:"outcome"`
	Count   int    `json:"count"`
}

// telemetry is a run's in-memory pipeline: an otelpayonce observer on a
// MeterProvider with a ManualReader and a TracerProvider, every span
// sampled, whose processor counts the spans.
type telemetry struct {
	obs    *otelpayonce.Observer
	reader *sdkmetric.ManualReader
	mp     *sdkmetric.MeterProvider
	tp     *sdktrace.TracerProvider
	spans  *spanCounter
}

func newTelemetry() (*telemetry, error) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	spans := &spanCounter{}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithSpanProcessor(spans))
	obs, err := otelpayonce.New(otelpayonce.WithMeterProvider(mp), otelpayonce.WithTracerProvider(tp))
	if err != nil {
		return nil, err
	}
	return &telemetry{obs: obs, reader: reader, mp: mp, tp: tp, spans: spans}, nil
}

func (t *telemetry) close() {
	_ = t.obs.Close()
	_ = t.mp.Shutdown(context.Background())
	_ = t.tp.Shutdown(context.Background())
}

// collect reads the instruments once.
func (t *telemetry) collect(ctx context.Context) (*Telemetry, error) {
	var rm metricdata.ResourceMetrics
	if err := t.reader.Collect(ctx, &rm); err != nil {
		return nil, fmt.Errorf("chaos: collect metrics: %w", err)
	}
	out := &Telemetry{Spans: t.spans.counts()}
	outcomes, causes := map[string]int{}, map[string]int{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			sum, ok := m.Data.(metricdata.Sum[int64])
			if !ok {
				continue
			}
			for _, p := range sum.DataPoints {
				n := int(p.Value)
				switch m.Name {
				case otelpayonce.MetricOperations:
					v, _ := p.Attributes.Value(otelpayonce.AttrOutcome)
					outcomes[v.AsString()] += n
				case otelpayonce.MetricAttempts:
					out.Attempts += n
				case otelpayonce.MetricRetries:
					v, _ := p.Attributes.Value(otelpayonce.AttrRetryCause)
					if v.AsString() == corekit.CauseSignerRecovery {
						out.Recoveries += n
					} else {
						causes[v.AsString()] += n
					}
				case otelpayonce.MetricReplays:
					out.Replays += n
				}
			}
		}
	}
	for o, n := range outcomes {
		out.Operations = append(out.Operations, OutcomeCount{Outcome: o, Count: n})
	}
	sort.Slice(out.Operations, func(i, j int) bool { return out.Operations[i].Outcome < out.Operations[j].Outcome })
	for c, n := range causes {
		out.Retries = append(out.Retries, CauseCount{Cause: c, Count: n})
	}
	sort.Slice(out.Retries, func(i, j int) bool { return out.Retries[i].Cause < out.Retries[j].Cause })
	return out, nil
}

// rows are the report lines of the telemetry section.
func (t *Telemetry) rows(row func(string, any)) {
	for _, o := range t.Operations {
		row("  operations: "+o.Outcome, o.Count)
	}
	row("  attempts", t.Attempts)
	for _, c := range t.Retries {
		row("  retries: "+c.Cause, c.Count)
	}
	row("  repeats after signer recovery", t.Recoveries)
	row("  replayed answers", t.Replays)
	row("  spans: operations", t.Spans.Operations)
	row("  spans: operations with status error", t.Spans.OperationErrors)
	row("  spans: attempts", t.Spans.Attempts)
	row("  spans: attempts with status error", t.Spans.AttemptErrors)
}
