package fakeserver

import (
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Problem is an engine-level failure that a Backend renders in its
// provider's error shape.
type Problem int

// The problems the engine (and the backends' helpers) raise.
const (
	ProblemNone             Problem = iota
	ProblemKeyRequired              // 400
	ProblemKeyTooShort              // 400
	ProblemKeyTooLong               // 400
	ProblemKeyInvalidChars          // 400
	ProblemKeyConflict              // 409
	ProblemAnswerNotKept            // 409: the key executed, its answer was not kept
	ProblemMalformedJSON            // 400
	ProblemInvalidRequest           // 400
	ProblemUnauthorized             // 401
	ProblemNotFound                 // 404
	ProblemMethodNotAllowed         // 405
	ProblemBodyTooLarge             // 413
	ProblemRateLimited              // 429
	ProblemInternal                 // 5xx
	// ProblemDuplicateKey: a JSON body holds an object key twice (compared
	// case-insensitively, at any depth); 400, before anything runs.
	ProblemDuplicateKey
)

// Status returns the HTTP status of a problem (503 for ProblemInternal).
func (p Problem) Status() int {
	switch p {
	case ProblemKeyRequired, ProblemKeyTooShort, ProblemKeyTooLong, ProblemKeyInvalidChars,
		ProblemMalformedJSON, ProblemInvalidRequest, ProblemDuplicateKey:
		return http.StatusBadRequest
	case ProblemKeyConflict, ProblemAnswerNotKept:
		return http.StatusConflict
	case ProblemUnauthorized:
		return http.StatusUnauthorized
	case ProblemNotFound:
		return http.StatusNotFound
	case ProblemMethodNotAllowed:
		return http.StatusMethodNotAllowed
	case ProblemBodyTooLarge:
		return http.StatusRequestEntityTooLarge
	case ProblemRateLimited:
		return http.StatusTooManyRequests
	}
	return http.StatusServiceUnavailable
}

// Route is one operation of a provider.
type Route struct {
	Kind string // ledger kind, e.g. "charge.create"
	// Template is the path with its IDs replaced by {names}, e.g.
	// "/api/v1/bank/wallet/charge/{charge_uuid}/refund/{wallet_uuid}";
	// the console groups by it ("" shows the kind instead).
	Template string
	Keyed    bool // takes an Idempotency-Key (the provider's KeyRules apply)
	Public   bool // no authentication (the OAuth2 token endpoint)
	Handle   func(*Request) Response
}

// Request is what an operation handler sees.
type Request struct {
	HTTP       *http.Request
	Body       []byte // the whole body, at most MaxRequestBody bytes
	Key        string // the Idempotency-Key header, "" when absent
	Credential string // set by Authenticate: A55 client_id, Coinepay API key id
	Attempt    *Attempt

	logged bool
	eng    *Engine // where log records Attempt; nil: nowhere
	att    Attempt // what Attempt points to, allocated with the Request
}

// log records the attempt once, before the answer (or the dropped
// connection) reaches the client, so a test reading the attempt log right
// after its call sees every attempt the call made.
func (r *Request) log() {
	if r.logged || r.eng == nil {
		return
	}
	r.logged = true
	e, att := r.eng, r.Attempt
	e.attempts.Add(*att)
	e.stats.add(att)
	e.ops.observe(att)
}

// Decode unmarshals the JSON body into v. It reports whether the body was
// well-formed JSON; an empty body decodes as {} when allowEmpty.
func (r *Request) Decode(v any, allowEmpty bool) error {
	if len(r.Body) == 0 && allowEmpty {
		return nil
	}
	return json.Unmarshal(r.Body, v)
}

// Backend is what a provider plugs into the engine.
type Backend interface {
	// Route finds the operation for method and path, or answers
	// ProblemNotFound or ProblemMethodNotAllowed.
	Route(method, path string) (Route, Problem)
	// Authenticate checks the credentials of req (and may fill
	// req.Credential and req.Attempt); a non-nil answer is sent instead
	// of running the operation.
	Authenticate(req *Request) *Response
	// Problem renders an engine-level failure in the provider's shape.
	// detail is a human-readable hint that never holds a secret.
	Problem(p Problem, status int, detail string) Response
	// Decorate adds the provider's headers to every answer (request ID,
	// rate-limit headers). req.Credential may be "".
	Decorate(h http.Header, req *Request)
}

// Preempter is a Backend that may answer a keyed request itself before
// the idempotency store looks at its key: an answer the provider gives
// to the key whatever the store holds (A55's DUPLICATE_REQUEST, injected
// on demand). Such an answer runs nothing and is not stored.
type Preempter interface {
	// Preempt returns the answer to send instead of running req (its
	// route is keyed and it carries a key), or nil to go on.
	Preempt(req *Request) *Response
}

// ProviderConfig is the idempotency behaviour of one provider.
type ProviderConfig struct {
	Name          string // "a55" or "coinepay": ledger, attempt log, fault matching
	Rules         KeyRules
	ReplayHeader  bool // mark replays with X-Idempotent-Replay: true
	MaxStoredBody int  // default DefaultMaxStoredBody; negative: no cap
}

// Handler returns the HTTP handler of a provider served by the engine.
func (e *Engine) Handler(cfg ProviderConfig, b Backend) http.Handler {
	window := cfg.Rules.Window
	st := NewStore(StoreConfig{Clock: e.clock, Window: window, MaxBody: cfg.MaxStoredBody, MaxStored: e.maxOps})
	e.mu.Lock()
	e.stores = append(e.stores, st)
	e.providers = append(e.providers, cfg.Name)
	e.mu.Unlock()
	pre, _ := b.(Preempter)
	return &providerHandler{e: e, cfg: cfg, b: b, pre: pre, store: st}
}

type providerHandler struct {
	e     *Engine
	cfg   ProviderConfig
	b     Backend
	pre   Preempter // b, when it preempts; nil otherwise
	store *Store
	cred  atomic.Pointer[string] // the credential clipCredential clipped last
}

// MaxLogField is the most bytes the attempt log keeps of a path, key or
// header value; longer values are cut and marked with "...".
const MaxLogField = 160

// Clip returns at most MaxLogField bytes of s as a fresh string: a
// substring would keep the whole request line or header alive as long as
// the attempt log holds the attempt.
func Clip(s string) string {
	if len(s) > MaxLogField {
		return strings.Clone(s[:MaxLogField]) + "..."
	}
	return strings.Clone(s)
}

// clipMaskedAs is ClipMasked(s), returning known itself, without a copy,
// when that is what ClipMasked(s) is: the template of a route whose path
// holds no ID is a constant of the backend. It is what the request log,
// the admin API and the console show of a request's path.
func clipMaskedAs(s, known string) string {
	if len(s) > 2*MaxLogField {
		s = s[:2*MaxLogField]
	}
	if known != "" && s == known && cleanTemplate(known) {
		return known
	}
	v := MaskText(s)
	if known != "" && len(known) <= MaxLogField && v == known {
		return known
	}
	return Clip(v)
}

// cleanTemplates caches cleanTemplate for at most maxCleanTemplates
// templates (a backend has a few; the cap only bounds a backend that
// would make them up).
var (
	cleanTemplates  sync.Map // string -> bool
	nCleanTemplates atomic.Int32
)

const maxCleanTemplates = 256

// cleanTemplate reports whether ClipMasked(t) is t, as it is for a route
// template (a constant of the backend, with no card number).
func cleanTemplate(t string) bool {
	if v, ok := cleanTemplates.Load(t); ok {
		return v.(bool)
	}
	clean := len(t) <= MaxLogField && MaskText(t) == t
	if nCleanTemplates.Add(1) <= maxCleanTemplates {
		cleanTemplates.Store(t, clean)
	}
	return clean
}

// ServeHTTP runs a provider request through the pipeline: log the
// attempt, route, inject the faults that strike before the body is read,
// read the body, admit the request (route, credentials, key), screen the
// body, let the backend preempt it, execute it once per key, then answer.
func (h *providerHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	at := h.e.clock.Now()
	key := r.Header.Get(HeaderIdempotencyKey)
	if h.e.documented.Load() {
		documentedRequest(r)
	}
	// Routed now so that every attempt, a faulted one too, names its
	// operation; a routing problem is still answered after the faults.
	route, prob := h.b.Route(r.Method, r.URL.Path)
	req := h.newRequest(r, key, at, route, prob == ProblemNone)
	defer req.log() // the paths that send nothing
	fault := h.e.faults.Pick(h.cfg.Name, r.URL.Path, key)
	if fault != nil && fault.Kind != DropAfterCommit && fault.Kind != Delay && fault.Kind != RefuseBeforeCommit {
		req.Attempt.Fault = fault.Kind // applied now; the other two only once the request gets that far
	}
	h.e.sleep(r.Context(), h.e.getLatency())
	if fault != nil && h.injectBeforeRead(w, r, req, fault) {
		return
	}
	if !h.readBody(w, r, req) || !h.admit(w, req, route, prob) {
		return
	}
	scan := scanBody(req.Body)
	defer scan.release()
	if !h.screen(w, req, route, fault, scan.dupKey) || h.preempt(w, req, route) {
		return
	}
	resp, outcome, ok := h.execute(r, req, route, fault, &scan)
	if !ok {
		return // the client gave up while waiting for the first request
	}
	h.answer(w, r, req, fault, resp, outcome)
}

// newRequest starts the Request of r, received at, with the Attempt the
// log records of it, naming the route when routed.
func (h *providerHandler) newRequest(r *http.Request, key string, at time.Time, route Route, routed bool) *Request {
	req := &Request{HTTP: r, Key: key, eng: h.e}
	req.att = Attempt{Time: at, Provider: h.cfg.Name, Method: methodName(r.Method), IdempotencyKey: Clip(key)}
	if routed {
		req.att.Kind, req.att.Route = route.Kind, route.Template
		req.att.Path = clipMaskedAs(r.URL.Path, route.Template)
	} else {
		req.att.Path = ClipMasked(r.URL.Path)
	}
	req.Attempt = &req.att
	return req
}

// methodName is Clip(m), without a copy for the usual methods.
func methodName(m string) string {
	switch m {
	case http.MethodGet:
		return http.MethodGet
	case http.MethodPost:
		return http.MethodPost
	case http.MethodPut:
		return http.MethodPut
	case http.MethodDelete:
		return http.MethodDelete
	case http.MethodPatch:
		return http.MethodPatch
	case http.MethodHead:
		return http.MethodHead
	}
	return Clip(m)
}

// clipCredential is Clip(c), without a copy when c is the credential it
// clipped last (a fake's clients are few).
func (h *providerHandler) clipCredential(c string) string {
	if last := h.cred.Load(); last != nil && *last == c {
		return *last
	}
	v := Clip(c)
	h.cred.Store(&v)
	return v
}

// injectBeforeRead applies a fault that strikes before the body is read
// (a reset, a hang, a rate limit, an error) and reports whether it
// answered or dropped the request.
func (h *providerHandler) injectBeforeRead(w http.ResponseWriter, r *http.Request, req *Request, fault *Fault) bool {
	switch fault.Kind {
	case ResetBeforeRead:
		req.log()
		abortConn(w, r, true)
	case Hang:
		// Drain the body first: only then does net/http watch the
		// connection and cancel ctx when the client gives up.
		_, _ = io.Copy(io.Discard, http.MaxBytesReader(w, r.Body, MaxRequestBody))
		select {
		case <-r.Context().Done():
		case <-h.e.closing:
		}
		req.log()
		abortConn(w, r, false)
	case RateLimit:
		resp := h.b.Problem(ProblemRateLimited, http.StatusTooManyRequests, "injected rate limit")
		if resp.Header == nil {
			resp.Header = http.Header{}
		}
		resp.Header.Set("Retry-After", strconv.Itoa(fault.RetryAfter))
		h.write(w, req, resp, false)
	case ErrorBeforeCommit:
		h.write(w, req, h.b.Problem(ProblemInternal, fault.Status, "injected failure before commit"), false)
	default:
		return false
	}
	return true
}

// readBody reads the whole body into req.Body and reports whether it
// could; a body over MaxRequestBody is answered.
func (h *providerHandler) readBody(w http.ResponseWriter, r *http.Request, req *Request) bool {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxRequestBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			h.write(w, req, h.b.Problem(ProblemBodyTooLarge, 0, "request body over 1 MiB"), false)
		}
		return false // or the client went away
	}
	req.Body = body
	return true
}

// admit answers a routing problem, refused credentials or a key the
// provider's rules refuse, and reports whether the request may go on.
func (h *providerHandler) admit(w http.ResponseWriter, req *Request, route Route, prob Problem) bool {
	if prob != ProblemNone {
		h.write(w, req, h.b.Problem(prob, 0, ""), false)
		return false
	}
	if !route.Public {
		if resp := h.b.Authenticate(req); resp != nil {
			h.write(w, req, *resp, false)
			return false
		}
	}
	req.Attempt.Credential = h.clipCredential(req.Credential)
	if route.Keyed {
		if p, rule := h.cfg.Rules.Check(req.Key); p != ProblemNone {
			h.write(w, req, h.b.Problem(p, 0, rule), false)
			return false
		}
	}
	return true
}

// screen answers a body with a duplicate object key, or an injected
// refusal of a key not executed, and reports whether the request may go
// on to execute.
func (h *providerHandler) screen(w http.ResponseWriter, req *Request, route Route, fault *Fault, dupKey bool) bool {
	if dupKey {
		// Refused before the fingerprint or the handler sees it: they would
		// read the two keys differently.
		h.write(w, req, h.b.Problem(ProblemDuplicateKey, 0, "duplicate object key"), false)
		return false
	}
	if fault != nil && fault.Kind == RefuseBeforeCommit && !(route.Keyed && req.Key != "" && h.store.Holds(req.Credential, req.Key)) {
		// A provider refuses only a key it has not executed: one that
		// ran (or runs) answers as the store says.
		h.write(w, req, h.b.Problem(ProblemInvalidRequest, fault.Status, "injected refusal before commit"), false)
		return false
	}
	return true
}

// preempt sends the backend's own answer to a keyed request, when it has
// one, and reports whether it did.
func (h *providerHandler) preempt(w http.ResponseWriter, req *Request, route Route) bool {
	if h.pre == nil || !route.Keyed || req.Key == "" {
		return false
	}
	resp := h.pre.Preempt(req)
	if resp == nil {
		return false
	}
	h.write(w, req, *resp, false)
	return true
}

// execute runs the operation, through the store when it is keyed, with
// an injected delay before it; ok is false when the client gave up
// waiting for another request under the key.
func (h *providerHandler) execute(r *http.Request, req *Request, route Route, fault *Fault, scan *bodyScan) (resp Response, outcome Outcome, ok bool) {
	e, ctx, att := h.e, r.Context(), req.Attempt
	if fault != nil && fault.Kind == Delay {
		att.Fault = Delay
	}
	delayBefore := fault != nil && fault.Kind == Delay && !fault.After
	exec := func() Response {
		if delayBefore {
			delayBefore = false
			e.sleep(ctx, fault.Delay)
		}
		att.Executed = !route.Public // the token endpoint is no business operation
		return route.Handle(req)
	}
	outcome = Executed
	if route.Keyed && req.Key != "" {
		fp := fingerprintOfScan(r.Method, r.URL.Path, scan)
		var err error
		resp, outcome, err = h.store.Do(ctx, req.Credential, req.Key, fp, exec)
		if err != nil {
			return Response{}, outcome, false
		}
		switch outcome {
		case Conflict:
			att.Conflict = true
			resp = h.b.Problem(ProblemKeyConflict, 0, "")
		case Unavailable:
			resp = h.b.Problem(ProblemAnswerNotKept, 0, "the operation already executed under this key; its answer was not kept")
		}
	} else {
		resp = exec()
	}
	if delayBefore {
		e.sleep(ctx, fault.Delay)
	}
	att.Replayed = outcome == Replayed || outcome == Shared
	return resp, outcome, true
}

// answer sends resp after an injected delay, or drops the connection
// instead when the fault says so.
func (h *providerHandler) answer(w http.ResponseWriter, r *http.Request, req *Request, fault *Fault, resp Response, outcome Outcome) {
	if fault != nil && fault.Kind == Delay && fault.After {
		h.e.sleep(r.Context(), fault.Delay)
	}
	if fault != nil && fault.Kind == DropAfterCommit {
		req.Attempt.Fault = DropAfterCommit
		req.log()
		abortConn(w, r, false)
		return
	}
	h.write(w, req, resp, outcome == Replayed)
}

func (h *providerHandler) write(w http.ResponseWriter, req *Request, resp Response, replay bool) {
	hdr := w.Header()
	for k, v := range resp.Header {
		hdr[k] = v
	}
	hdr["Content-Type"] = jsonContentType
	hdr["Date"] = h.e.dateHeader()
	h.b.Decorate(hdr, req)
	if replay && h.cfg.ReplayHeader {
		hdr.Set(HeaderReplay, "true")
	}
	req.Attempt.ReplayHeader = hdr.Get(HeaderReplay) == "true"
	req.Attempt.RequestID = Clip(hdr.Get("X-Request-Id"))
	req.Attempt.Status = resp.Status
	req.log()
	if h.e.documented.Load() {
		resp.Body = withoutKeyEcho(resp.Body)
	}
	w.WriteHeader(resp.Status)
	_, _ = w.Write(resp.Body)
}

// jsonContentType is the Content-Type of every answer. It is shared by
// all of them: net/http only reads a header's values, and its length
// equals its capacity, so an Add elsewhere copies it.
var jsonContentType = []string{"application/json; charset=utf-8"}

// dateHeader returns the Date header's values at the engine's clock,
// formatted once per second rather than once per answer (it has
// one-second resolution). The slice is shared, as jsonContentType.
func (e *Engine) dateHeader() []string {
	now := e.clock.Now()
	sec := now.Unix()
	if d := e.date.Load(); d != nil && d.sec == sec {
		return d.value
	}
	d := &dateValue{sec: sec, value: []string{now.UTC().Format(http.TimeFormat)}}
	e.date.Store(d)
	return d.value
}

// dateValue is a formatted Date header and the Unix second it shows.
type dateValue struct {
	sec   int64
	value []string
}

// abortConn closes the connection without an answer. With rst it sets
// SO_LINGER 0 first, so the peer gets a TCP RST. HTTP/2 (or a writer that
// cannot be hijacked) is aborted with http.ErrAbortHandler.
func abortConn(w http.ResponseWriter, r *http.Request, rst bool) {
	if r.ProtoMajor == 1 {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			if tc, ok := conn.(*net.TCPConn); ok && rst {
				_ = tc.SetLinger(0)
			}
			_ = conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}

// JSON returns an answer with status and v encoded as JSON.
func JSON(status int, v any) Response {
	b, err := json.Marshal(v)
	if err != nil {
		return Response{Status: http.StatusInternalServerError, Body: []byte(`{"error":"encode"}`)}
	}
	return Response{Status: status, Body: b}
}
