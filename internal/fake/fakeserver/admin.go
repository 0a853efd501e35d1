package fakeserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// AdminPrefix is the path prefix of the admin API; no real API uses it.
const AdminPrefix = "/_fakepay/"

// AdminConfig wires the provider-specific admin endpoints and the access
// rules of the admin API and the console.
type AdminConfig struct {
	// SetBalance sets a Coinepay balance; nil answers 404 on /_fakepay/balance.
	SetBalance func(apiKey string, amount Decimal) error
	// Provider, when set, wraps the engine's admin API with a provider's
	// own admin calls (the A55 fake's webhooks), which then sit behind the
	// same access rules.
	Provider func(next http.Handler) http.Handler
	// Webhooks, when set, returns the webhook deliveries of a resource
	// (a charge UUID) for the console's operation detail, in the shape
	// the provider's admin call answers.
	Webhooks func(resourceID string) any
	// Token, when set, is required on every admin request and the
	// console (Authorization: Bearer, or the Basic password).
	Token string
	// Release, when set, is called by POST /_fakepay/release: a Go test
	// fake held open after its test failed stops waiting.
	Release func()
	// AllowRemote accepts requests whose Host is not localhost or a
	// loopback address (a server listening on another interface).
	AllowRemote bool
}

// AdminHandler returns the admin API, served under AdminPrefix
// (docs/testing.md has every shape):
//
//	GET    /_fakepay/ledger    {"operations":[...],"next":"..","last_seq":..}
//	                           ?idempotency_key=&kind=&provider=&since=&after=&limit=
//	GET    /_fakepay/requests  {"requests":[...],"next":".."}
//	                           ?idempotency_key=&provider=&after=&limit=
//	GET    /_fakepay/stats     {"requests":..,"executed":..,"replayed":..,"conflicts":..,"faults":..}
//	GET    /_fakepay/faults    {"rules":[...]}
//	POST   /_fakepay/faults    add a Rule
//	DELETE /_fakepay/faults    clear the rules; ?index=N removes one
//	GET    /_fakepay/clock     {"now":"..."}
//	POST   /_fakepay/clock     {"advance":"25h"} or {"set":"2030-01-01T00:00:00Z"}
//	POST   /_fakepay/balance   {"api_key":"demo-key","amount":"500.00"}
//	POST   /_fakepay/reset     empty all state
//	POST   /_fakepay/release   a held Go test fake stops waiting (404 when not held)
//
//	GET    /_fakepay/operations         one row per idempotency key, newest first
//	GET    /_fakepay/operations/{id}    a row with its attempts, ledger entries and webhooks
//	GET    /_fakepay/                   the console (HTML)
//
// Errors answer {"error":{"code":"..","message":".."}}. Every call, the
// console included, passes the access rules of AdminConfig first (loopback
// Host, admin token, no cross-site state change).
func (e *Engine) AdminHandler(cfg AdminConfig) http.Handler {
	var h http.Handler = &adminHandler{e: e, cfg: cfg}
	if cfg.Provider != nil {
		h = cfg.Provider(h)
	}
	g := newAdminGuard(cfg.Token, cfg.AllowRemote, nil)
	g.next = &consoleHandler{e: e, guard: g, cfg: cfg, next: h, page: consoleTemplate()}
	return g
}

type adminHandler struct {
	e   *Engine
	cfg AdminConfig
}

func (a *adminHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	resp := a.serve(r)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Date", a.e.clock.Now().UTC().Format(http.TimeFormat))
	w.WriteHeader(resp.Status)
	_, _ = w.Write(resp.Body)
}

func adminError(status int, code, msg string) Response {
	return JSON(status, map[string]any{"error": map[string]string{"code": code, "message": msg}})
}

// adminRequest is what an admin resource handler sees of its request.
type adminRequest struct {
	method string
	query  url.Values
	body   []byte // the whole body, at most MaxRequestBody bytes
}

// decode unmarshals the JSON body into v, refusing unknown fields; a
// non-nil answer is sent instead.
func (q adminRequest) decode(v any) *Response {
	dec := json.NewDecoder(bytes.NewReader(q.body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var syntax *json.SyntaxError
		var typ *json.UnmarshalTypeError
		if errors.As(err, &syntax) || errors.As(err, &typ) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
			strings.HasPrefix(err.Error(), "json: unknown field") {
			resp := adminError(http.StatusBadRequest, "invalid_json", "malformed JSON: "+err.Error())
			return &resp
		}
		// Well-formed JSON with a value a field refuses ("delay": "soon",
		// "amount": "-5").
		resp := adminError(http.StatusBadRequest, "invalid_request", err.Error())
		return &resp
	}
	return nil
}

// errMethodNotAllowed is the answer to a method an admin path does not take.
func errMethodNotAllowed() Response {
	return adminError(http.StatusMethodNotAllowed, "method_not_allowed", "method not allowed")
}

// adminRoutes maps an admin path (without AdminPrefix and slashes) to the
// method that answers it.
var adminRoutes = map[string]func(*adminHandler, adminRequest) Response{
	"operations": (*adminHandler).serveOperations,
	"ledger":     (*adminHandler).serveLedger,
	"stats":      (*adminHandler).serveStats,
	"requests":   (*adminHandler).serveRequests,
	"faults":     (*adminHandler).serveFaults,
	"clock":      (*adminHandler).serveClock,
	"balance":    (*adminHandler).serveBalance,
	"reset":      (*adminHandler).serveReset,
}

// serve reads the body of an admin request and hands it to the handler of
// its path.
func (a *adminHandler) serve(r *http.Request) Response {
	name := strings.Trim(strings.TrimPrefix(r.URL.Path, AdminPrefix), "/")
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, MaxRequestBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return adminError(http.StatusRequestEntityTooLarge, "body_too_large", "request body over 1 MiB")
		}
		return adminError(http.StatusBadRequest, "invalid_request", "request body could not be read")
	}
	if id, ok := strings.CutPrefix(name, "operations/"); ok {
		if r.Method != http.MethodGet {
			return errMethodNotAllowed()
		}
		return a.operation(id)
	}
	handle, ok := adminRoutes[name]
	if !ok {
		return adminError(http.StatusNotFound, "not_found", "unknown admin path")
	}
	return handle(a, adminRequest{method: r.Method, query: r.URL.Query(), body: body})
}

// serveOperations answers GET /_fakepay/operations.
func (a *adminHandler) serveOperations(q adminRequest) Response {
	if q.method != http.MethodGet {
		return errMethodNotAllowed()
	}
	return a.operations(q.query)
}

// serveLedger answers GET /_fakepay/ledger.
func (a *adminHandler) serveLedger(q adminRequest) Response {
	if q.method != http.MethodGet {
		return errMethodNotAllowed()
	}
	f, bad := ledgerFilter(q.query)
	if bad != nil {
		return *bad
	}
	ops, next := a.e.ledger.Page(f)
	return JSON(http.StatusOK, ledgerPage{Operations: ops, Next: cursor(next), LastSeq: a.e.ledger.LastSeq()})
}

// serveStats answers GET /_fakepay/stats.
func (a *adminHandler) serveStats(q adminRequest) Response {
	if q.method != http.MethodGet {
		return errMethodNotAllowed()
	}
	return JSON(http.StatusOK, a.e.Stats())
}

// serveRequests answers GET /_fakepay/requests.
func (a *adminHandler) serveRequests(q adminRequest) Response {
	if q.method != http.MethodGet {
		return errMethodNotAllowed()
	}
	after, limit, bad := pageParams(q.query, MaxAttemptPage)
	if bad != nil {
		return *bad
	}
	p := q.query.Get("provider")
	if p != "" && !a.e.servesProvider(p) {
		return adminError(http.StatusBadRequest, "invalid_request", "provider: not a provider this server serves")
	}
	atts, next := a.e.attempts.Page(after, limit, q.query.Get("idempotency_key"), p)
	return JSON(http.StatusOK, attemptPage{Requests: atts, Next: cursor(next)})
}

// serveFaults answers GET, POST and DELETE /_fakepay/faults.
func (a *adminHandler) serveFaults(q adminRequest) Response {
	switch q.method {
	case http.MethodGet:
		return JSON(http.StatusOK, map[string]any{"rules": a.e.faults.Rules()})
	case http.MethodPost:
		return a.addFault(q)
	case http.MethodDelete:
		return a.removeFaults(q)
	}
	return errMethodNotAllowed()
}

// addFault answers POST /_fakepay/faults: it adds the Rule in the body.
func (a *adminHandler) addFault(q adminRequest) Response {
	var rule Rule
	if bad := q.decode(&rule); bad != nil {
		return *bad
	}
	if rule.Provider != "" && !a.e.servesProvider(rule.Provider) {
		return adminError(http.StatusBadRequest, "invalid_rule", "provider: not a provider this server serves")
	}
	if err := a.e.faults.Add(rule); err != nil {
		return adminError(http.StatusBadRequest, "invalid_rule", err.Error())
	}
	return JSON(http.StatusCreated, map[string]any{"rules": a.e.faults.Rules()})
}

// removeFaults answers DELETE /_fakepay/faults: every rule, or the one
// at ?index=.
func (a *adminHandler) removeFaults(q adminRequest) Response {
	if s := q.query.Get("index"); s != "" {
		i, err := strconv.Atoi(s)
		if err != nil || !a.e.faults.Remove(i) {
			return adminError(http.StatusNotFound, "not_found", "index: no rule at that position")
		}
		return JSON(http.StatusOK, map[string]any{"rules": a.e.faults.Rules()})
	}
	a.e.faults.Clear()
	return JSON(http.StatusOK, map[string]any{"rules": []RuleState{}})
}

// serveClock answers GET and POST /_fakepay/clock with the clock's time,
// after a POST moved it.
func (a *adminHandler) serveClock(q adminRequest) Response {
	switch q.method {
	case http.MethodPost:
		if bad := a.moveClock(q); bad != nil {
			return *bad
		}
	case http.MethodGet:
	default:
		return errMethodNotAllowed()
	}
	return JSON(http.StatusOK, map[string]any{"now": a.e.clock.Now().UTC().Format(time.RFC3339Nano)})
}

// moveClock advances or sets the clock as the body of POST
// /_fakepay/clock says; a non-nil answer is sent instead of the time.
func (a *adminHandler) moveClock(q adminRequest) *Response {
	var req struct {
		Advance string    `json:"advance"`
		Set     time.Time `json:"set"`
	}
	if bad := q.decode(&req); bad != nil {
		return bad
	}
	var resp Response
	switch {
	case req.Advance != "" && !req.Set.IsZero():
		resp = adminError(http.StatusBadRequest, "invalid_request", "want advance or set, not both")
	case req.Advance != "":
		d, err := time.ParseDuration(req.Advance)
		if err != nil {
			resp = adminError(http.StatusBadRequest, "invalid_duration", "advance: want a duration such as \"25h\"")
			break
		}
		if err := a.e.clock.TryAdvance(d); err != nil {
			resp = adminError(http.StatusBadRequest, "clock_out_of_range", "advance: "+err.Error())
			break
		}
		return nil
	case !req.Set.IsZero():
		if err := a.e.clock.TrySet(req.Set); err != nil {
			resp = adminError(http.StatusBadRequest, "clock_out_of_range", "set: "+err.Error())
			break
		}
		return nil
	default:
		resp = adminError(http.StatusBadRequest, "invalid_request", "want advance or set")
	}
	return &resp
}

// serveBalance answers POST /_fakepay/balance (404 without a Coinepay fake).
func (a *adminHandler) serveBalance(q adminRequest) Response {
	if a.cfg.SetBalance == nil {
		return adminError(http.StatusNotFound, "not_found", "no Coinepay fake on this server")
	}
	if q.method != http.MethodPost {
		return errMethodNotAllowed()
	}
	var req struct {
		APIKey string   `json:"api_key"`
		Amount *Decimal `json:"amount"`
	}
	if bad := q.decode(&req); bad != nil {
		return *bad
	}
	if req.APIKey == "" || req.Amount == nil {
		return adminError(http.StatusBadRequest, "invalid_request", "api_key and amount are required")
	}
	if err := a.cfg.SetBalance(req.APIKey, *req.Amount); err != nil {
		return adminError(http.StatusNotFound, "not_found", err.Error())
	}
	return JSON(http.StatusOK, map[string]any{"api_key": req.APIKey, "amount": *req.Amount})
}

// serveReset answers POST /_fakepay/reset: it empties all state.
func (a *adminHandler) serveReset(q adminRequest) Response {
	if q.method != http.MethodPost {
		return errMethodNotAllowed()
	}
	a.e.Reset()
	return JSON(http.StatusOK, map[string]any{"reset": true})
}

// ErrUnknownAPIKey is returned by a SetBalance hook for a key it does not know.
var ErrUnknownAPIKey = errors.New("unknown api key")

// WithAdmin sends requests under AdminPrefix to admin and every other one to
// api. Unlike http.ServeMux it never answers on its own (ServeMux
// redirects unclean paths such as "/." with an HTML body), so every
// answer keeps the provider's JSON error shape.
func WithAdmin(admin, api http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, AdminPrefix) {
			admin.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})
}

// ledgerPage is the answer of GET /_fakepay/ledger.
type ledgerPage struct {
	Operations []Operation `json:"operations"`
	Next       string      `json:"next,omitempty"` // pass as ?after= for the next page
	LastSeq    uint64      `json:"last_seq"`       // Seq of the latest operation recorded
}

// attemptPage is the answer of GET /_fakepay/requests.
type attemptPage struct {
	Requests []Attempt `json:"requests"`
	Next     string    `json:"next,omitempty"`
}

func cursor(seq uint64) string {
	if seq == 0 {
		return ""
	}
	return strconv.FormatUint(seq, 10)
}

// pageParams reads ?after= and ?limit= (1..max).
func pageParams(q url.Values, max int) (after uint64, limit int, bad *Response) {
	if s := q.Get("after"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			resp := adminError(http.StatusBadRequest, "invalid_request", "after: want the next value of a previous page")
			return 0, 0, &resp
		}
		after = n
	}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > max {
			resp := adminError(http.StatusBadRequest, "invalid_request", "limit: want 1 to "+strconv.Itoa(max))
			return 0, 0, &resp
		}
		limit = n
	}
	return after, limit, nil
}

// ledgerFilter reads the ledger's query parameters.
func ledgerFilter(q url.Values) (LedgerFilter, *Response) {
	after, limit, bad := pageParams(q, MaxLedgerPage)
	if bad != nil {
		return LedgerFilter{}, bad
	}
	f := LedgerFilter{IdempotencyKey: q.Get("idempotency_key"), Kind: q.Get("kind"), Provider: q.Get("provider"),
		After: after, Limit: limit}
	if s := q.Get("since"); s != "" {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			resp := adminError(http.StatusBadRequest, "invalid_request", "since: want an RFC 3339 time such as 2030-01-01T00:00:00Z")
			return LedgerFilter{}, &resp
		}
		f.Since = t
	}
	return f, nil
}

// operations answers GET /_fakepay/operations.
func (a *adminHandler) operations(q url.Values) Response {
	f := OpFilter{Provider: q.Get("provider"), Key: q.Get("key"), Kind: q.Get("kind"), Status: q.Get("status"),
		Anomalies: q.Get("anomalies") == "1" || q.Get("anomalies") == "true"}
	if f.Provider != "" && !a.e.servesProvider(f.Provider) {
		return adminError(http.StatusBadRequest, "invalid_request", "provider: not a provider this server serves")
	}
	if s := q.Get("before"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return adminError(http.StatusBadRequest, "invalid_request", "before: want the next value of a previous page")
		}
		f.Before = n
	}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxOpPage {
			return adminError(http.StatusBadRequest, "invalid_request", "limit: want 1 to "+strconv.Itoa(MaxOpPage))
		}
		f.Limit = n
	}
	if s := q.Get("if_version"); s != "" && s == strconv.FormatUint(a.e.ops.version.Load(), 10) {
		return JSON(http.StatusOK, map[string]any{"unchanged": true, "version": a.e.ops.version.Load()})
	}
	return JSON(http.StatusOK, a.e.Operations(f))
}

// opDetail is the answer of GET /_fakepay/operations/{id}.
type opDetail struct {
	Operation OpSummary `json:"operation"`
	Attempts  []Attempt `json:"attempts"` // in order; the ones the request log still holds
	// AttemptsNotShown counts the row's attempts that are not listed: past
	// the first MaxDetailAttempts, or gone from the request log.
	AttemptsNotShown int            `json:"attempts_not_shown"`
	Ledger           []Operation    `json:"ledger"`
	Webhooks         []webhookGroup `json:"webhooks"`
}

// webhookGroup is the deliveries of one resource the operation touched,
// as the provider's admin call answers them, masked (MaskJSON): a card
// number, CVV, secret or token a provider put in a delivery is never
// shown.
type webhookGroup struct {
	Resource   string          `json:"resource"`
	Deliveries json.RawMessage `json:"deliveries"`
}

// maskedJSON is the JSON of v, masked; null when v has no JSON form.
func maskedJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("null")
	}
	return MaskJSON(b)
}

// operation answers GET /_fakepay/operations/{id}.
func (a *adminHandler) operation(s string) Response {
	id, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return adminError(http.StatusNotFound, "not_found", "unknown operation")
	}
	row, seqs, ok := a.e.ops.get(id)
	if !ok {
		return adminError(http.StatusNotFound, "not_found", "unknown operation (reset, or dropped by the cap)")
	}
	atts, _ := a.e.attempts.forKey(row.Provider, row.Credential, row.IdempotencyKey, MaxDetailAttempts)
	d := opDetail{Operation: row, Attempts: atts, Ledger: a.e.ledger.bySeqs(seqs), Webhooks: []webhookGroup{}}
	d.AttemptsNotShown = max(row.Attempts-len(d.Attempts), 0)
	if a.cfg.Webhooks != nil {
		seen := map[string]bool{}
		for _, op := range d.Ledger {
			if op.ID != "" && !seen[op.ID] {
				seen[op.ID] = true
				d.Webhooks = append(d.Webhooks, webhookGroup{Resource: op.ID, Deliveries: maskedJSON(a.cfg.Webhooks(op.ID))})
			}
		}
	}
	return JSON(http.StatusOK, d)
}
