package fakeserver

import (
	"github.com/payonce/payonce/redact"

	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
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

	logged     bool
	logAttempt func()
}

// log records the attempt once, before the answer (or the dropped
// connection) reaches the client, so a test reading the attempt log right
// after its call sees every attempt the call made.
func (r *Request) log() {
	if r.logged || r.logAttempt == nil {
		return
	}
	r.logged = true
	r.logAttempt()
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
	return &providerHandler{e: e, cfg: cfg, b: b, store: st}
}

type providerHandler struct {
	e     *Engine
	cfg   ProviderConfig
	b     Backend
	store *Store
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

// clipRedacted is Clip of s with card numbers and secrets masked
// (redact.String): what the request log, the admin API and the
// console show of a request's path. It reads no more than twice what Clip
// keeps, so a path of 64 KiB costs what a short one does; a card number
// past that is cut by Clip anyway.
func clipRedacted(s string) string {
	if len(s) > 2*MaxLogField {
		s = s[:2*MaxLogField]
	}
	return Clip(redact.String(s))
}

func (h *providerHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e := h.e
	ctx := r.Context()
	key := r.Header.Get(HeaderIdempotencyKey)
	att := &Attempt{Time: e.clock.Now(), Provider: h.cfg.Name, Method: Clip(r.Method), Path: clipRedacted(r.URL.Path), IdempotencyKey: Clip(key)}
	req := &Request{HTTP: r, Key: key, Attempt: att, logAttempt: func() {
		e.attempts.Add(*att)
		e.stats.add(att)
		e.ops.observe(att)
	}}
	defer req.log() // the paths that send nothing
	// Routed now so that every attempt, a faulted one too, names its
	// operation; a routing problem is still answered after the faults.
	route, prob := h.b.Route(r.Method, r.URL.Path)
	if prob == ProblemNone {
		att.Kind, att.Route = route.Kind, route.Template
	}

	fault := e.faults.Pick(h.cfg.Name, r.URL.Path, key)
	if fault != nil && fault.Kind != DropAfterCommit && fault.Kind != Delay && fault.Kind != RefuseBeforeCommit {
		att.Fault = fault.Kind // applied now; the other two only once the request gets that far
	}
	e.sleep(ctx, e.getLatency())
	if fault != nil {
		switch fault.Kind {
		case ResetBeforeRead:
			req.log()
			abortConn(w, r, true)
			return
		case Hang:
			// Drain the body first: only then does net/http watch the
			// connection and cancel ctx when the client gives up.
			_, _ = io.Copy(io.Discard, http.MaxBytesReader(w, r.Body, MaxRequestBody))
			select {
			case <-ctx.Done():
			case <-e.closing:
			}
			req.log()
			abortConn(w, r, false)
			return
		case RateLimit:
			resp := h.b.Problem(ProblemRateLimited, http.StatusTooManyRequests, "injected rate limit")
			if resp.Header == nil {
				resp.Header = http.Header{}
			}
			resp.Header.Set("Retry-After", strconv.Itoa(fault.RetryAfter))
			h.write(w, req, resp, false)
			return
		case ErrorBeforeCommit:
			h.write(w, req, h.b.Problem(ProblemInternal, fault.Status, "injected failure before commit"), false)
			return
		}
	}

	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxRequestBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			h.write(w, req, h.b.Problem(ProblemBodyTooLarge, 0, "request body over 1 MiB"), false)
		}
		return // the client went away
	}
	req.Body = body

	if prob != ProblemNone {
		h.write(w, req, h.b.Problem(prob, 0, ""), false)
		return
	}
	if !route.Public {
		if resp := h.b.Authenticate(req); resp != nil {
			h.write(w, req, *resp, false)
			return
		}
	}
	att.Credential = Clip(req.Credential)
	if route.Keyed {
		if p, rule := h.cfg.Rules.Check(key); p != ProblemNone {
			h.write(w, req, h.b.Problem(p, 0, rule), false)
			return
		}
	}

	scan := scanBody(body)
	if scan.dupKey {
		// Refused before the fingerprint or the handler sees it: they would
		// read the two keys differently.
		h.write(w, req, h.b.Problem(ProblemDuplicateKey, 0, "duplicate object key"), false)
		return
	}
	if fault != nil && fault.Kind == RefuseBeforeCommit && !(route.Keyed && key != "" && h.store.Holds(req.Credential, key)) {
		// A provider refuses only a key it has not executed: one that
		// ran (or runs) answers as the store says.
		h.write(w, req, h.b.Problem(ProblemInvalidRequest, fault.Status, "injected refusal before commit"), false)
		return
	}
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
	var resp Response
	outcome := Executed
	if route.Keyed && key != "" {
		fp := fingerprintOfScan(r.Method, r.URL.Path, scan)
		resp, outcome, err = h.store.Do(ctx, req.Credential, key, fp, exec)
		if err != nil {
			return // the client gave up while waiting for the first request
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
	if fault != nil && fault.Kind == Delay && fault.After {
		e.sleep(ctx, fault.Delay)
	}
	if fault != nil && fault.Kind == DropAfterCommit {
		att.Fault = DropAfterCommit
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
	hdr.Set("Content-Type", "application/json; charset=utf-8")
	hdr.Set("Date", h.e.clock.Now().UTC().Format(http.TimeFormat))
	h.b.Decorate(hdr, req)
	if replay && h.cfg.ReplayHeader {
		hdr.Set(HeaderReplay, "true")
	}
	req.Attempt.ReplayHeader = hdr.Get(HeaderReplay) == "true"
	req.Attempt.RequestID = Clip(hdr.Get("X-Request-Id"))
	req.Attempt.Status = resp.Status
	req.log()
	w.WriteHeader(resp.Status)
	_, _ = w.Write(resp.Body)
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
