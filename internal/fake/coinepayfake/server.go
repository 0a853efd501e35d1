package coinepayfake

import (
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/payonce/payonce/internal/fake/fakeserver"
)

// Provider is the provider name in the ledger and the attempt log.
const Provider = "coinepay"

// Paths of the card OpenAPI.
const (
	PathApply    = "/api/v1/openapi/card/apply"
	PathRecharge = "/api/v1/openapi/card/recharge"
	PathInfo     = "/api/v1/openapi/card/info"
	PathList     = "/api/v1/openapi/card/list"
	prefix       = "/api/v1/openapi/"
)

// Package is one entry of the card catalog.
type Package struct {
	HeaderID  string
	PackageID string
	Fee       fakeserver.Decimal
}

// Config configures the fake.
type Config struct {
	Keys              map[string]string   // API key -> secret (default demo-key/demo-secret)
	StartBalance      *fakeserver.Decimal // every key's starting balance (default 1000.00)
	Fee               *fakeserver.Decimal // fee per card when Catalog is empty (default 1.00)
	Catalog           []Package           // nil: any non-empty header_id/package_id at Fee
	TimestampWindow   time.Duration       // default 300 s
	NonceWindow       time.Duration       // default 600 s
	NoReplayHeader    bool                // drop X-Idempotent-Replay: true on replays
	MaxStoredResponse int                 // default 256 KB
}

// The defaults of Config.
var (
	DefaultStartBalance = fakeserver.MustDecimal("1000.00")
	DefaultFee          = fakeserver.MustDecimal("1.00")
)

// Fake is the Coinepay fake's state. Safe for concurrent use.
type Fake struct {
	e     *fakeserver.Engine
	cfg   Config
	start fakeserver.Decimal
	fee   fakeserver.Decimal

	mu       sync.Mutex
	verifier *verifier
	balances map[string]fakeserver.Decimal
	cards    map[string]*card
	order    map[string][]string // API key -> card IDs in creation order
	all      []string            // every card ID in creation order (for the cap)
}

// New returns the fake on engine e.
func New(e *fakeserver.Engine, cfg Config) *Fake {
	if len(cfg.Keys) == 0 {
		cfg.Keys = map[string]string{"demo-key": "demo-secret"}
	}
	f := &Fake{e: e, cfg: cfg, start: DefaultStartBalance, fee: DefaultFee}
	if cfg.StartBalance != nil {
		f.start = *cfg.StartBalance
	}
	if cfg.Fee != nil {
		f.fee = *cfg.Fee
	}
	f.reset()
	e.OnReset(f.reset)
	return f
}

func (f *Fake) reset() {
	tw, nw := f.cfg.TimestampWindow, f.cfg.NonceWindow
	if tw <= 0 {
		tw = 300 * time.Second
	}
	if nw <= 0 {
		nw = 600 * time.Second
	}
	v := newVerifier(f.cfg.Keys, f.e.Clock().Now, tw, nw)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.verifier = v
	f.balances = make(map[string]fakeserver.Decimal, len(f.cfg.Keys))
	for k := range f.cfg.Keys {
		f.balances[k] = f.start
	}
	f.cards = make(map[string]*card)
	f.order = make(map[string][]string)
	f.all = nil
}

// evictLocked drops the oldest cards over the engine's MaxOperations cap:
// info and recharge of a dropped card answer 404 and the list no longer
// holds it. Nothing runs twice: a repeated apply or recharge key is
// answered by the idempotency store, never by the card table.
func (f *Fake) evictLocked() {
	max := f.e.MaxOperations()
	if max <= 0 || len(f.all) <= max {
		return
	}
	drop := len(f.all) - max
	for _, id := range f.all[:drop] {
		c := f.cards[id]
		delete(f.cards, id)
		if c == nil {
			continue
		}
		if ids := f.order[c.apiKey]; len(ids) > 0 && ids[0] == id {
			f.order[c.apiKey] = ids[1:]
			if len(ids) == 1 {
				delete(f.order, c.apiKey)
			}
		}
	}
	clear(f.all[:drop]) // the backing array's head is freed when append next grows it
	f.all = f.all[drop:]
}

// KeyCharset is the URL-safe charset the fake accepts in an
// Idempotency-Key.
const KeyCharset = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:"

// KeyRules returns Coinepay's Idempotency-Key rules as the fake enforces
// them on its own: required on the keyed routes, at most 128 characters of
// KeyCharset, remembered for 24 hours.
func KeyRules() fakeserver.KeyRules {
	return fakeserver.KeyRules{Required: true, MaxLen: 128, Charset: KeyCharset, Window: 24 * time.Hour}
}

// Handler returns the card OpenAPI. An answer over MaxStoredResponse is
// not kept: a repeat of its key answers 409
// openapi_idempotency_answer_not_kept and never executes again.
func (f *Fake) Handler() http.Handler {
	return f.e.Handler(fakeserver.ProviderConfig{
		Name: Provider, Rules: KeyRules(), ReplayHeader: !f.cfg.NoReplayHeader,
		MaxStoredBody: f.cfg.MaxStoredResponse,
	}, f)
}

// Owns reports whether path belongs to the Coinepay API.
func Owns(path string) bool { return strings.HasPrefix(path, prefix) }

// Route implements fakeserver.Backend.
func (f *Fake) Route(method, path string) (fakeserver.Route, fakeserver.Problem) {
	path = strings.TrimSuffix(path, "/")
	var rt fakeserver.Route
	want := http.MethodPost
	switch path {
	case PathApply:
		rt = fakeserver.Route{Kind: "card.apply", Template: PathApply, Keyed: true, Handle: f.apply}
	case PathRecharge:
		rt = fakeserver.Route{Kind: "card.recharge", Template: PathRecharge, Keyed: true, Handle: f.recharge}
	case PathInfo:
		rt, want = fakeserver.Route{Kind: "card.info", Template: PathInfo, Handle: f.info}, http.MethodGet
	case PathList:
		rt, want = fakeserver.Route{Kind: "card.list", Template: PathList, Handle: f.list}, http.MethodGet
	default:
		return rt, fakeserver.ProblemNotFound
	}
	if method != want {
		return fakeserver.Route{}, fakeserver.ProblemMethodNotAllowed
	}
	return rt, fakeserver.ProblemNone
}

// Envelope renders Coinepay's answer shape:
// {"code":<status>,"message":..,"message_key":..,"data":<obj|null>}.
func Envelope(status int, key, msg string, data any) fakeserver.Response {
	return fakeserver.JSON(status, map[string]any{"code": status, "message": msg, "message_key": key, "data": data})
}

func ok(data any) fakeserver.Response { return Envelope(http.StatusOK, KeySuccess, "成功", data) }

// Problem implements fakeserver.Backend.
func (f *Fake) Problem(p fakeserver.Problem, status int, detail string) fakeserver.Response {
	if status == 0 {
		status = p.Status()
	}
	key, msg := problemKey(p)
	if detail != "" && p != fakeserver.ProblemKeyRequired && p != fakeserver.ProblemKeyConflict {
		msg += ": " + detail
	}
	return Envelope(status, key, msg, nil)
}

func problemKey(p fakeserver.Problem) (key, msg string) {
	switch p {
	case fakeserver.ProblemKeyRequired:
		return "openapi_idempotency_key_required", "缺少 Idempotency-Key 请求头"
	case fakeserver.ProblemKeyTooShort:
		return "openapi_idempotency_key_too_short", "Idempotency-Key 过短"
	case fakeserver.ProblemKeyTooLong:
		return "openapi_idempotency_key_too_long", "Idempotency-Key 超过 128 个字符"
	case fakeserver.ProblemKeyInvalidChars:
		return "openapi_idempotency_key_invalid_chars", "Idempotency-Key 含有非法字符"
	case fakeserver.ProblemKeyConflict:
		return "openapi_idempotency_key_conflict", "Idempotency-Key 冲突"
	case fakeserver.ProblemAnswerNotKept:
		return "openapi_idempotency_answer_not_kept", "该 Idempotency-Key 已执行，响应未保存"
	case fakeserver.ProblemMalformedJSON, fakeserver.ProblemDuplicateKey:
		return "openapi_invalid_json", "请求体不是合法的 JSON"
	case fakeserver.ProblemInvalidRequest:
		return KeyInvalidRequest, "请求参数错误"
	case fakeserver.ProblemUnauthorized:
		return CodeSignatureRequired, "缺少签名请求头"
	case fakeserver.ProblemNotFound:
		return KeyNotFound, "接口不存在"
	case fakeserver.ProblemMethodNotAllowed:
		return "openapi_method_not_allowed", "请求方法不允许"
	case fakeserver.ProblemBodyTooLarge:
		return "openapi_body_too_large", "请求体过大"
	case fakeserver.ProblemRateLimited:
		return "openapi_rate_limited", "请求过于频繁"
	}
	return "openapi_internal_error", "服务器内部错误"
}

// signatureMessage returns the message of a signature failure's key.
func signatureMessage(code string) string {
	switch code {
	case CodeSignatureRequired:
		return "缺少签名请求头"
	case CodeAPIKeyInvalid:
		return "API Key 无效"
	case CodeTimestampExpired:
		return "时间戳已过期"
	case CodeNonceReplayed:
		return "Nonce 已被使用"
	}
	return "签名无效"
}

// Authenticate implements fakeserver.Backend with the fake's own verifier
// on the fake clock.
func (f *Fake) Authenticate(r *fakeserver.Request) *fakeserver.Response {
	r.Attempt.Nonce = fakeserver.ClipMasked(r.HTTP.Header.Get(HeaderNonce))
	r.Attempt.Timestamp = fakeserver.ClipMasked(r.HTTP.Header.Get(HeaderTimestamp))
	f.mu.Lock()
	v := f.verifier
	f.mu.Unlock()
	keyID, code := v.verify(r.HTTP, r.Body)
	valid := code == ""
	r.Attempt.SignatureValid = &valid
	if !valid {
		resp := Envelope(http.StatusUnauthorized, code, signatureMessage(code), nil)
		return &resp
	}
	r.Credential = keyID
	return nil
}

// Decorate implements fakeserver.Backend (nothing to add).
func (f *Fake) Decorate(http.Header, *fakeserver.Request) {}

// SetBalance sets the balance of apiKey.
func (f *Fake) SetBalance(apiKey string, a fakeserver.Decimal) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, known := f.cfg.Keys[apiKey]; !known {
		return fakeserver.ErrUnknownAPIKey
	}
	f.balances[apiKey] = a
	return nil
}

// SetCardStatus sets the status of the card cardID, as Coinepay's own
// side of a card's life would (freezing it, closing it); false when no
// such card is kept.
func (f *Fake) SetCardStatus(cardID, status string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, found := f.cards[cardID]
	if found {
		c.Status = status
	}
	return found
}

// Balance returns the balance of apiKey.
func (f *Fake) Balance(apiKey string) (fakeserver.Decimal, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a, known := f.balances[apiKey]
	return a, known
}

// NonceCount returns how many nonces the verifier remembers.
func (f *Fake) NonceCount() int {
	f.mu.Lock()
	v := f.verifier
	f.mu.Unlock()
	return v.count()
}
