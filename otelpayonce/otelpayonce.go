// Package otelpayonce reports payonce operations to OpenTelemetry; a
// merchant calls New and passes its Hooks to payonce.WithObserver (below):
// one
// span per business operation with a child span per attempt (none for an
// operation sampled out: its attempts carry its trace context), W3C trace
// context on every attempt, and metrics (operations by outcome, attempts,
// retries by cause, replays, durations, retry budget left).
//
//	obs, err := otelpayonce.New() // the global TracerProvider and MeterProvider
//	client, err := a55.NewClient(auth, payonce.WithObserver(obs.Hooks()))
//
// Spans and metrics are named by the operation and the route template
// (payonce.OperationInfo.Route), never by raw IDs, so their cardinality is that of the
// API; past MaxRoutes kinds of operation, the rest share an overflow
// route, then one overflow name (see MaxRoutes). The idempotency key and the request ID are span attributes only,
// never metric attributes. Nothing reported holds a card number, CVV,
// secret, token or query string.
package otelpayonce

import (
	"github.com/payonce/payonce/internal/corekit"
	"github.com/payonce/payonce/redact"

	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"weak"

	"github.com/payonce/payonce"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of the tracer and the meter.
const ScopeName = "github.com/payonce/payonce/otelpayonce"

// Attribute keys. The HTTP ones are OpenTelemetry's semantic conventions;
// the payonce.* ones are this package's.
const (
	AttrProvider       = attribute.Key("payonce.provider")        // "a55", "coinepay"
	AttrOperation      = attribute.Key("payonce.operation")       // "charges.create"
	AttrOutcome        = attribute.Key("payonce.outcome")         // OperationResult.Outcome: "success", "retries_exhausted", ...
	AttrAttempt        = attribute.Key("payonce.attempt")         // 1 for the first attempt
	AttrAttempts       = attribute.Key("payonce.attempts")        // attempts an operation sent
	AttrRetryCause     = attribute.Key("payonce.retry.cause")     // why an attempt repeats the last one
	AttrReplayed       = attribute.Key("payonce.replayed")        // the answer was a stored replay
	AttrIdempotencyKey = attribute.Key("payonce.idempotency_key") // spans only
	AttrRequestID      = attribute.Key("payonce.request_id")      // spans only
	AttrErrorCode      = attribute.Key("payonce.error.code")      // the provider's error code, spans only
	// AttrFromJournal is true when the answer came from the journal,
	// nothing sent; on operations with a journal reference only.
	AttrFromJournal = attribute.Key("payonce.from_journal")
	// AttrReferenceTemplate is the journal reference's template
	// (payonce.OperationInfo.ReferenceTemplate: "order-{id}/charge"), never the raw
	// reference; on operations with a journal reference only.
	AttrReferenceTemplate = attribute.Key("payonce.reference.template")
	AttrMethod            = attribute.Key("http.request.method")
	AttrRoute             = attribute.Key("url.template")
	AttrStatusCode        = attribute.Key("http.response.status_code")
	AttrResendCount       = attribute.Key("http.request.resend_count")
	AttrErrorType         = attribute.Key("error.type")
)

// Metric names.
const (
	MetricOperations      = "payonce.operations"             // counter: provider, operation, outcome
	MetricAttempts        = "payonce.attempts"               // counter: provider, operation
	MetricRetries         = "payonce.retries"                // counter: provider, operation, payonce.retry.cause
	MetricReplays         = "payonce.replays"                // counter: provider, operation
	MetricOperationTime   = "payonce.operation.duration"     // histogram (s): provider, operation, outcome
	MetricAttemptTime     = "payonce.attempt.duration"       // histogram (s): provider, operation, http.response.status_code, error.type
	MetricBudgetAvailable = "payonce.retry_budget.available" // gauge: provider
)

// Observer reports payonce operations to OpenTelemetry: pass its Hooks to
// payonce.WithObserver. It is safe for concurrent use; share one between
// clients.
type Observer struct {
	tracer trace.Tracer
	prop   propagation.TextMapPropagator
	w3c    bool // prop is propagation.TraceContext: inject writes its headers itself

	operations, attempts, retries, replays metric.Int64Counter
	opTime, attemptTime                    metric.Float64Histogram
	budgetReg                              metric.Registration

	routes    sync.Map              // routeKey -> *route, at most MaxRoutes + MaxRoutes/4
	last      atomic.Pointer[route] // the route last looked up, checked before routes
	addMu     sync.Mutex            // held to add to routes
	nroutes   int                   // entries of their own kind in routes, under addMu
	noverflow int                   // entries with the overflow route in routes, under addMu
	overflow  *route                // what every event past both shares
	// budgets are the retry budgets seen, weakly held: a client dropped by
	// its owner stops being reported. Entries of budgets collected are
	// dropped by the gauge's callback and, for a meter provider that
	// never collects, by addBudget (see budgetSweepMin).
	budgets  sync.Map // weak.Pointer[payonce.RetryBudget] -> attribute.Set
	budgetMu sync.Mutex
	nbudgets atomic.Int64 // entries in budgets
	sweepAt  int64        // nbudgets past which addBudget sweeps, under budgetMu
}

// budgetSweepMin is the fewest budget entries an Observer sweeps for
// budgets collected. A sweep runs when the entries reach twice what the
// last one left (and at least this many), so its cost is amortized over
// the insertions and the entries stay within twice the budgets alive,
// whether or not a reader ever calls the gauge's callback.
const budgetSweepMin = 64

// Option configures an Observer.
type Option func(*config)

type config struct {
	tp   trace.TracerProvider
	mp   metric.MeterProvider
	prop propagation.TextMapPropagator
}

// WithTracerProvider sets where spans go (default: otel.GetTracerProvider()).
func WithTracerProvider(tp trace.TracerProvider) Option { return func(c *config) { c.tp = tp } }

// WithMeterProvider sets where metrics go (default: otel.GetMeterProvider()).
func WithMeterProvider(mp metric.MeterProvider) Option { return func(c *config) { c.mp = mp } }

// WithPropagator sets how trace context is injected into each attempt's
// headers (default: W3C Trace Context, propagation.TraceContext{}). Pass
// otel.GetTextMapPropagator() to use the global one.
func WithPropagator(p propagation.TextMapPropagator) Option { return func(c *config) { c.prop = p } }

// New returns an Observer. Pass its Hooks to payonce.WithObserver.
func New(opts ...Option) (*Observer, error) {
	cfg := config{}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	if cfg.tp == nil {
		cfg.tp = otel.GetTracerProvider()
	}
	if cfg.mp == nil {
		cfg.mp = otel.GetMeterProvider()
	}
	if cfg.prop == nil {
		cfg.prop = propagation.TraceContext{}
	}
	o := &Observer{tracer: cfg.tp.Tracer(ScopeName), prop: cfg.prop}
	_, o.w3c = cfg.prop.(propagation.TraceContext)
	m := cfg.mp.Meter(ScopeName)
	var err error
	counter := func(name, desc string) metric.Int64Counter {
		c, cerr := m.Int64Counter(name, metric.WithDescription(desc), metric.WithUnit("{"+unitOf(name)+"}"))
		if err == nil {
			err = cerr
		}
		return c
	}
	o.operations = counter(MetricOperations, "Business operations run, by outcome.")
	o.attempts = counter(MetricAttempts, "HTTP attempts sent.")
	o.retries = counter(MetricRetries, "Attempts that repeated an earlier one, by cause.")
	o.replays = counter(MetricReplays, "Answers the server marked as a replay of a stored response.")
	hist := func(name, desc string) metric.Float64Histogram {
		h, herr := m.Float64Histogram(name, metric.WithDescription(desc), metric.WithUnit("s"),
			metric.WithExplicitBucketBoundaries(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120))
		if err == nil {
			err = herr
		}
		return h
	}
	o.opTime = hist(MetricOperationTime, "Wall time of business operations, retries and waits included.")
	o.attemptTime = hist(MetricAttemptTime, "Time of single HTTP attempts.")
	if err != nil {
		return nil, fmt.Errorf("otelpayonce: create instruments: %w", err)
	}
	gauge, err := m.Int64ObservableGauge(MetricBudgetAvailable, metric.WithDescription("Retry budget tokens left."), metric.WithUnit("{token}"))
	if err != nil {
		return nil, fmt.Errorf("otelpayonce: create instruments: %w", err)
	}
	o.budgetReg, err = m.RegisterCallback(func(_ context.Context, ob metric.Observer) error {
		o.budgets.Range(func(k, v any) bool {
			b := k.(weak.Pointer[payonce.RetryBudget]).Value()
			if b == nil {
				if _, ok := o.budgets.LoadAndDelete(k); ok {
					o.nbudgets.Add(-1)
				}
				return true
			}
			ob.ObserveInt64(gauge, int64(b.Available()), metric.WithAttributeSet(v.(attribute.Set)))
			return true
		})
		return nil
	}, gauge)
	if err != nil {
		return nil, fmt.Errorf("otelpayonce: register retry budget gauge: %w", err)
	}
	return o, nil
}

func unitOf(metricName string) string {
	switch metricName {
	case MetricOperations:
		return "operation"
	case MetricAttempts, MetricRetries:
		return "attempt"
	}
	return "answer"
}

// Hooks returns the payonce.Observer whose hooks report to o, for
// payonce.WithObserver:
//
//	client, err := a55.NewClient(auth, payonce.WithObserver(obs.Hooks()))
func (o *Observer) Hooks() payonce.Observer {
	return payonce.Observer{StartOperation: o.startOperation, StartAttempt: o.startAttempt,
		EndAttempt: o.endAttempt, EndOperation: o.endOperation}
}

// Close stops reporting the retry budget gauge. Spans and counters need
// no closing; the providers own their exporters.
func (o *Observer) Close() error { return o.budgetReg.Unregister() }

// MaxRoutes is how many kinds of operation (provider, operation, method
// and route) one Observer names spans and labels metrics by. An event of
// a kind past it keeps its provider, operation and method with the route
// "other", for MaxRoutes/4 more such kinds, so that an
// operation first seen once other clients' routes filled the table is
// still counted under its name; past those too, events share one kind
// whose provider, operation and route are "other" and
// method "_OTHER". A Client already
// bounds its own routes (256): this bounds an Observer
// shared by many clients, or fed OperationInfo by other code, so that no
// input grows its memory or its metrics' cardinality.
const MaxRoutes = 1024

// routeKey identifies the attribute sets of one operation on one route.
type routeKey struct{ provider, operation, method, route, reference string }

// route holds what every event of one operation kind reuses: names, span
// options and metric attribute sets, built once so that recording
// allocates as little as the SDK allows, and the sets by outcome, cause
// and status, filled as they are seen.
type route struct {
	key                         routeKey
	opSpanName, attemptSpanName string
	spanAttrs                   []attribute.KeyValue
	baseAttrs                   []attribute.KeyValue // the metrics': provider, operation, reference template
	firstAttempt                []attribute.KeyValue // attempt 1's span's: spanAttrs and the attempt number
	base                        measure
	budget                      atomic.Pointer[payonce.RetryBudget] // the last budget registered from this route

	mu        sync.RWMutex
	byOutcome map[string]measure
	byCause   map[string]measure
	byStatus  map[statusKey]measure
}

// measure is one attribute set as the options counters and histograms
// take, built once, and the attributes it adds to the route's base ones
// (for an attempt: its status and error type), which the attempt's span
// takes as they are when the answer carried nothing else.
type measure struct {
	add   []metric.AddOption
	rec   []metric.RecordOption
	extra []attribute.KeyValue
	// first is the route's firstAttempt followed by extra: the attributes
	// of a first attempt's span, set when it ends (see startAttempt).
	first []attribute.KeyValue
}

func newMeasure(kvs ...attribute.KeyValue) measure {
	opt := metric.WithAttributeSet(attribute.NewSet(kvs...))
	return measure{add: []metric.AddOption{opt}, rec: []metric.RecordOption{opt}}
}

type statusKey struct {
	status  int
	errType string
}

func (o *Observer) route(info payonce.OperationInfo) *route {
	k := routeKey{info.Provider, info.Operation, info.Method, info.Route, info.ReferenceTemplate}
	if r := o.last.Load(); r != nil && r.key == k {
		return r // the common case: the same route as the last event's, found without hashing
	}
	if r, ok := o.routes.Load(k); ok {
		o.last.Store(r.(*route))
		return r.(*route)
	}
	o.addMu.Lock()
	defer o.addMu.Unlock()
	if r, ok := o.routes.Load(k); ok {
		return r.(*route)
	}
	if o.nroutes >= MaxRoutes {
		return o.overflowRoute(k)
	}
	r := newRoute(k)
	o.routes.Store(k, r)
	o.nroutes++
	o.last.Store(r)
	return r
}

// overflowRoute is the kind of an event whose own kind k did not fit the
// table: k with the overflow route, while MaxRoutes/4 such kinds fit (so
// that an operation first seen once other clients' routes filled the
// table keeps its provider and operation), else the one overflow kind.
// The caller holds addMu.
func (o *Observer) overflowRoute(k routeKey) *route {
	k.route, k.reference = corekit.RouteOverflow, ""
	if r, ok := o.routes.Load(k); ok {
		return r.(*route)
	}
	if o.noverflow < MaxRoutes/4 {
		r := newRoute(k)
		o.routes.Store(k, r)
		o.noverflow++
		return r
	}
	if o.overflow == nil {
		o.overflow = newRoute(routeKey{corekit.RouteOverflow, corekit.RouteOverflow, "_OTHER", corekit.RouteOverflow, ""})
	}
	return o.overflow
}

// newRoute builds the names, span options and attribute sets of k.
func newRoute(k routeKey) *route {
	name := k.operation
	if k.provider != "" && name != "" {
		name = k.provider + " " + name
	}
	attemptName := k.method + " " + k.route
	if name == "" {
		name = attemptName
	}
	spanAttrs := []attribute.KeyValue{AttrProvider.String(k.provider), AttrOperation.String(k.operation),
		AttrMethod.String(k.method), AttrRoute.String(k.route)}
	baseAttrs := spanAttrs[:2:2]
	if k.reference != "" {
		ref := AttrReferenceTemplate.String(k.reference)
		spanAttrs = append(spanAttrs, ref)
		baseAttrs = append(baseAttrs, ref)
	}
	return &route{
		key:        k,
		opSpanName: name, attemptSpanName: attemptName, spanAttrs: spanAttrs,
		firstAttempt: append(spanAttrs[:len(spanAttrs):len(spanAttrs)], AttrAttempt.Int(1)),
		baseAttrs:    baseAttrs,
		base:         newMeasure(baseAttrs...),
		byOutcome:    map[string]measure{},
		byCause:      map[string]measure{},
		byStatus:     map[statusKey]measure{},
	}
}

// The spans' start options: their kind only. A span's attributes are set
// once it is known to record (see startAttempt and endOperation), so that a
// span sampled out costs no copy of them; samplers decide on the span's
// name, which holds the provider, operation, method and route.
var (
	opSpanStart      = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal)}
	attemptSpanStart = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient)}
)

// cached returns the measure of the base attributes plus extra(), built
// once per k and kept in m.
func cached[K comparable](r *route, m map[K]measure, k K, extra func() []attribute.KeyValue) measure {
	r.mu.RLock()
	ms, ok := m[k]
	r.mu.RUnlock()
	if ok {
		return ms
	}
	kvs := extra()
	ms = newMeasure(append(r.baseAttrs[:len(r.baseAttrs):len(r.baseAttrs)], kvs...)...)
	ms.extra = kvs[:len(kvs):len(kvs)]
	ms.first = append(r.firstAttempt[:len(r.firstAttempt):len(r.firstAttempt)], kvs...)
	r.mu.Lock()
	m[k] = ms
	r.mu.Unlock()
	return ms
}

// startOperation starts the operation's span.
func (o *Observer) startOperation(ctx context.Context, info payonce.OperationInfo) context.Context {
	r := o.route(info)
	if b := info.RetryBudget; b != nil && r.budget.Load() != b {
		// Once per budget and route: the route keeps the last one it
		// registered (one pointer, so at most one budget per route stays
		// reachable because of it).
		r.budget.Store(b)
		o.addBudget(b, info.Provider)
	}
	ctx, _ = o.tracer.Start(ctx, r.opSpanName, opSpanStart...)
	return ctx
}

// addBudget registers b for the gauge, once, and sweeps the entries of
// budgets collected when they have doubled since the last sweep.
func (o *Observer) addBudget(b *payonce.RetryBudget, provider string) {
	w := weak.Make(b)
	if _, ok := o.budgets.Load(w); ok {
		return
	}
	o.budgetMu.Lock()
	defer o.budgetMu.Unlock()
	if _, loaded := o.budgets.LoadOrStore(w, attribute.NewSet(AttrProvider.String(provider))); loaded {
		return
	}
	if o.nbudgets.Add(1) < max(o.sweepAt, budgetSweepMin) {
		return
	}
	o.budgets.Range(func(k, _ any) bool {
		if k.(weak.Pointer[payonce.RetryBudget]).Value() == nil {
			if _, ok := o.budgets.LoadAndDelete(k); ok {
				o.nbudgets.Add(-1)
			}
		}
		return true
	})
	o.sweepAt = 2 * o.nbudgets.Load()
}

// startAttempt starts the attempt's span, a child of the operation's,
// injects its trace context into the attempt's headers and counts the
// retry, when it is one. An attempt of an operation whose span is sampled
// out gets no span of its own (see unrecorded): its headers carry the
// operation's trace context.
func (o *Observer) startAttempt(ctx context.Context, info payonce.AttemptInfo) context.Context {
	r := o.route(info.OperationInfo)
	if unrecorded(trace.SpanFromContext(ctx)) {
		o.inject(ctx, info)
		o.countRetry(ctx, r, info.Cause)
		return ctx
	}
	ctx, span := o.tracer.Start(ctx, r.attemptSpanName, attemptSpanStart...)
	// A first attempt's span takes its attributes when it ends, with the
	// answer's, in one call (see endAttempt); a retry's, now.
	if span.IsRecording() && (info.Attempt != 1 || info.Cause != "") {
		attrs := make([]attribute.KeyValue, 0, len(r.spanAttrs)+3)
		attrs = append(attrs, r.spanAttrs...)
		attrs = append(attrs, AttrAttempt.Int(info.Attempt))
		if info.Attempt > 1 {
			attrs = append(attrs, AttrResendCount.Int(info.Attempt-1))
		}
		if info.Cause != "" {
			attrs = append(attrs, AttrRetryCause.String(info.Cause))
		}
		span.SetAttributes(attrs...)
	}
	o.inject(ctx, info)
	o.countRetry(ctx, r, info.Cause)
	return ctx
}

// inject adds ctx's trace context to the attempt's headers. With the W3C
// propagator it writes traceparent and tracestate as
// propagation.TraceContext.Inject does, without handing info to a carrier
// (which would move it to the heap on every attempt).
func (o *Observer) inject(ctx context.Context, info payonce.AttemptInfo) {
	if !o.w3c {
		o.injectCarrier(ctx, info)
		return
	}
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return
	}
	if ts := sc.TraceState().String(); ts != "" {
		info.SetHeader("tracestate", ts)
	}
	info.SetHeader("traceparent", traceparent(sc))
}

// injectCarrier is inject through o's propagator: a function of its own,
// kept out of line, so that only this path moves its copy of info to the
// heap.
//
//go:noinline
func (o *Observer) injectCarrier(ctx context.Context, info payonce.AttemptInfo) {
	o.prop.Inject(ctx, attemptCarrier{&info})
}

// traceparent formats sc as a W3C traceparent header value, version 00,
// keeping only the flags the specification defines (sampled, random).
func traceparent(sc trace.SpanContext) string {
	const hexDigits = "0123456789abcdef"
	var b [55]byte // "00-" trace ID "-" span ID "-" flags
	b[0], b[1], b[2] = '0', '0', '-'
	i := 3
	put := func(src []byte) {
		for _, c := range src {
			b[i], b[i+1] = hexDigits[c>>4], hexDigits[c&0xf]
			i += 2
		}
	}
	tid, sid := sc.TraceID(), sc.SpanID()
	put(tid[:])
	b[i] = '-'
	i++
	put(sid[:])
	b[i] = '-'
	i++
	put([]byte{byte(sc.TraceFlags() & (trace.FlagsSampled | trace.FlagsRandom))})
	return string(b[:])
}

// unrecorded reports whether span is a valid span neither sampled nor
// recording: a span of an operation the sampler left out. Its attempts'
// spans would record nothing either (a child of a span sampled out is
// sampled out by the default ParentBased sampler, and by a trace-ID ratio
// one, which decides alike for the whole trace), so none is started: that
// spares each attempt a span, its attributes and a context of its own.
// A sampler that would sample a child of a span it left out, on its name
// or attributes, sees no attempt span here.
func unrecorded(span trace.Span) bool {
	sc := span.SpanContext()
	return sc.IsValid() && !sc.IsSampled() && !span.IsRecording()
}

// countRetry counts an attempt that repeats an earlier one (cause set).
func (o *Observer) countRetry(ctx context.Context, r *route, cause string) {
	if cause == "" {
		return
	}
	o.retries.Add(ctx, 1, cached(r, r.byCause, cause, func() []attribute.KeyValue {
		return []attribute.KeyValue{AttrRetryCause.String(cause)}
	}).add...)
}

// endAttempt ends the attempt's span, counts it when it was sent and
// records its duration and replay.
func (o *Observer) endAttempt(ctx context.Context, res payonce.AttemptResult) {
	r := o.route(res.OperationInfo)
	span := trace.SpanFromContext(ctx)
	errType := ""
	switch {
	case !res.Sent:
		errType = "not_sent" // the signer failed: nothing left the client
	case res.Err != nil:
		errType = "transport"
		if res.RetryCause == "timeout" {
			errType = "timeout"
		}
	case res.StatusCode >= 400:
		errType = strconv.Itoa(res.StatusCode)
	}
	status := res.StatusCode
	ms := cached(r, r.byStatus, statusKey{status, errType}, func() []attribute.KeyValue {
		var kvs []attribute.KeyValue
		if status != 0 {
			kvs = append(kvs, AttrStatusCode.Int(status))
		}
		if errType != "" {
			kvs = append(kvs, AttrErrorType.String(errType))
		}
		return kvs
	})
	if span.IsRecording() {
		if errType != "" {
			span.SetStatus(codes.Error, errType)
		}
		first := res.Attempt == 1 // its span has none of its attributes yet
		switch {
		case res.Replayed || res.RequestID != "":
			var attrs []attribute.KeyValue
			if first {
				attrs = append(make([]attribute.KeyValue, 0, len(r.firstAttempt)+4), r.firstAttempt...)
			}
			attrs = answerAttrs(attrs, status, res.Replayed, res.RequestID)
			if errType != "" {
				attrs = append(attrs, AttrErrorType.String(errType))
			}
			span.SetAttributes(attrs...)
		case first:
			// The cached attributes, no slice built per attempt.
			span.SetAttributes(ms.first...)
		case len(ms.extra) > 0:
			span.SetAttributes(ms.extra...)
		}
		if res.RetryCause != "" {
			span.AddEvent("payonce.retry", trace.WithAttributes(AttrRetryCause.String(res.RetryCause),
				attribute.Float64("payonce.retry.wait_seconds", res.RetryWait.Seconds())))
		}
	}
	if !unrecorded(span) {
		// An unrecorded span here is the operation's, when StartAttempt
		// started none: it ends with the operation.
		span.End()
	}
	if res.Sent {
		o.attempts.Add(ctx, 1, r.base.add...)
	}
	if res.Replayed {
		o.replays.Add(ctx, 1, r.base.add...)
	}
	o.attemptTime.Record(ctx, res.Duration.Seconds(), ms.rec...)
}

// endOperation ends the operation's span and counts the operation by
// outcome.
func (o *Observer) endOperation(ctx context.Context, res payonce.OperationResult) {
	r := o.route(res.OperationInfo)
	span := trace.SpanFromContext(ctx)
	if span.IsRecording() {
		// The attributes of its start too, in one call: the span was
		// started without them (see opSpanStart).
		attrs := make([]attribute.KeyValue, 0, len(r.spanAttrs)+8)
		attrs = append(attrs, r.spanAttrs...)
		attrs = append(attrs, AttrOutcome.String(res.Outcome), AttrAttempts.Int(res.Attempts))
		if r.key.reference != "" {
			attrs = append(attrs, AttrFromJournal.Bool(res.FromJournal))
		}
		if res.Key != "" {
			attrs = append(attrs, AttrIdempotencyKey.String(res.Key))
		}
		attrs = answerAttrs(attrs, res.StatusCode, res.Replayed, res.RequestID)
		if res.Err != nil {
			attrs = append(attrs, AttrErrorType.String(res.Outcome))
			if code := errorCode(res.Err); code != "" {
				attrs = append(attrs, AttrErrorCode.String(code))
			}
			span.SetStatus(codes.Error, res.Outcome)
		}
		span.SetAttributes(attrs...)
	}
	span.End()
	outcome, journaled := res.Outcome, r.key.reference != ""
	k := outcome
	if journaled && res.FromJournal {
		k += "\x00journal"
	}
	ms := cached(r, r.byOutcome, k, func() []attribute.KeyValue {
		if journaled {
			return []attribute.KeyValue{AttrOutcome.String(outcome), AttrFromJournal.Bool(res.FromJournal)}
		}
		return []attribute.KeyValue{AttrOutcome.String(outcome)}
	})
	o.operations.Add(ctx, 1, ms.add...)
	o.opTime.Record(ctx, res.Duration.Seconds(), ms.rec...)
}

// answerAttrs appends what an answer said: its status, whether it was a
// replay, its request ID (each only when there is one).
func answerAttrs(attrs []attribute.KeyValue, status int, replayed bool, requestID string) []attribute.KeyValue {
	if status != 0 {
		attrs = append(attrs, AttrStatusCode.Int(status))
	}
	if replayed {
		attrs = append(attrs, AttrReplayed.Bool(true))
	}
	if requestID != "" {
		attrs = append(attrs, AttrRequestID.String(requestID))
	}
	return attrs
}

// errorCode is the provider's error code of err, redacted like the rest
// of the error.
func errorCode(err error) string {
	var e *payonce.APIError
	if errors.As(err, &e) {
		return redact.String(e.Code)
	}
	return ""
}

// attemptCarrier adds headers to one attempt through
// payonce.AttemptInfo.SetHeader, for a propagator's Inject; it reads none
// (Get and Keys see nothing), so what a propagator retains never exposes
// the attempt's signed headers.
type attemptCarrier struct{ info *payonce.AttemptInfo }

// Set adds the header key: value to the attempt, unless SetHeader refuses
// it.
func (c attemptCarrier) Set(key, value string) { c.info.SetHeader(key, value) }

// Get returns "": the carrier is write-only.
func (attemptCarrier) Get(string) string { return "" }

// Keys returns nil: the carrier is write-only.
func (attemptCarrier) Keys() []string { return nil }
