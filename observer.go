package payonce

import (
	"context"
	"errors"
	"net/http"
	"net/textproto"
	"strings"
	"sync"
	"time"

	"github.com/payonce/payonce/internal/corekit"
	"github.com/payonce/payonce/redact"
)

// Observer receives the life of every operation a Client runs: its start,
// each attempt's start and end, and its end. Its fields are hooks, each
// optional: a nil one is skipped, and without an observer (WithObserver)
// the client pays a nil check per hook and nothing else. An operation
// whose observers have no attempt hook builds no AttemptInfo or
// AttemptResult.
//
//	payonce.WithObserver(payonce.Observer{
//		EndAttempt: func(ctx context.Context, r payonce.AttemptResult) {
//			if r.RetryCause != "" {
//				log.Printf("%s attempt %d: retrying (%s)", r.Operation, r.Attempt, r.RetryCause)
//			}
//		},
//	})
//
// The hooks are called synchronously on the goroutine that runs the
// operation, so they must be quick and must not block. Nothing passed to
// them holds a card number, CVV, secret, token or query string: requests
// are described by their route template (see Route), errors are the
// SDK's redacted ones, and headers can only be added, never read.
type Observer struct {
	// StartOperation is called once, before the key is resolved and before
	// anything is sent. The context it returns (derived from ctx by value,
	// for example carrying a trace span) becomes the operation's: every
	// attempt's request carries it, and it is handed to EndOperation. A
	// context that does not end exactly when ctx does (one not derived
	// from it, or with a cancel or deadline of its own) is only handed to
	// EndOperation: no observer changes when an operation ends. A nil
	// context stands for ctx.
	StartOperation func(ctx context.Context, info OperationInfo) context.Context
	// StartAttempt is called for every attempt, before it is signed and
	// sent. info.SetHeader adds a header to this attempt only (W3C
	// traceparent, for example), so the signer sees it. The context it
	// returns (derived from ctx by value) is the attempt request's context
	// and is handed to EndAttempt; as for StartOperation, one that does
	// not end exactly when ctx does is only handed to EndAttempt.
	StartAttempt func(ctx context.Context, info AttemptInfo) context.Context
	// EndAttempt is called once per attempt, when its answer has been
	// read (or its failure is known) and the client has decided whether
	// to retry.
	EndAttempt func(ctx context.Context, res AttemptResult)
	// EndOperation is called once per operation, when Do returns.
	EndOperation func(ctx context.Context, res OperationResult)
}

// OperationInfo describes an operation as it starts.
type OperationInfo struct {
	Provider  string // "a55", "coinepay" or "" for a generic client
	Operation string // e.g. "charges.create"
	Method    string // HTTP method
	// Route is the request's path template, e.g.
	// "/api/v1/bank/wallet/charge/" or "/v1/charges/{id}": never a raw
	// resource ID, never the query string (see Request.Route).
	Route string
	Keyed bool // a business operation: one Idempotency-Key on every attempt
	// ReferenceTemplate is the journal reference's template
	// ("order-{id}/charge" for "order-42/charge"), "" without a reference;
	// past 256 distinct templates a client reports the route "other".
	// The raw reference is never reported.
	ReferenceTemplate string
	// RetryBudget is the client's retry budget (nil when disabled), for an
	// observer that reports the tokens left.
	RetryBudget *RetryBudget
}

// AttemptInfo describes one attempt as it starts.
type AttemptInfo struct {
	OperationInfo
	Key     string        // the operation's Idempotency-Key ("" for unkeyed calls)
	Attempt int           // 1 for the first attempt
	Wait    time.Duration // how long the client waited before this attempt
	// Cause is why this attempt repeats the last one: "" for the first,
	// else the retry cause of the last attempt's AttemptResult (for
	// example "Service Unavailable", "transport", "timeout"), or
	// "signer_recovery".
	Cause string

	// req is the attempt's request, kept as a pointer (which %v prints as
	// an address) so that no formatting of an AttemptInfo shows its
	// headers, the signer's included.
	req *http.Request
}

// SetHeader adds the header name: value to this attempt only, before it is
// signed. It refuses (and reports false) a header the attempt already
// carries and the ones the SDK or the signer own: Idempotency-Key,
// Authorization, Cookie, Host and Content-*. Propagators use it to inject
// trace context.
func (a AttemptInfo) SetHeader(name, value string) bool {
	if a.req == nil {
		return false
	}
	h := a.req.Header
	name = canonicalHeaderKey(name)
	if !observerMayAdd(name) || len(h[name]) > 0 {
		return false
	}
	h[name] = []string{value}
	return true
}

// observerMayAdd reports whether SetHeader accepts the canonical header
// name: not one the SDK, the signer or net/http's Client (the cookie
// jar's Cookie, a base URL's user info as Authorization) owns.
func observerMayAdd(name string) bool {
	switch {
	case name == "", name == corekit.HeaderIdempotencyKey, name == "Authorization", name == "Cookie", name == "Host",
		strings.HasPrefix(name, "Content-"):
		return false
	}
	return true
}

// canonicalHeaderKey is textproto.CanonicalMIMEHeaderKey, without its
// allocation for the names the W3C propagators set.
func canonicalHeaderKey(name string) string {
	switch name {
	case "traceparent":
		return "Traceparent"
	case "tracestate":
		return "Tracestate"
	case "baggage":
		return "Baggage"
	}
	return textproto.CanonicalMIMEHeaderKey(name)
}

// AttemptResult describes how one attempt ended.
type AttemptResult struct {
	OperationInfo
	Key     string
	Attempt int
	// Sent is false when the attempt failed before anything was sent (the
	// signer could not sign it): it takes a place in the retry schedule
	// but is not counted in Meta.Attempts.
	Sent       bool
	StatusCode int           // the answer's status; 0 when none arrived
	Replayed   bool          // the server marked the answer as a stored replay
	RequestID  string        // the provider's request ID, when it sent one
	Duration   time.Duration // from the attempt's start to its end
	// Err is the attempt's failure when no usable answer arrived (a reset
	// connection, an answer lost in transit, a timeout), without the URL;
	// nil when an answer was read, whatever its status.
	Err error
	// RetryCause is why the client decided to retry after this attempt ("",
	// when it did not): "transport", "timeout" or the status text of a
	// retryable answer ("Too Many Requests", "Service Unavailable", ...).
	RetryCause string
	RetryWait  time.Duration // the wait chosen before the retry
}

// OperationResult describes how an operation ended.
type OperationResult struct {
	OperationInfo
	Key        string    // the Idempotency-Key sent ("" for unkeyed calls)
	KeyCreated time.Time // when the key was first used (zero without a key)
	// Outcome is "success", the name of the *APIError's kind
	// ("idempotency_conflict", "card_declined", "canceled", ...) or "error":
	// a fixed set of names, safe as a metric attribute.
	Outcome    string
	Err        error         // the *APIError Do returned, nil on success
	Attempts   int           // attempts sent
	Retries    int           // attempts that repeated an earlier one (Attempts - 1 when any was sent)
	StatusCode int           // final HTTP status, 0 when none arrived
	Replayed   bool          // the final answer was a stored replay
	RequestID  string        // the final answer's request ID
	Duration   time.Duration // wall time of the operation
	// FromJournal: nothing was sent, the answer (a success or a recorded
	// failure) is the one the journal holds for the reference.
	FromJournal bool
}

// WithObserver sets the observers of every operation the client runs,
// replacing any set before: each hook calls them in order, the context one
// returns feeding the next (so a tracer's span is visible to the observers
// after it), and each observer's end hooks get the context its own start
// hook returned (so a tracer ends its own span). An Observer without hooks is skipped, and WithObserver()
// removes every observer.
func WithObserver(obs ...Observer) Option {
	return option(func(c *Client) error {
		c.observer = joinObservers(obs)
		return nil
	})
}

// joinObservers is obs as one Observer, each of its hooks calling the
// ones of obs that are set, in order; nil when none is. With several
// observers, each one's end hooks get the context its own start hook
// returned (the one it was given when it has none), so that a tracer
// ends its own span, not one a later observer derived from it.
func joinObservers(obs []Observer) *Observer {
	var set []Observer
	for _, o := range obs {
		if o.StartOperation != nil || o.StartAttempt != nil || o.EndAttempt != nil || o.EndOperation != nil {
			set = append(set, o)
		}
	}
	switch len(set) {
	case 0:
		return nil
	case 1:
		return &set[0]
	}
	j := &Observer{}
	j.StartOperation, j.EndOperation = joinPair(set, &joinKey{"operation"},
		func(o Observer) func(context.Context, OperationInfo) context.Context { return o.StartOperation },
		func(o Observer) func(context.Context, OperationResult) { return o.EndOperation })
	j.StartAttempt, j.EndAttempt = joinPair(set, &joinKey{"attempt"},
		func(o Observer) func(context.Context, AttemptInfo) context.Context { return o.StartAttempt },
		func(o Observer) func(context.Context, AttemptResult) { return o.EndAttempt })
	return j
}

// joinKey is the context key under which one joined set's start hook
// keeps the context each observer's start returned: a pointer made per
// set, so that a set never reads what another client's set kept in a
// context it was handed.
type joinKey struct{ hook string }

// joinPair joins one start hook and its end hook across set: the start
// hooks run in turn, the context one returns (ctx when it returns nil)
// handed to the next; each end hook gets the context its observer's start
// left, kept in the joined context under key. Either is nil when no
// observer has one.
func joinPair[I, R any](set []Observer, key *joinKey,
	start func(Observer) func(context.Context, I) context.Context,
	end func(Observer) func(context.Context, R),
) (func(context.Context, I) context.Context, func(context.Context, R)) {
	var hasStart, hasEnd bool
	for _, o := range set {
		hasStart = hasStart || start(o) != nil
		hasEnd = hasEnd || end(o) != nil
	}
	var js func(context.Context, I) context.Context
	var je func(context.Context, R)
	if hasStart {
		js = func(ctx context.Context, info I) context.Context {
			var own []context.Context
			if hasEnd {
				own = make([]context.Context, len(set))
			}
			for i, o := range set {
				if f := start(o); f != nil {
					if next := f(ctx, info); next != nil {
						ctx = next
					}
				}
				if own != nil {
					own[i] = ctx
				}
			}
			if own == nil {
				return ctx
			}
			return context.WithValue(ctx, key, own)
		}
	}
	if hasEnd {
		je = func(ctx context.Context, res R) {
			var own []context.Context
			if hasStart {
				own, _ = ctx.Value(key).([]context.Context)
			}
			for i, o := range set {
				if f := end(o); f != nil {
					c := ctx
					if i < len(own) {
						c = own[i]
					}
					f(c, res)
				}
			}
		}
	}
	return js, je
}

// outcome names how an operation ended, for metrics and span attributes:
// "success" for a nil error, else corekit.KindName of the *APIError's kind
// ("idempotency_conflict", "retries_exhausted", "card_declined",
// "canceled", ...), "error" for anything else. The set of names is fixed,
// so it is safe as a metric attribute.
func outcome(err error) string {
	if err == nil {
		return "success"
	}
	var e *APIError
	if !errors.As(err, &e) {
		return "error"
	}
	if name := KindName(e.Kind); name != "" {
		return name
	}
	return "error"
}

// route returns the route template of a request path: each segment that
// is not a word of the API is replaced by "{id}"
// ("/v1/customers/cusKxQzAbC/cards" becomes "/v1/customers/{id}/cards").
// A word is a segment of 1 to 32 bytes made of lowercase ASCII letters,
// possibly joined by single '-', '_' or '.' ("payment-methods",
// "charge_uuid"), a version ("v1" to "v999"), or a word in braces, a
// placeholder already in the template ("{id}", "{charge_uuid}"). Anything
// else is an ID: a
// UUID, a number, a segment holding a digit or a capital letter (base62,
// "ch_3N4x8"), a percent escape, a byte outside those, or a longer
// segment. The query string and the fragment are never part of a route.
// Observers name spans and label metrics with it, so that their
// cardinality stays that of the API; a Client also bounds the number of
// distinct routes it reports (256).
func route(path string) string { return routeOf(path, false) }

// maxRouteLen is the longest route a Client reports; a longer one is
// corekit.RouteOverflow.
const maxRouteLen = 256

// routeOf is Route; given marks a template the caller gave
// (Request.Route), whose words may hold capitals ("/v1/paymentMethods").
func routeOf(path string, given bool) string {
	if i := strings.IndexAny(path, "?#"); i >= 0 {
		path = path[:i]
	}
	if !hasIDSegment(path, given) {
		return path
	}
	var b strings.Builder
	b.Grow(len(path))
	for i, seg := range strings.Split(path, "/") {
		if i > 0 {
			b.WriteByte('/')
		}
		if idLike(seg, given) {
			b.WriteString("{id}")
		} else {
			b.WriteString(seg)
		}
	}
	return b.String()
}

func hasIDSegment(path string, given bool) bool {
	for path != "" {
		seg := path
		if i := strings.IndexByte(path, '/'); i >= 0 {
			seg, path = path[:i], path[i+1:]
		} else {
			path = ""
		}
		if idLike(seg, given) {
			return true
		}
	}
	return false
}

// maxWordLen is the longest segment a route keeps as a word.
const maxWordLen = 32

// idLike reports a path segment that names one resource rather than a
// kind of resource: any segment that is not empty, a placeholder, a
// version or a word (see Route). capitals lets a word hold capital
// letters.
func idLike(seg string, capitals bool) bool {
	switch {
	case seg == "":
		return false
	case len(seg) > maxWordLen+2:
		return true
	case seg[0] == '{':
		return !placeholder(seg, capitals)
	case version(seg):
		return false
	}
	return !word(seg, capitals)
}

// placeholder reports "{name}", name a word (see word): a placeholder
// cannot carry a number, nor a mixed-case ID in a path.
func placeholder(seg string, capitals bool) bool {
	return len(seg) >= 3 && seg[0] == '{' && seg[len(seg)-1] == '}' && word(seg[1:len(seg)-1], capitals)
}

// version reports "v" followed by one to three digits.
func version(seg string) bool {
	if len(seg) < 2 || len(seg) > 4 || seg[0] != 'v' {
		return false
	}
	for i := 1; i < len(seg); i++ {
		if seg[i] < '0' || seg[i] > '9' {
			return false
		}
	}
	return true
}

// word reports runs of letters (lowercase ones, or any ASCII letters with
// capitals) joined by single '-', '_' or '.', at most maxWordLen bytes.
func word(seg string, capitals bool) bool {
	if len(seg) > maxWordLen {
		return false
	}
	sep := true // a separator may not start the word or follow another
	for i := 0; i < len(seg); i++ {
		switch c := seg[i]; {
		case c >= 'a' && c <= 'z', capitals && c >= 'A' && c <= 'Z':
			sep = false
		case c == '-' || c == '_' || c == '.':
			if sep {
				return false
			}
			sep = true
		default:
			return false
		}
	}
	return !sep
}

// routeTable is the set of routes a Client has reported, bounded by
// corekit.MaxRoutes for derived routes and again for given ones, so that a
// caller's own templates never lose their names to paths the client
// derived routes from.
type routeTable struct {
	mu     sync.RWMutex
	routes map[routeEntry]struct{}
	n      [2]int // entries, derived and given
}

type routeEntry struct {
	route string
	given bool
}

// admit returns route when the table holds it or has room for it, else
// corekit.RouteOverflow.
func (t *routeTable) admit(route string, given bool) string {
	if len(route) > maxRouteLen {
		return corekit.RouteOverflow
	}
	k := routeEntry{route, given}
	t.mu.RLock()
	_, ok := t.routes[k]
	t.mu.RUnlock()
	if ok {
		return route
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.routes[k]; ok {
		return route
	}
	i := 0
	if given {
		i = 1
	}
	if t.n[i] >= corekit.MaxRoutes {
		return corekit.RouteOverflow
	}
	if t.routes == nil {
		t.routes = make(map[routeEntry]struct{})
	}
	t.routes[k] = struct{}{}
	t.n[i]++
	return route
}

// observation is what the observer hooks of one operation need, beyond
// the operation's own state: set only when the client has an observer.
type observation struct {
	info    OperationInfo
	ctx     context.Context // the operation's context, as StartOperation returned it
	attempt attemptObservation
}

// observedOperation is an operation and its observation in one
// allocation: Do builds one only when the client has an observer, so an
// operation without one carries no observation.
type observedOperation struct {
	operation
	ob observation
}

// attemptObservation is the attempt StartAttempt saw last, until
// EndAttempt.
type attemptObservation struct {
	open  bool
	n     int // its number: it was sent once op.attempts reached it
	ctx   context.Context
	start time.Time
	req   *http.Request // the attempt's own request
	added [4]string     // headers StartAttempt added, for redirect hops
}

// startObserving calls StartOperation and makes its context the
// operation's.
func (op *operation) startObserving() {
	c, req := op.c, op.req
	// A given template too: no query string, no raw ID; and a bounded
	// set of routes per client.
	given := req.Route != ""
	route := req.Path
	if given {
		route = req.Route
	}
	route = c.routes.admit(routeOf(route, given), given)
	ob := op.ob
	ob.info = OperationInfo{Provider: c.provider, Operation: req.Operation, Method: req.Method, Route: route,
		Keyed: req.Keyed, RetryBudget: c.budget}
	if op.opts.hasReference {
		ob.info.ReferenceTemplate = c.refs.admit(referenceTemplate(op.opts.reference), false)
	}
	ob.ctx = op.ctx
	start := c.observer.StartOperation
	if start == nil {
		return
	}
	ctx := start(op.ctx, ob.info)
	if ctx == nil {
		return
	}
	ob.ctx = ctx
	if sameCancellation(ctx, op.ctx) {
		op.ctx = ctx
	}
}

// fromJournal reports a failure answered from the journal.
func fromJournal(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.FromJournal
}

// endObserving closes an attempt still open and calls EndOperation.
func (op *operation) endObserving(m Meta, err error) {
	ob := op.ob
	if ob.attempt.open {
		op.endAttempt(nil, nil, false)
	}
	end := op.c.observer.EndOperation
	if end == nil {
		return
	}
	res := OperationResult{OperationInfo: ob.info, Key: op.key, Outcome: outcome(err), Attempts: op.attempts,
		StatusCode: m.StatusCode, Replayed: m.Replayed, RequestID: m.RequestID, Duration: time.Since(op.start),
		FromJournal: m.FromJournal || fromJournal(err)}
	if op.key != "" {
		res.KeyCreated = op.created
	}
	if op.tries > 1 {
		res.Retries = op.tries - 1
	}
	if err != nil {
		res.Err = err
		var e *APIError
		if errors.As(err, &e) {
			res.StatusCode, res.Replayed, res.RequestID = e.StatusCode, e.Replayed, e.RequestID
		}
	}
	end(ob.ctx, res)
}

// observeAttempt starts the observation of the attempt r is about to send
// (see startAttempt) or, for a redirect hop of the current attempt, gives
// the hop the headers the observer added to the attempt (its trace
// context).
func (op *operation) observeAttempt(r *http.Request, hop bool) *http.Request {
	if !hop {
		return op.startAttempt(r)
	}
	a := &op.ob.attempt
	if !a.open {
		return r
	}
	for _, k := range a.added {
		if v := a.req.Header[k]; k != "" && len(v) > 0 && len(r.Header[k]) == 0 {
			r.Header[k] = v
		}
	}
	return r
}

// startAttempt calls StartAttempt for the attempt r is about to send and
// returns r carrying the attempt's context. r's headers are the attempt's
// own map, holding only the operation's headers (see prepareRetry):
// headers the observer adds go to this attempt only. The attempt takes
// the retry plan that led to it. Without attempt hooks it only drops the
// plan; without StartAttempt it opens the attempt for EndAttempt.
func (op *operation) startAttempt(r *http.Request) *http.Request {
	ob, obs := op.ob, op.c.observer
	plan := op.plan
	op.plan = retryPlan{}
	n := op.attempts + 1
	if obs.StartAttempt == nil {
		if obs.EndAttempt != nil {
			ob.attempt = attemptObservation{open: true, n: n, ctx: r.Context(), start: time.Now(), req: r}
		}
		return r
	}
	info := AttemptInfo{OperationInfo: ob.info, Key: op.key, Attempt: n, Wait: plan.wait, Cause: plan.cause, req: r}
	before := len(r.Header)
	ctx := obs.StartAttempt(r.Context(), info)
	ob.attempt = attemptObservation{open: true, n: n, ctx: ctx, start: time.Now(), req: r}
	if len(r.Header) > before {
		n := 0
		for k := range r.Header {
			// Only a header SetHeader could have added: the map also
			// holds what net/http's Client put there before this
			// RoundTrip (the jar's Cookie for this URL, which a redirect
			// hop gets anew for its own).
			if !op.ownHeader(k) && observerMayAdd(k) && n < len(ob.attempt.added) {
				ob.attempt.added[n] = k
				n++
			}
		}
	}
	if ctx == nil || ctx == r.Context() {
		ob.attempt.ctx = r.Context()
		return r
	}
	if !sameCancellation(ctx, r.Context()) {
		return r // EndAttempt gets ctx; the request keeps the attempt's deadline
	}
	return r.WithContext(ctx)
}

// sameCancellation reports whether ctx, which an observer returned for
// parent, ends exactly when parent does: it shares parent's Done channel,
// as a context derived from parent by value (a trace span) does. Any
// other context, one not derived from parent (against the Observer
// contract) or one with a cancel or deadline of its own, is handed back
// to the observer's end hook but never carries the operation or the
// attempt, so that no observer can lift the attempt's timeout or the
// caller's cancellation.
func sameCancellation(ctx, parent context.Context) bool {
	return ctx.Done() == parent.Done()
}

// endAttempt calls EndAttempt for the open attempt, once the client has
// decided what follows it (op.plan).
func (op *operation) endAttempt(resp *http.Response, err error, retry bool) {
	ob := op.ob
	a := ob.attempt
	if !a.open {
		return
	}
	ob.attempt = attemptObservation{}
	end := op.c.observer.EndAttempt
	if end == nil {
		return
	}
	res := AttemptResult{OperationInfo: ob.info, Key: op.key, Attempt: a.n, Sent: op.attempts >= a.n, Duration: time.Since(a.start)}
	if err != nil {
		res.Err = redactedError{cleanTransportError(err), op.c.redactor}
	} else if resp != nil {
		res.StatusCode = resp.StatusCode
		res.Replayed = strings.EqualFold(resp.Header.Get(corekit.HeaderReplay), "true")
		res.RequestID = requestID(op.c.redactor(), resp.Header)
	}
	if retry && op.plan.cause != corekit.CauseSignerRecovery {
		res.RetryCause, res.RetryWait = op.plan.cause, op.plan.wait
	}
	end(a.ctx, res)
}

// redactedError is an attempt's failure as hooks see it: its text passes
// through redact.String, whatever a signer or a transport put in it, and
// the client's own secrets are cut from it.
type redactedError struct {
	err     error
	secrets func() *redact.Redactor
}

func (e redactedError) Error() string { return e.secrets().Redact(e.err.Error()) }
func (e redactedError) Unwrap() error { return e.err }
