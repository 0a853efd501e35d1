package chaos

import (
	"context"
	"fmt"
	"sort"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/otelpayonce"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// Telemetry is what the OpenTelemetry instruments of otelpayonce counted
// during a run (Config.Telemetry, the -otel flag): the same figures as the
// report's, from another source, so the two can be checked against each
// other.
type Telemetry struct {
	Operations []OutcomeCount `json:"operations"` // Do calls by outcome (payonce.operations)
	Attempts   int            `json:"attempts"`   // payonce.attempts
	Retries    []CauseCount   `json:"retries"`    // payonce.retries by cause, signer recoveries apart
	Recoveries int            `json:"recoveries"` // payonce.retries with cause signer_recovery
	Replays    int            `json:"replays"`    // payonce.replays: answers marked as replays
}

// OutcomeCount is a number of operations that ended one way.
type OutcomeCount struct {
	Outcome string `json:"outcome"`
	Count   int    `json:"count"`
}

// telemetry is a run's in-memory metric pipeline: an otelpayonce observer
// on a MeterProvider with a ManualReader.
type telemetry struct {
	obs    *otelpayonce.Observer
	reader *sdkmetric.ManualReader
	mp     *sdkmetric.MeterProvider
}

func newTelemetry() (*telemetry, error) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	obs, err := otelpayonce.New(otelpayonce.WithMeterProvider(mp))
	if err != nil {
		return nil, err
	}
	return &telemetry{obs: obs, reader: reader, mp: mp}, nil
}

func (t *telemetry) close() {
	_ = t.obs.Close()
	_ = t.mp.Shutdown(context.Background())
}

// collect reads the instruments once.
func (t *telemetry) collect(ctx context.Context) (*Telemetry, error) {
	var rm metricdata.ResourceMetrics
	if err := t.reader.Collect(ctx, &rm); err != nil {
		return nil, fmt.Errorf("chaos: collect metrics: %w", err)
	}
	out := &Telemetry{}
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
					if v.AsString() == payonce.CauseSignerRecovery {
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
}
