package a55fake

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/payonce/payonce/internal/fake/fakeserver"
)

// Answers A55 gives instead of the operation's own, on demand: the codes
// of A55's code-response page that are no decline (the sandbox's test
// cards give those) and the statuses of a move the acquirer finishes
// later. An AnswerRule makes the fake give one to the requests it
// matches, from Go (AddAnswer), the admin API (/_fakepay/a55/answers)
// or fakepay's -a55-answer flag.
const (
	// AnswerTimeout: the acquirer did not answer in time (code-response:
	// "check charge status before retrying"). Answered 504 in the
	// charge-level shape; with Executed the charge was made (or the move
	// made) all the same and the answer names it. Never stored under the
	// key: the same key sent again runs again.
	AnswerTimeout = "TIMEOUT"
	// AnswerDuplicateRequest: the key was already used ("use the
	// original response"). Answered 409 in the charge-level shape, naming
	// the charge the key made or moved last, whatever the idempotency
	// store holds for the key; nothing runs.
	AnswerDuplicateRequest = "DUPLICATE_REQUEST"
	// Answer3DSRequired: a credit card charge sent without
	// threeds_authentication needs 3DS ("redirect to 3DS challenge
	// URL"). The charge is made in status error with the code, and its
	// url_3ds leads to the fake's challenge page, which passes it as a
	// 3DS charge's. Answered 400 in the charge-level shape.
	Answer3DSRequired = "3DS_REQUIRED"
	// Answer3DSUnavailable: 3DS is down for a while ("retry after 60
	// seconds"). Answered 503; nothing runs, nothing is stored.
	Answer3DSUnavailable = "3DS_UNAVAILABLE"
	// AnswerProcessingError: an internal failure ("retry with exponential
	// backoff"). Answered 500; nothing runs, nothing is stored.
	AnswerProcessingError = "PROCESSING_ERROR"
)

// Shapes of an injected code's answer.
const (
	ShapeCharge  = "charge"  // {"charge_uuid","status":"error","message":[{code,source,description}]}
	ShapeGeneral = "general" // {"error":{"code","message","details"},"request_id"} (charge_uuid beside it when the answer names one)
)

// AnswerRule makes the fake answer the requests it matches with an A55
// code or status instead of the operation's own. It matches a request on
// every field set among Path (a trailing "*" matches a prefix) and
// IdempotencyKey, and only where the answer applies: Code AnswerTimeout,
// AnswerDuplicateRequest and AnswerProcessingError on a charge's create,
// capture, refund and cancel; Answer3DSRequired on a credit card charge
// with card fields and no threeds_authentication; Answer3DSUnavailable
// on a charge with card fields; Status pre_captured on a capture,
// refund_error on a refund. A request is answered only once it would
// run: a body the reference refuses gets its 422, a move the charge does
// not take its 409, and a key the idempotency store holds its stored
// answer (DUPLICATE_REQUEST alone answers ahead of the store). Nth then
// fires only on the nth matching request (1-based), Probability (0 < p <
// 1) fires at random under the engine's seed, Count (0: no cap) caps the
// firings; rules are tried in the order added, the first that fires
// wins. The JSON form is the admin API's:
//
//	{"code":"TIMEOUT","executed":true,"path":"/api/v1/bank/wallet/charge/","count":1}
//	{"code":"TIMEOUT","executed":true,"then":"declined","after":"5m"}
//	{"code":"DUPLICATE_REQUEST","http_status":400,"omit_charge_uuid":true}
//	{"status":"pre_captured","path":"/api/v1/bank/wallet/charge/capture/","after":"1h"}
type AnswerRule struct {
	Code   string `json:"code,omitempty"`   // one of the Answer* codes; or
	Status string `json:"status,omitempty"` // StatusPreCaptured or StatusRefundError

	Path           string  `json:"path,omitempty"`
	IdempotencyKey string  `json:"idempotency_key,omitempty"`
	Nth            int     `json:"nth,omitempty"`
	Probability    float64 `json:"probability,omitempty"`
	Count          int     `json:"count,omitempty"`

	// HTTPStatus is the answer's status: by default 504 for TIMEOUT, 409
	// for DUPLICATE_REQUEST, 400 for 3DS_REQUIRED, 503 for
	// 3DS_UNAVAILABLE, 500 for PROCESSING_ERROR, 200 for a status. A code
	// takes a 4xx or 5xx (DUPLICATE_REQUEST a 4xx; 3DS_REQUIRED a 4xx, or
	// 200, which the store keeps, so that the key answers the same for
	// good); a status only 200.
	HTTPStatus int `json:"http_status,omitempty"`
	// Executed (TIMEOUT only): the operation ran all the same: the charge
	// was made (the answer names it) or the move made. Without it nothing
	// ran and a create's answer names no charge.
	Executed bool `json:"executed,omitempty"`
	// Then (TIMEOUT with Executed, on a card charge with card fields and
	// no 3DS): where the charge ends: StatusConfirmed (the default;
	// captured, or authorised with capture false), StatusDeclined
	// (CARD_DECLINED) or StatusError (TIMEOUT).
	Then string `json:"then,omitempty"`
	// After: how long, on the fake clock, the charge waits before it
	// ends as Then (TIMEOUT with Executed: in status pending, the
	// acquirer's answer awaited), or before its capture is confirmed
	// (pre_captured: then paid). Zero: a TIMEOUT's charge ends at once,
	// a pre_captured one waits for the capture.confirmed event.
	After time.Duration `json:"-"` // JSON "after": "5m"
	// Hold (TIMEOUT with Executed): the charge stays pending until an
	// acquirer.* event ends it (Trigger, the admin API, the console).
	Hold bool `json:"hold,omitempty"`
	// OmitChargeUUID leaves charge_uuid out of the answer of TIMEOUT,
	// DUPLICATE_REQUEST or 3DS_REQUIRED, whatever ran.
	OmitChargeUUID bool `json:"omit_charge_uuid,omitempty"`
	// NoChallenge (3DS_REQUIRED): no url_3ds; the charge ends in status
	// error, nothing to pass.
	NoChallenge bool `json:"no_challenge,omitempty"`
	// Shape of a code's answer: ShapeCharge (the default) or ShapeGeneral.
	Shape string `json:"shape,omitempty"`
	// RetryAfter adds Retry-After: RetryAfter seconds to a code's answer.
	RetryAfter int `json:"retry_after,omitempty"`
}

// MarshalJSON writes After as a duration string such as "5m".
func (a AnswerRule) MarshalJSON() ([]byte, error) {
	type plain AnswerRule
	j := struct {
		plain
		After string `json:"after,omitempty"`
	}{plain: plain(a)}
	if a.After != 0 {
		j.After = a.After.String()
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads After as a duration string ("5m") and refuses a
// member the rule does not have: a misspelt one would leave a rule that
// does not do what it says.
func (a *AnswerRule) UnmarshalJSON(b []byte) error {
	type plain AnswerRule
	var j struct {
		plain
		After string `json:"after,omitempty"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return err
	}
	*a = AnswerRule(j.plain)
	if j.After != "" {
		d, err := time.ParseDuration(j.After)
		if err != nil {
			return errors.New(`after: want a duration such as "5m"`)
		}
		a.After = d
	}
	return nil
}

// ErrInvalidAnswer is the error of an AnswerRule the fake cannot apply.
var ErrInvalidAnswer = errors.New("invalid answer rule")

// Validate checks the rule and fills its HTTP status's default.
func (a *AnswerRule) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidAnswer, fmt.Sprintf(format, args...))
	}
	lo, hi, def := 400, 599, 0
	switch {
	case a.Code != "" && a.Status != "":
		return bad("want code or status, not both")
	case a.Code == "" && a.Status == "":
		return bad("want code (%s) or status (%s, %s)", strings.Join(answerCodes, ", "), StatusPreCaptured, StatusRefundError)
	case a.Status == StatusPreCaptured, a.Status == StatusRefundError:
		lo, hi, def = 200, 200, http.StatusOK
	case a.Status != "":
		return bad("status %q: want %s or %s", a.Status, StatusPreCaptured, StatusRefundError)
	case a.Code == AnswerTimeout:
		def = http.StatusGatewayTimeout
	case a.Code == AnswerDuplicateRequest:
		hi, def = 499, http.StatusConflict
	case a.Code == Answer3DSRequired:
		hi, def = 499, http.StatusBadRequest
	case a.Code == Answer3DSUnavailable:
		def = http.StatusServiceUnavailable
	case a.Code == AnswerProcessingError:
		def = http.StatusInternalServerError
	default:
		return bad("code %q: want one of %s", a.Code, strings.Join(answerCodes, ", "))
	}
	if a.HTTPStatus == 0 {
		a.HTTPStatus = def
	}
	timeout := a.Code == AnswerTimeout
	switch {
	case (a.HTTPStatus < lo || a.HTTPStatus > hi) && !(a.Code == Answer3DSRequired && a.HTTPStatus == http.StatusOK):
		return bad("http_status %d: %s answers %d..%d", a.HTTPStatus, a.Code+a.Status, lo, hi)
	case a.Executed && !timeout:
		return bad("executed is for %s (%s always makes its charge, the others never run)", AnswerTimeout, Answer3DSRequired)
	case a.Then != "" && a.Then != StatusConfirmed && a.Then != StatusDeclined && a.Then != StatusError:
		return bad("then %q: want %s, %s or %s", a.Then, StatusConfirmed, StatusDeclined, StatusError)
	case (a.Then != "" || a.Hold) && !(timeout && a.Executed):
		return bad("then and hold are for %s with executed", AnswerTimeout)
	case a.After < 0:
		return bad("after must not be negative")
	case a.After > 0 && !(timeout && a.Executed) && a.Status != StatusPreCaptured:
		return bad("after is for %s with executed, and for status %s", AnswerTimeout, StatusPreCaptured)
	case a.After > 0 && a.Hold:
		return bad("want after or hold, not both")
	case a.OmitChargeUUID && a.Code != AnswerTimeout && a.Code != AnswerDuplicateRequest && a.Code != Answer3DSRequired:
		return bad("omit_charge_uuid is for %s, %s and %s", AnswerTimeout, AnswerDuplicateRequest, Answer3DSRequired)
	case a.NoChallenge && a.Code != Answer3DSRequired:
		return bad("no_challenge is for %s", Answer3DSRequired)
	case a.Shape != "" && a.Shape != ShapeCharge && a.Shape != ShapeGeneral:
		return bad("shape %q: want %s or %s", a.Shape, ShapeCharge, ShapeGeneral)
	case a.Shape != "" && a.Status != "", a.RetryAfter != 0 && a.Status != "":
		return bad("shape and retry_after are for a code's answer")
	case a.RetryAfter < 0:
		return bad("retry_after must not be negative")
	case a.Nth < 0 || a.Count < 0:
		return bad("nth and count must not be negative")
	case !(a.Probability >= 0 && a.Probability <= 1): // NaN too
		return bad("probability must be within 0..1")
	case len(a.Path) > fakeserver.MaxRuleField || len(a.IdempotencyKey) > fakeserver.MaxRuleField:
		return bad("path and idempotency_key must be at most %d bytes", fakeserver.MaxRuleField)
	}
	return nil
}

// answerCodes are the codes an AnswerRule gives.
var answerCodes = []string{AnswerTimeout, AnswerDuplicateRequest, Answer3DSRequired, Answer3DSUnavailable, AnswerProcessingError}

// AnswerState is a rule with its counters, as the admin API lists it.
type AnswerState struct {
	AnswerRule
	Seen  int `json:"seen"`  // matching requests so far
	Fired int `json:"fired"` // times it answered
}

// MarshalJSON writes the rule's members next to seen and fired.
func (s AnswerState) MarshalJSON() ([]byte, error) {
	rule, err := s.AnswerRule.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(rule, &m); err != nil {
		return nil, err
	}
	m["seen"], m["fired"] = s.Seen, s.Fired
	return json.Marshal(m)
}

// MaxAnswerRules is how many answer rules the fake holds at once.
const MaxAnswerRules = 1000

// answerRules holds the rules; every random choice comes from one seeded
// source, so a run with the same seed and request order answers the same.
type answerRules struct {
	mu    sync.Mutex
	rng   *rand.Rand
	rules []*AnswerState
}

func newAnswerRules(seed uint64) *answerRules {
	return &answerRules{rng: rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d))}
}

func (rs *answerRules) add(a AnswerRule) error {
	if err := a.Validate(); err != nil {
		return err
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if len(rs.rules) >= MaxAnswerRules {
		return fmt.Errorf("%w: at most %d rules: clear them first", ErrInvalidAnswer, MaxAnswerRules)
	}
	rs.rules = append(rs.rules, &AnswerState{AnswerRule: a})
	return nil
}

func (rs *answerRules) list() []AnswerState {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	out := make([]AnswerState, len(rs.rules))
	for i, r := range rs.rules {
		out[i] = *r
	}
	return out
}

func (rs *answerRules) clear() {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.rules = nil
}

func (rs *answerRules) remove(i int) bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if i < 0 || i >= len(rs.rules) {
		return false
	}
	rs.rules = slices.Delete(rs.rules, i, i+1)
	return true
}

// site is where a request would run, for the rules that apply there.
type site struct {
	move     move // moveCreate, moveCapture, moveRefund or moveCancel
	card     bool // a create with card fields
	credit3D bool // a credit card create with card fields and no threeds_authentication
}

// moveCreate is a charge's creation, as a site.
const moveCreate move = -1

// applies reports whether the rule's answer applies at s.
func (a *AnswerRule) applies(s site) bool {
	switch a.Code {
	case AnswerTimeout, AnswerProcessingError:
		return true
	case Answer3DSRequired:
		return s.move == moveCreate && s.credit3D
	case Answer3DSUnavailable:
		return s.move == moveCreate && s.card
	case AnswerDuplicateRequest:
		return false // answered ahead of the store: Preempt
	}
	return a.Status == StatusPreCaptured && s.move == moveCapture || a.Status == StatusRefundError && s.move == moveRefund
}

// matches reports whether the rule selects a request to path under key.
func (a *AnswerRule) matches(path, key string) bool {
	if a.Path != "" {
		if p, ok := strings.CutSuffix(a.Path, "*"); ok {
			if !strings.HasPrefix(path, p) {
				return false
			}
		} else if a.Path != path {
			return false
		}
	}
	return a.IdempotencyKey == "" || a.IdempotencyKey == key
}

// pick returns the answer for a request to path under key that would run
// at s (duplicate: the DUPLICATE_REQUEST rules instead), or nil. Every
// rule that matches and applies counts the request; the first that fires
// wins.
func (rs *answerRules) pick(s site, duplicate bool, path, key string) *AnswerRule {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	var chosen *AnswerRule
	for _, st := range rs.rules {
		a := &st.AnswerRule
		if !a.matches(path, key) || (a.Code == AnswerDuplicateRequest) != duplicate || (!duplicate && !a.applies(s)) {
			continue
		}
		st.Seen++
		if chosen != nil || (a.Count > 0 && st.Fired >= a.Count) || (a.Nth > 0 && st.Seen != a.Nth) {
			continue
		}
		if a.Probability > 0 && a.Probability < 1 && rs.rng.Float64() >= a.Probability {
			continue
		}
		st.Fired++
		rule := *a
		chosen = &rule
	}
	return chosen
}

// AddAnswer adds an answer rule; an invalid rule is an error wrapping
// ErrInvalidAnswer. Reset removes the rules (but Config.Answers).
func (f *Fake) AddAnswer(a AnswerRule) error { return f.answers.add(a) }

// Answers returns the answer rules with their counters, in the order
// they are tried.
func (f *Fake) Answers() []AnswerState { return f.answers.list() }

// ClearAnswers removes every answer rule.
func (f *Fake) ClearAnswers() { f.answers.clear() }

// answerFor returns the answer rule that fires for r at s, or nil, and
// marks the attempt with it.
func (f *Fake) answerFor(r *fakeserver.Request, s site) *AnswerRule {
	a := f.answers.pick(s, false, r.HTTP.URL.Path, r.Key)
	if a != nil {
		r.Attempt.Answer = a.Code + a.Status
	}
	return a
}

// Preempt implements fakeserver.Preempter: a DUPLICATE_REQUEST rule
// answers a keyed charge create, capture, refund or cancel before the
// idempotency store looks at its key. The answer names the charge the
// client made or moved last under the key within its window (the
// ledger's latest operation under it; else the latest charge it made,
// declined ones too), or none.
func (f *Fake) Preempt(r *fakeserver.Request) *fakeserver.Response {
	switch r.Attempt.Kind {
	case "charge.create", "charge.capture", "charge.refund", "charge.cancel":
	default:
		return nil
	}
	a := f.answers.pick(site{}, true, r.HTTP.URL.Path, r.Key)
	if a == nil {
		return nil
	}
	r.Attempt.Answer = a.Code
	id := ""
	if !a.OmitChargeUUID {
		id = f.chargeUnderKey(r.Credential, r.Key)
	}
	resp := f.codeAnswer(a, id, "", "charge", "the Idempotency-Key was already used: use the original response")
	return &resp
}

// chargeUnderKey returns the charge the client made or moved last under
// key within the key's window, or "".
func (f *Fake) chargeUnderKey(client, key string) string {
	since := f.e.Clock().Now().Add(-KeyRules().Window)
	ops := f.e.Ledger().ByKey(key)
	for i := len(ops) - 1; i >= 0; i-- {
		op := &ops[i]
		if op.Provider == Provider && op.Credential == client && op.Time.After(since) && strings.HasPrefix(op.Kind, "charge.") {
			return op.ID
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := len(f.chargeOrder) - 1; i >= 0; i-- {
		c := f.chargeOrder[i]
		if c.client == client && c.IdempotencyKey == key && c.CreatedAt.After(since) {
			return c.UUID
		}
	}
	return ""
}

// descriptions of the injected codes, after A55's code-response page.
var answerDescriptions = map[string]string{
	AnswerTimeout:        "the acquirer did not respond in time: check the charge's status before retrying",
	Answer3DSRequired:    "3DS authentication is required: redirect the payer to url_3ds",
	Answer3DSUnavailable: "the 3DS service is temporarily unavailable: retry after 60 seconds",
	AnswerProcessingError: "the charge could not be processed: retry with exponential backoff, " +
		"with the same Idempotency-Key",
}

// codeAnswer is the answer of an injected code: in the charge-level
// shape, naming chargeUUID and url3DS when not "", or in the general
// shape (charge_uuid beside it when there is one).
func (f *Fake) codeAnswer(a *AnswerRule, chargeUUID, url3DS, source, desc string) fakeserver.Response {
	if desc == "" {
		desc = answerDescriptions[a.Code]
	}
	var resp fakeserver.Response
	if a.Shape == ShapeGeneral {
		rid := f.e.NewID("req_")
		body := map[string]any{"error": map[string]any{"code": a.Code, "message": desc, "details": []Detail{}}, "request_id": rid}
		if chargeUUID != "" {
			body["charge_uuid"] = chargeUUID
		}
		if url3DS != "" {
			body["url_3ds"] = url3DS
		}
		resp = fakeserver.JSON(a.HTTPStatus, body)
		resp.Header = http.Header{"X-Request-Id": {rid}}
	} else {
		body := map[string]any{"status": StatusError,
			"message": []ChargeMessage{{Code: a.Code, Source: source, Description: desc}}}
		if chargeUUID != "" {
			body["charge_uuid"] = chargeUUID
		}
		if url3DS != "" {
			body["url_3ds"] = url3DS
		}
		resp = fakeserver.JSON(a.HTTPStatus, body)
	}
	if a.RetryAfter > 0 {
		if resp.Header == nil {
			resp.Header = http.Header{}
		}
		resp.Header.Set("Retry-After", strconv.Itoa(a.RetryAfter))
	}
	return resp
}

// transientAnswer is the answer of a rule under which nothing runs
// (TIMEOUT without Executed, 3DS_UNAVAILABLE, PROCESSING_ERROR): it
// names the charge a move was for (TIMEOUT only), and the attempt is not
// an execution.
func (f *Fake) transientAnswer(r *fakeserver.Request, a *AnswerRule, chargeUUID string) fakeserver.Response {
	r.Attempt.Executed = false
	if a.Code != AnswerTimeout || a.OmitChargeUUID {
		chargeUUID = ""
	}
	return f.codeAnswer(a, chargeUUID, "", "acquirer", "")
}

// serveAnswers answers GET, POST and DELETE /_fakepay/a55/answers.
func (f *Fake) serveAnswers(r *http.Request) fakeserver.Response {
	list := func(status int) fakeserver.Response {
		return fakeserver.JSON(status, map[string]any{"rules": f.Answers()})
	}
	switch r.Method {
	case http.MethodGet:
		return list(http.StatusOK)
	case http.MethodDelete:
		if s := r.URL.Query().Get("index"); s != "" {
			i, err := strconv.Atoi(s)
			if err != nil || !f.answers.remove(i) {
				return adminError(http.StatusNotFound, "not_found", "index: no rule at that position")
			}
			return list(http.StatusOK)
		}
		f.ClearAnswers()
		return list(http.StatusOK)
	case http.MethodPost:
		var a AnswerRule
		if err := readAdminBody(r, &a); err != nil {
			return adminError(http.StatusBadRequest, "invalid_json", "want an answer rule such as "+
				`{"code":"TIMEOUT","executed":true,"count":1}: `+err.Error())
		}
		if err := f.AddAnswer(a); err != nil {
			return adminError(http.StatusBadRequest, "invalid_rule", err.Error())
		}
		return list(http.StatusCreated)
	}
	return adminError(http.StatusMethodNotAllowed, "method_not_allowed", "method not allowed")
}
