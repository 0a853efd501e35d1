package a55fake

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/payonce/payonce/internal/fake/fakeserver"
)

// Provider is the provider name in the ledger and the attempt log.
const Provider = "a55"

// TokenPath is the OAuth2 token endpoint.
const TokenPath = "/oauth2/token"

const walletPrefix = "/api/v1/bank/wallet/"

// Config configures the fake.
type Config struct {
	Clients       map[string]string // client_id -> client_secret (default demo-client/demo-secret)
	TokenLifetime time.Duration     // default 1 h (expires_in 3600)
	RateLimit     int               // requests per RateWindow per client_id (default 100; negative: off)
	RateWindow    time.Duration     // default 60 s, rolling
	ReplayHeader  bool              // mark replays with X-Idempotent-Replay (default off: undocumented for A55)

	// Webhooks: a charge with a webhook_url gets a signed POST on every
	// status change (see webhooks.go).
	WebhookSecret       string        // signs deliveries (default DefaultWebhookSecret)
	WebhookTimeout      time.Duration // per attempt (default DefaultWebhookTimeout)
	WebhookQueue        int           // deliveries waiting at once (default DefaultWebhookQueue)
	WebhookAllowAnyHost bool          // also deliver to non-loopback hosts (default off: the fake is no proxy)
	// WebhookAllowSelf also delivers to the fake's own listener (default
	// off); its admin API is never a target, whatever this says.
	WebhookAllowSelf bool

	// Answers are standing answer rules (answers.go): in force from the
	// start and again after every Reset, ahead of those AddAnswer adds.
	// New panics on an invalid one; check them with AnswerRule.Validate.
	Answers []AnswerRule
}

// Fake is the A55 fake's state. Safe for concurrent use.
type Fake struct {
	e   *fakeserver.Engine
	cfg Config

	// tokMu guards tokens, walletCreds and lastSweep apart from mu:
	// every request reads its token, and would otherwise wait for the
	// charge another request is committing under mu.
	tokMu       sync.RWMutex
	tokens      map[string]token
	walletCreds map[string]walletCredentials // client_id of a wallet's credentials -> its secret and owner
	lastSweep   time.Time

	accounts map[string]Account // by client_id; made once, kept across Reset

	mu          sync.Mutex
	rateLimit   int
	rateOn      atomic.Bool // rateLimit > 0, read without mu by every request
	rateWindow  time.Duration
	hits        map[string][]time.Time
	wallets     map[string]*wallet
	walletOrder []string          // wallets created on request, oldest first, for the cap
	merchants   map[string]string // merchant UUID -> the client whose it is
	charges     map[string]*charge
	chargeOrder []*charge // every charge, oldest first, for the list
	hooks       *webhooks
	routes      routes
	answers     *answerRules // injected answers (answers.go), with their own lock

	// The fake clock's expiries (lifecycle.go).
	timers   timers
	nextDue  atomic.Int64 // Unix nanoseconds of the earliest end, 0 when none waits
	sweeping bool         // sweepLoop runs
	closed   bool
	stop     chan struct{}
	sweepWG  sync.WaitGroup
}

// New returns the fake on engine e.
func New(e *fakeserver.Engine, cfg Config) *Fake {
	if len(cfg.Clients) == 0 {
		cfg.Clients = map[string]string{"demo-client": "demo-secret"}
	}
	if cfg.TokenLifetime <= 0 {
		cfg.TokenLifetime = time.Hour
	}
	if cfg.RateLimit == 0 {
		cfg.RateLimit = 100
	}
	if cfg.RateWindow <= 0 {
		cfg.RateWindow = time.Minute
	}
	f := &Fake{e: e, cfg: cfg, rateLimit: cfg.RateLimit, rateWindow: cfg.RateWindow, stop: make(chan struct{}),
		answers: newAnswerRules(e.Seed())}
	f.routes = f.newRoutes()
	f.rateOn.Store(f.rateLimit > 0)
	f.hooks = newWebhooks(cfg, e.Clock(), func() string { return e.NewID("whd_") }, e.ListenAddrs)
	f.newAccounts()
	f.reset()
	e.OnReset(f.reset)
	e.OnClose(f.close)
	return f
}

func (f *Fake) reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tokMu.Lock()
	f.tokens = make(map[string]token)
	f.walletCreds = make(map[string]walletCredentials)
	f.tokMu.Unlock()
	f.hits = make(map[string][]time.Time)
	f.wallets = make(map[string]*wallet)
	f.walletOrder = nil
	f.merchants = make(map[string]string)
	f.charges = make(map[string]*charge)
	f.chargeOrder = nil
	f.timers = nil
	f.nextDue.Store(0)
	f.installAccountsLocked(f.e.Clock().Now().UTC())
	f.hooks.reset()
	f.answers.clear()
	for _, a := range f.cfg.Answers {
		if err := f.answers.add(a); err != nil {
			panic("a55fake: Config.Answers: " + err.Error())
		}
	}
}

// close stops the expiry goroutine and the webhook deliveries.
func (f *Fake) close() {
	f.mu.Lock()
	if !f.closed {
		f.closed = true
		close(f.stop)
	}
	f.mu.Unlock()
	f.sweepWG.Wait()
	f.hooks.close()
}

// KeyRules returns A55's documented Idempotency-Key rules, which the fake
// enforces on its own: optional, 16 to 128 printable ASCII characters
// without spaces, remembered for 24 hours.
func KeyRules() fakeserver.KeyRules {
	return fakeserver.KeyRules{MinLen: 16, MaxLen: 128, Window: 24 * time.Hour}
}

// Handler returns the A55 API (token endpoint and wallet/charge API). A55
// documents no size cap for stored answers: every 2xx answer is kept.
//
// A request carrying the fake's own OriginHeader (one of its webhook
// deliveries, come back to it) is refused with 403 unless
// Config.WebhookAllowSelf is set.
func (f *Fake) Handler() http.Handler {
	h := f.e.Handler(fakeserver.ProviderConfig{
		Name: Provider, Rules: KeyRules(), ReplayHeader: f.cfg.ReplayHeader, MaxStoredBody: -1,
	}, f)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !f.cfg.WebhookAllowSelf && f.hooks.fromSelf(r) {
			f.refuseSelf(w)
			return
		}
		f.sweep() // what the fake clock ended shows before the request is served
		h.ServeHTTP(w, r)
	})
}

// refuseSelf answers one of the fake's own webhook deliveries.
func (f *Fake) refuseSelf(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Date", f.e.Clock().Now().UTC().Format(http.TimeFormat))
	w.WriteHeader(http.StatusForbidden)
	_, _ = w.Write(adminError(http.StatusForbidden, "webhook_loop", "the fake does not deliver webhooks to itself").Body)
}

// Owns reports whether path belongs to the A55 API.
func Owns(path string) bool {
	return path == TokenPath || strings.HasPrefix(path, strings.TrimSuffix(walletPrefix, "/"))
}

// routes are the operations whose path holds no ID, built once: a
// request routes to one without allocating.
type routes struct {
	token, wallet, walletGet, chargeCreate, pixCreate, chargeGet, chargeList, capture, refund, cancel fakeserver.Route
}

func (f *Fake) newRoutes() routes {
	keyed := func(kind, tmpl string, h func(*fakeserver.Request) fakeserver.Response) fakeserver.Route {
		return fakeserver.Route{Kind: kind, Template: tmpl, Keyed: true, Handle: h}
	}
	return routes{
		token:        fakeserver.Route{Kind: "token", Template: TokenPath, Public: true, Handle: f.token},
		wallet:       keyed("wallet.create", walletPrefix, f.createWallet),
		walletGet:    fakeserver.Route{Kind: "wallet.get", Template: walletPrefix, Handle: f.getWallet},
		chargeCreate: keyed("charge.create", walletPrefix+"charge/", f.createCharge),
		pixCreate:    keyed("charge.create", walletPrefix+"charge/pix/", f.createPixCharge),
		chargeGet: fakeserver.Route{Kind: "charge.get", Template: walletPrefix + "charge", Handle: func(r *fakeserver.Request) fakeserver.Response {
			q := r.HTTP.URL.Query()
			return f.getCharge(r, q.Get("charge_uuid"), q.Get("wallet_uuid"), false)
		}},
		chargeList: fakeserver.Route{Kind: "charge.list", Template: walletPrefix + "charges", Handle: f.listCharges},
		capture:    keyed("charge.capture", walletPrefix+"charge/capture", f.captureHandler),
		refund:     keyed("charge.refund", walletPrefix+"charge/refund", f.guideMoveHandler(moveRefund)),
		cancel:     keyed("charge.cancel", walletPrefix+"charge/cancel", f.guideMoveHandler(moveCancel)),
	}
}

// Route implements fakeserver.Backend: the reference's paths, and the
// idempotency guide's body forms of refund and cancel.
func (f *Fake) Route(method, path string) (fakeserver.Route, fakeserver.Problem) {
	only := func(want string, r fakeserver.Route) (fakeserver.Route, fakeserver.Problem) {
		if method != want {
			return fakeserver.Route{}, fakeserver.ProblemMethodNotAllowed
		}
		return r, fakeserver.ProblemNone
	}
	if path == TokenPath {
		return only(http.MethodPost, f.routes.token)
	}
	var rest string
	switch {
	case path == strings.TrimSuffix(walletPrefix, "/"):
	case strings.HasPrefix(path, walletPrefix):
		rest = strings.Trim(path[len(walletPrefix):], "/")
	default:
		return fakeserver.Route{}, fakeserver.ProblemNotFound
	}
	switch rest {
	case "":
		if method == http.MethodGet {
			return f.routes.walletGet, fakeserver.ProblemNone
		}
		return only(http.MethodPost, f.routes.wallet)
	case "charge":
		if method == http.MethodGet {
			return f.routes.chargeGet, fakeserver.ProblemNone
		}
		return only(http.MethodPost, f.routes.chargeCreate)
	case "charge/pix":
		return only(http.MethodPost, f.routes.pixCreate)
	case "charges":
		return only(http.MethodGet, f.routes.chargeList)
	case "charge/capture":
		return only(http.MethodPost, f.routes.capture)
	case "charge/refund":
		return only(http.MethodPost, f.routes.refund)
	case "charge/cancel":
		return only(http.MethodPost, f.routes.cancel)
	}
	seg := strings.Split(rest, "/")
	switch {
	case len(seg) == 2 && seg[0] == "charge" && seg[1] != "":
		return only(http.MethodGet, fakeserver.Route{Kind: "charge.get", Template: walletPrefix + "charge/{charge_uuid}",
			Handle: func(r *fakeserver.Request) fakeserver.Response {
				return f.getCharge(r, seg[1], "", true)
			}})
	case len(seg) == 4 && seg[0] == "charge" && seg[1] != "" && seg[3] != "":
		switch seg[2] {
		case "refund":
			return only(http.MethodPost, fakeserver.Route{Kind: "charge.refund", Template: walletPrefix + "charge/{charge_uuid}/refund/{wallet_uuid}",
				Keyed: true, Handle: f.pathMoveHandler(moveRefund, seg[1], seg[3])})
		case "cancel":
			return only(http.MethodPost, fakeserver.Route{Kind: "charge.cancel", Template: walletPrefix + "charge/{charge_uuid}/cancel/{wallet_uuid}",
				Keyed: true, Handle: f.pathMoveHandler(moveCancel, seg[1], seg[3])})
		}
	}
	return fakeserver.Route{}, fakeserver.ProblemNotFound
}

// Problem implements fakeserver.Backend with A55's general error shape:
// {"error":{"code":..,"message":..,"details":[..]},"request_id":"req_.."}.
func (f *Fake) Problem(p fakeserver.Problem, status int, detail string) fakeserver.Response {
	code, msg := problemCode(p)
	if status == 0 {
		status = p.Status()
	}
	if detail != "" {
		msg += ": " + detail
	}
	return f.generalError(status, code, msg, nil)
}

func problemCode(p fakeserver.Problem) (code, msg string) {
	switch p {
	case fakeserver.ProblemKeyRequired:
		return "IDEMPOTENCY_KEY_REQUIRED", "Idempotency-Key header is required"
	case fakeserver.ProblemKeyTooShort:
		return "IDEMPOTENCY_KEY_TOO_SHORT", "Idempotency-Key must have at least 16 characters"
	case fakeserver.ProblemKeyTooLong:
		return "IDEMPOTENCY_KEY_TOO_LONG", "Idempotency-Key must have at most 128 characters"
	case fakeserver.ProblemKeyInvalidChars:
		return "IDEMPOTENCY_KEY_INVALID", "Idempotency-Key has invalid characters"
	case fakeserver.ProblemKeyConflict:
		return "IDEMPOTENCY_KEY_CONFLICT", "Idempotency-Key was already used with a different payload"
	case fakeserver.ProblemAnswerNotKept:
		return "IDEMPOTENCY_KEY_ANSWER_NOT_KEPT", "Idempotency-Key already executed; the answer is no longer kept"
	case fakeserver.ProblemMalformedJSON:
		return "INVALID_REQUEST", "malformed JSON body"
	case fakeserver.ProblemDuplicateKey:
		return "INVALID_JSON", "invalid JSON body"
	case fakeserver.ProblemInvalidRequest:
		return "VALIDATION_ERROR", "invalid request"
	case fakeserver.ProblemUnauthorized:
		return "UNAUTHORIZED", "missing or invalid bearer token"
	case fakeserver.ProblemNotFound:
		return "NOT_FOUND", "not found"
	case fakeserver.ProblemMethodNotAllowed:
		return "METHOD_NOT_ALLOWED", "method not allowed"
	case fakeserver.ProblemBodyTooLarge:
		return "PAYLOAD_TOO_LARGE", "request body too large"
	case fakeserver.ProblemRateLimited:
		return "RATE_LIMIT_EXCEEDED", "rate limit exceeded"
	}
	return "INTERNAL_ERROR", "internal server error"
}

// Detail is one field-level reason of a general error.
type Detail struct {
	Field  string `json:"field"`
	Reason string `json:"reason"`
}

func (f *Fake) generalError(status int, code, msg string, details []Detail) fakeserver.Response {
	if details == nil {
		details = []Detail{}
	}
	rid := f.e.NewID("req_")
	resp := fakeserver.JSON(status, map[string]any{
		"error":      map[string]any{"code": code, "message": msg, "details": details},
		"request_id": rid,
	})
	resp.Header = http.Header{"X-Request-Id": {rid}}
	return resp
}

// Decorate implements fakeserver.Backend: X-Request-Id and the
// X-RateLimit-* headers on every answer.
func (f *Fake) Decorate(h http.Header, req *fakeserver.Request) {
	if h.Get("X-Request-Id") == "" {
		h.Set("X-Request-Id", f.e.NewID("req_"))
	}
	limit, remaining, reset, on := f.rateState(req.Credential)
	if on {
		h.Set("X-RateLimit-Limit", strconv.Itoa(limit))
		h.Set("X-RateLimit-Remaining", strconv.Itoa(remaining))
		h.Set("X-RateLimit-Reset", strconv.FormatInt(reset.Unix(), 10))
	}
}
