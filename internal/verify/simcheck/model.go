package simcheck

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
)

// Provider selects the provider model and the typed client a scenario
// drives.
type Provider string

// The providers.
const (
	A55      Provider = "a55"
	Coinepay Provider = "coinepay"
)

// Answer is what the provider model does with one attempt.
type Answer string

// The answers. A fresh key (nothing kept under it in its window) may get
// any answer of the provider's alphabet; a key whose 2xx is kept gets a
// replay (or the replay is lost on the way), a key whose 4xx is kept gets
// that 4xx again, another body under a kept key a conflict.
const (
	// Answer2xx executes the operation and keeps the answer for the window.
	Answer2xx Answer = "2xx"
	// AnswerLost executes and keeps the answer, then the connection drops.
	AnswerLost Answer = "lost after commit"
	// Answer5xx executes nothing (503).
	Answer5xx Answer = "5xx"
	// Answer4xxKept is a final refusal the provider repeats for the key
	// and body for the window: A55's declined card (the issuer's decision
	// on that body).
	Answer4xxKept Answer = "4xx kept"
	// Answer4xxNotKept is a refusal the provider does not keep: the same
	// key and body may execute on a later attempt (Coinepay's
	// insufficient_balance before a top-up).
	Answer4xxNotKept Answer = "4xx not kept"
	// Answer4xxFinalNotKept is a refusal that reads as final (Coinepay's
	// openapi_card_frozen, a 400 the client cannot mend) but, since
	// Coinepay keeps only 2xx answers, a later attempt with the same key
	// and body may still execute (the card unfrozen).
	Answer4xxFinalNotKept Answer = "4xx final, not kept"
	AnswerReplay          Answer = "replay"
	AnswerReplayLost      Answer = "replay lost"
	AnswerRepeat4xx       Answer = "kept 4xx again"
	AnswerConflict        Answer = "409 conflict"
)

// DefaultAnswers is each provider's alphabet for a fresh key.
func DefaultAnswers(p Provider) []Answer {
	if p == A55 {
		return []Answer{Answer2xx, Answer4xxKept, Answer5xx, AnswerLost}
	}
	return []Answer{Answer2xx, Answer4xxFinalNotKept, Answer4xxNotKept, Answer5xx, AnswerLost}
}

// window is how long both providers remember a key.
const window = 24 * time.Hour

// simClock is the true clock: it moves only when the scenario moves it.
type simClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *simClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *simClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// sendInfo is one attempt as the provider model sees it.
type sendInfo struct {
	merchant string // origin and credential
	key      string
	fp       string // method, path and body
	path     string
	desc     string // the request's description (A55), what its charge is listed with
}

// keyState is what the provider keeps under one merchant's key.
type keyState struct {
	fp        string
	firstSeen time.Time
	keptAt    time.Time // when the kept answer was made
	kept      *response // the kept answer (2xx or a kept 4xx), nil when none
	kept2xx   bool
}

type response struct {
	status int
	body   []byte
}

// execution is one operation the provider ran.
type execution struct {
	merchant, key, fp, id string
	at                    time.Time
}

// listedCharge is a charge as A55's list reports it: no key, as A55
// documents.
type listedCharge struct {
	merchant, id, status, desc string
	at                         time.Time
}

// model is the providers' documented semantics, one instance per run and
// provider.
type model struct {
	provider Provider
	clock    *simClock
	answers  []Answer
	keys     map[string]*keyState // merchant \x00 key
	ledger   []execution
	charges  []listedCharge // what A55 lists: every charge made, declined ones too
	late     []string       // sends past the key's window
	nextID   int
}

func newModel(p Provider, clock *simClock, answers []Answer) *model {
	if len(answers) == 0 {
		answers = DefaultAnswers(p)
	}
	return &model{provider: p, clock: clock, answers: answers, keys: map[string]*keyState{}}
}

// options lists the answers the attempt may get now.
func (m *model) options(s sendInfo) []Answer {
	ks := m.live(s)
	switch {
	case ks == nil || ks.kept == nil:
		return m.answers
	case ks.fp != s.fp:
		return []Answer{AnswerConflict}
	case ks.kept2xx:
		return []Answer{AnswerReplay, AnswerReplayLost}
	}
	return []Answer{AnswerRepeat4xx}
}

// live returns the key's state, forgetting a kept answer past its window.
func (m *model) live(s sendInfo) *keyState {
	ks := m.keys[s.merchant+"\x00"+s.key]
	if ks != nil && ks.kept != nil && !m.clock.Now().Before(ks.keptAt.Add(window)) {
		ks.kept, ks.kept2xx = nil, false
	}
	return ks
}

// serve answers one attempt as a chose.
func (m *model) serve(s sendInfo, a Answer) (*http.Response, error) {
	now := m.clock.Now()
	id := s.merchant + "\x00" + s.key
	ks := m.live(s)
	if ks == nil {
		ks = &keyState{fp: s.fp, firstSeen: now}
		m.keys[id] = ks
	}
	if age := now.Sub(ks.firstSeen); age >= window {
		m.late = append(m.late, fmt.Sprintf("key %s sent %s after the provider first saw it", short(s.key), age))
	}
	if ks.kept == nil {
		ks.fp = s.fp
	}
	switch a {
	case Answer2xx, AnswerLost:
		m.nextID++
		ex := execution{merchant: s.merchant, key: s.key, fp: s.fp, id: fmt.Sprintf("00000000-0000-4000-8000-%012d", m.nextID), at: now}
		m.ledger = append(m.ledger, ex)
		r := m.success(ex.id)
		ks.kept, ks.kept2xx, ks.keptAt = &r, true, now
		m.charges = append(m.charges, listedCharge{merchant: s.merchant, id: ex.id, status: "confirmed", desc: s.desc, at: now})
		if a == AnswerLost {
			return nil, io.ErrUnexpectedEOF
		}
		return r.http(false), nil
	case AnswerReplay:
		return ks.kept.http(true), nil
	case AnswerReplayLost:
		return nil, io.ErrUnexpectedEOF
	case AnswerRepeat4xx:
		return ks.kept.http(false), nil
	case Answer4xxKept:
		m.nextID++
		id := fmt.Sprintf("00000000-0000-4000-9000-%012d", m.nextID)
		r := m.declined(id)
		ks.kept, ks.kept2xx, ks.keptAt = &r, false, now
		m.charges = append(m.charges, listedCharge{merchant: s.merchant, id: id, status: "error", desc: s.desc, at: now})
		return r.http(false), nil
	case Answer4xxNotKept:
		return m.refusal(400, "insufficient_balance", "INSUFFICIENT_FUNDS").http(false), nil
	case Answer4xxFinalNotKept:
		return m.refusal(400, "openapi_card_frozen", "INVALID_CARD").http(false), nil
	case Answer5xx:
		return m.refusal(503, "openapi_internal_error", "UNAVAILABLE").http(false), nil
	case AnswerConflict:
		return m.refusal(409, "openapi_idempotency_key_conflict", "").http(false), nil
	}
	return nil, fmt.Errorf("simcheck: unknown answer %q", a)
}

// list answers a read of merchant's records: A55's charge list, every
// charge on one page, none carrying a key. Coinepay's model lists
// nothing.
func (m *model) list(merchant, path string) *http.Response {
	if m.provider != A55 || !strings.HasSuffix(path, "/charges/") {
		return m.refusal(404, "openapi_not_found", "NOT_FOUND").http(false)
	}
	data := []map[string]any{}
	for _, c := range m.charges {
		if c.merchant != merchant {
			continue
		}
		data = append(data, map[string]any{"charge_uuid": c.id, "wallet_uuid": simWallet, "status": c.status, "amount": "10.00",
			"currency": "BRL", "type_charge": "credit_card", "description": c.desc, "created_at": c.at.Format(time.RFC3339Nano)})
	}
	b, _ := json.Marshal(map[string]any{"data": data, "page": 1, "limit": 100, "total": len(data), "total_pages": 1})
	return response{status: http.StatusOK, body: b}.http(false)
}

// success is the provider's 2xx answer naming resource id.
func (m *model) success(id string) response {
	if m.provider == A55 {
		b, _ := json.Marshal(map[string]any{"charge_uuid": id, "status": "confirmed", "amount": "10.00", "currency": "BRL"})
		return response{status: http.StatusCreated, body: b}
	}
	b, _ := json.Marshal(map[string]any{"code": 200, "message": "ok", "message_key": "success",
		"data": map[string]any{"recharge_id": id, "card_id": "card_1", "amount": "10.00", "card_balance": "10.00", "account_balance": "90.00"}})
	return response{status: http.StatusOK, body: b}
}

// declined is A55's declined charge (a charge-level 400).
func (m *model) declined(id string) response {
	b, _ := json.Marshal(map[string]any{"charge_uuid": id, "status": "error",
		"message": []map[string]string{{"code": "CARD_DECLINED", "source": "card", "description": "card declined"}}})
	return response{status: http.StatusBadRequest, body: b}
}

// refusal is an error answer in the provider's shape.
func (m *model) refusal(status int, coinepayKey, a55Code string) response {
	if m.provider == A55 {
		if status == 409 {
			return response{status: status, body: []byte(`{"error":{"code":"CONFLICT","message":"key reused"}}`)}
		}
		if status == 400 {
			b, _ := json.Marshal(map[string]any{"charge_uuid": "", "status": "error",
				"message": []map[string]string{{"code": a55Code, "source": "charge", "description": "refused"}}})
			return response{status: status, body: b}
		}
		return response{status: status, body: []byte(`{"error":{"code":"` + a55Code + `","message":"try again"}}`)}
	}
	b, _ := json.Marshal(map[string]any{"code": status, "message": "refused", "message_key": coinepayKey, "data": nil})
	return response{status: status, body: b}
}

func (r response) http(replay bool) *http.Response {
	h := http.Header{"Content-Type": {"application/json"}}
	if replay {
		h.Set("X-Idempotent-Replay", "true")
	}
	return &http.Response{StatusCode: r.status, Status: http.StatusText(r.status), Header: h, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Body: io.NopCloser(bytes.NewReader(r.body)), ContentLength: int64(len(r.body))}
}

// state is the model's part of a state's identity, keys named by canon.
func (m *model) state(canon func(string) string) string {
	var parts []string
	for id, ks := range m.keys {
		merchant, key, _ := strings.Cut(id, "\x00")
		kept := "-"
		if ks.kept != nil {
			kept = fmt.Sprintf("%d@%s", ks.kept.status, ks.keptAt.Sub(start))
		}
		parts = append(parts, fmt.Sprintf("%s/%s:%s:%s", merchant, canon(key), ks.firstSeen.Sub(start), kept))
	}
	sort.Strings(parts)
	var ex []string
	for _, e := range m.ledger {
		ex = append(ex, e.merchant+"/"+canon(e.key)+"@"+e.at.Sub(start).String())
	}
	return fmt.Sprintf("id=%d exec=%v late=%d %s", m.nextID, ex, len(m.late), strings.Join(parts, ","))
}

// fingerprint identifies a request's operation: method, path, body.
func fingerprint(method, path string, body []byte) string {
	h := sha256.Sum256([]byte(method + "\x00" + path + "\x00" + string(body)))
	return hex.EncodeToString(h[:8])
}

// short keeps a key or id readable in a trace.
func short(s string) string {
	if len(s) > 12 {
		return s[len(s)-12:]
	}
	return s
}
