package otelpayonce

import (
	"context"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/payonce/payonce"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

type answerOK struct{}

func (answerOK) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(`{}`)), Request: r}, nil
}

// budgetEntries counts the retry budgets the observer holds an entry for.
func (o *Observer) budgetEntries() int {
	n := 0
	o.budgets.Range(func(any, any) bool { n++; return true })
	return n
}

// runOnce makes a client of its own (with its own retry budget), runs one
// operation through obs and drops the client.
func runOnce(t *testing.T, obs *Observer) {
	t.Helper()
	c, err := payonce.NewClient(payonce.WithBaseURL("http://127.0.0.1:1"), payonce.WithObserver(obs.Hooks()),
		payonce.WithHTTPClient(&http.Client{Transport: answerOK{}}))
	require.NoError(t, err)
	_, err = c.Do(context.Background(), &payonce.Request{Operation: "customers.list", Method: http.MethodGet, Path: "/v1/customers"}, nil)
	require.NoError(t, err)
}

// A client made per request, with an observer shared by all of them and a
// meter provider that never collects (the global no-op one, when only
// tracing is set up): the budgets of clients gone are not kept, so the
// observer's memory follows the clients alive (between two collections
// of the garbage, here every 100 clients), not the clients ever made.
func TestBudgetsOfClientsGoneAreNotKept(t *testing.T) {
	obs, err := New(WithTracerProvider(tracenoop.NewTracerProvider()), WithMeterProvider(noop.NewMeterProvider()))
	require.NoError(t, err)
	defer obs.Close()
	const clients = 3000
	for i := range clients {
		runOnce(t, obs)
		if i%100 == 99 {
			runtime.GC()
		}
	}
	runtime.GC()
	assert.LessOrEqual(t, obs.budgetEntries(), 256, "budgets of %d clients gone", clients)
}

// The traceparent inject writes with the W3C propagator is the one
// propagation.TraceContext writes, whatever the span context's flags.
func TestTraceparentMatchesTraceContext(t *testing.T) {
	tid := trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36}
	sid := trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7}
	for _, flags := range []trace.TraceFlags{0, trace.FlagsSampled, trace.FlagsRandom, 0xff} {
		sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: flags})
		want := propagation.MapCarrier{}
		propagation.TraceContext{}.Inject(trace.ContextWithSpanContext(context.Background(), sc), want)
		assert.Equal(t, want.Get("traceparent"), traceparent(sc), "flags %x", flags)
	}
}

// headerCapture answers 200 and keeps the last request's headers.
type headerCapture struct{ got http.Header }

func (h *headerCapture) RoundTrip(r *http.Request) (*http.Response, error) {
	h.got = r.Header.Clone()
	return answerOK{}.RoundTrip(r)
}

// Each attempt carries the headers propagation.TraceContext writes for
// its context, trace state included, whether its trace is sampled or not.
func TestAttemptHeadersMatchTraceContext(t *testing.T) {
	ts, err := trace.ParseTraceState("vendor=a,other=b")
	require.NoError(t, err)
	obs, err := New(WithTracerProvider(tracenoop.NewTracerProvider()), WithMeterProvider(noop.NewMeterProvider()))
	require.NoError(t, err)
	defer obs.Close()
	rt := &headerCapture{}
	c, err := payonce.NewClient(payonce.WithBaseURL("http://127.0.0.1:1"), payonce.WithObserver(obs.Hooks()),
		payonce.WithHTTPClient(&http.Client{Transport: rt}))
	require.NoError(t, err)
	for _, flags := range []trace.TraceFlags{0, trace.FlagsSampled} {
		sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1, 2, 3}, SpanID: trace.SpanID{4, 5},
			TraceFlags: flags, TraceState: ts, Remote: true})
		ctx := trace.ContextWithRemoteSpanContext(context.Background(), sc)
		_, err := c.Do(ctx, &payonce.Request{Operation: "things.get", Method: http.MethodGet, Path: "/things"}, nil)
		require.NoError(t, err)
		want := propagation.MapCarrier{}
		propagation.TraceContext{}.Inject(ctx, want)
		require.Len(t, want, 2)
		for k, v := range want {
			assert.Equal(t, v, rt.got.Get(k), "%s, flags %x", k, flags)
		}
	}
}
