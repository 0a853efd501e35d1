package fakeserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// FaultKind names a failure the fakes inject on demand.
type FaultKind string

// The fault kinds.
const (
	// DropAfterCommit executes and stores the operation, then closes the
	// connection without answering: the "charge succeeded, response lost"
	// case that causes double charges without idempotency keys.
	DropAfterCommit FaultKind = "drop_after_commit"
	// ErrorBeforeCommit answers Status (500, 502 or 503; default 503) in
	// the provider's error shape without executing anything.
	ErrorBeforeCommit FaultKind = "error_before_commit"
	// RefuseBeforeCommit answers Status (a 4xx other than 409 and 429;
	// default 400) in the provider's error shape without executing
	// anything, to a key the store does not hold (a key that executed
	// answers as the store says, as a provider would). Only 2xx answers are kept, so the same key and body may
	// execute on a later attempt: with IdempotencyKey and Count 1 it
	// answers one key differently twice (a refusal, then the operation),
	// as a provider does after a transient state (a balance topped up, a
	// card unfrozen).
	RefuseBeforeCommit FaultKind = "refuse_before_commit"
	// RateLimit answers 429 with Retry-After: RetryAfter seconds.
	RateLimit FaultKind = "rate_limit"
	// Delay waits Delay before (When "before", the default) or after
	// (When "after") the operation commits.
	Delay FaultKind = "delay"
	// ResetBeforeRead resets the connection (TCP RST) before reading the
	// request body.
	ResetBeforeRead FaultKind = "reset_before_read"
	// Hang holds the request until the client gives up or the server closes.
	Hang FaultKind = "hang"
)

// Rule is one fault injection rule. It matches a request on every field set
// among Provider, Path, IdempotencyKey; Nth then fires only on the nth
// matching request (1-based), Probability (0 < p < 1) fires at random under
// the engine's seed, and Count (0 = unlimited) caps how many times the rule
// fires. The JSON form is the one of the admin API:
//
//	{"fault":"drop_after_commit","path":"/api/v1/bank/wallet/charge/","count":1}
//	{"fault":"error_before_commit","status":503}
//	{"fault":"rate_limit","retry_after":1}
//	{"fault":"delay","delay":"200ms","when":"before"}
type Rule struct {
	Fault          FaultKind     `json:"fault"`
	Provider       string        `json:"provider,omitempty"` // "a55" or "coinepay"; "" matches both
	Path           string        `json:"path,omitempty"`     // exact path; a trailing "*" matches a prefix
	IdempotencyKey string        `json:"idempotency_key,omitempty"`
	Nth            int           `json:"nth,omitempty"`
	Probability    float64       `json:"probability,omitempty"`
	Count          int           `json:"count,omitempty"`
	Status         int           `json:"status,omitempty"`      // error_before_commit
	RetryAfter     int           `json:"retry_after,omitempty"` // rate_limit, seconds
	Delay          time.Duration `json:"-"`                     // delay; JSON "delay": "200ms"
	When           string        `json:"when,omitempty"`        // delay: "before" or "after"
}

// MarshalJSON writes Delay as a duration string such as "200ms".
func (r Rule) MarshalJSON() ([]byte, error) {
	type plain Rule
	j := struct {
		plain
		Delay string `json:"delay,omitempty"`
	}{plain: plain(r)}
	if r.Delay != 0 {
		j.Delay = r.Delay.String()
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads Delay as a duration string ("200ms") or a number of
// milliseconds.
func (r *Rule) UnmarshalJSON(b []byte) error {
	type plain Rule
	var j struct {
		plain
		Delay json.RawMessage `json:"delay,omitempty"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields() // a misspelt field would leave a rule that never does what it says
	if err := dec.Decode(&j); err != nil {
		return err
	}
	*r = Rule(j.plain)
	if len(j.Delay) > 0 && string(j.Delay) != "null" {
		var s string
		if err := json.Unmarshal(j.Delay, &s); err == nil {
			d, err := time.ParseDuration(s)
			if err != nil {
				return fmt.Errorf("delay: %w", err)
			}
			r.Delay = d
		} else {
			var ms float64
			if err := json.Unmarshal(j.Delay, &ms); err != nil {
				return errors.New("delay: want a duration string such as \"200ms\"")
			}
			r.Delay = time.Duration(ms * float64(time.Millisecond))
		}
	}
	return nil
}

// Validate checks the rule and fills defaults (status 503, retry_after 1,
// when "before").
func (r *Rule) Validate() error {
	switch r.Fault {
	case DropAfterCommit, ResetBeforeRead, Hang:
	case ErrorBeforeCommit:
		if r.Status == 0 {
			r.Status = 503
		}
		if r.Status < 500 || r.Status > 599 {
			return errors.New("error_before_commit: status must be 5xx")
		}
	case RefuseBeforeCommit:
		if r.Status == 0 {
			r.Status = 400
		}
		if r.Status < 400 || r.Status > 499 || r.Status == 409 || r.Status == 429 {
			return errors.New("refuse_before_commit: status must be a 4xx other than 409 and 429")
		}
	case RateLimit:
		if r.RetryAfter < 0 {
			return errors.New("rate_limit: retry_after must not be negative")
		}
		if r.RetryAfter == 0 {
			r.RetryAfter = 1
		}
	case Delay:
		if r.Delay <= 0 {
			return errors.New("delay: delay must be positive")
		}
		if r.When == "" {
			r.When = "before"
		}
		if r.When != "before" && r.When != "after" {
			return errors.New("delay: when must be before or after")
		}
	case "":
		return errors.New("fault is required")
	default:
		return fmt.Errorf("unknown fault %q", string(r.Fault))
	}
	if r.Nth < 0 || r.Count < 0 {
		return errors.New("nth and count must not be negative")
	}
	if r.Probability < 0 || r.Probability > 1 {
		return errors.New("probability must be within 0..1")
	}
	return nil
}

func (r *Rule) matches(provider, path, key string) bool {
	if r.Provider != "" && r.Provider != provider {
		return false
	}
	if r.Path != "" {
		if p, ok := strings.CutSuffix(r.Path, "*"); ok {
			if !strings.HasPrefix(path, p) {
				return false
			}
		} else if r.Path != path {
			return false
		}
	}
	return r.IdempotencyKey == "" || r.IdempotencyKey == key
}

// RuleState is a rule with its counters, as the admin API lists it.
type RuleState struct {
	Rule
	Seen  int `json:"seen"`  // matching requests so far
	Fired int `json:"fired"` // times it fired
}

// MarshalJSON writes the rule's fields next to seen and fired.
func (rs RuleState) MarshalJSON() ([]byte, error) {
	rule, err := rs.Rule.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(rule, &m); err != nil {
		return nil, err
	}
	m["seen"], m["fired"] = rs.Seen, rs.Fired
	return json.Marshal(m)
}

// Fault is one fault chosen for a request.
type Fault struct {
	Kind       FaultKind
	Status     int
	RetryAfter int
	Delay      time.Duration
	After      bool // a delay after the commit
}

// Faults holds the fault rules and the random mix. Every random choice
// comes from one seeded source guarded by a mutex, so a run with the same
// seed and the same request order injects the same faults.
type Faults struct {
	mu    sync.Mutex
	rng   *rand.Rand
	rules []*RuleState
	rate  float64
	// armed: a rule is held or the rate is positive (set with mu held). A
	// request finds no fault without taking the lock when it is not.
	armed atomic.Bool
}

// arm updates armed after a change of the rules or the rate; f.mu is held.
func (f *Faults) arm() { f.armed.Store(len(f.rules) > 0 || f.rate > 0) }

// NewFaults returns an empty rule set drawing from seed; rate is the
// probability (0..1) that a request not hit by a rule gets a random fault
// from the chaos mix (drop_after_commit, error_before_commit 500/502/503,
// rate_limit, reset_before_read).
func NewFaults(seed uint64, rate float64) *Faults {
	f := &Faults{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), rate: rate}
	f.arm()
	return f
}

// Bounds of the rule set: every request scans the rules and GET
// /_fakepay/faults lists them, so neither may grow without end.
const (
	MaxFaultRules = 1000 // rules held at once
	MaxRuleField  = 1024 // bytes of a rule's provider, path or idempotency_key
)

// Add validates and appends a rule. A rule past MaxFaultRules, or with a
// field over MaxRuleField bytes, is refused.
func (f *Faults) Add(r Rule) error {
	if err := r.Validate(); err != nil {
		return err
	}
	if len(r.Provider) > MaxRuleField || len(r.Path) > MaxRuleField || len(r.IdempotencyKey) > MaxRuleField {
		return fmt.Errorf("provider, path and idempotency_key must be at most %d bytes", MaxRuleField)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.rules) >= MaxFaultRules {
		return fmt.Errorf("at most %d rules: clear them with DELETE /_fakepay/faults", MaxFaultRules)
	}
	f.rules = append(f.rules, &RuleState{Rule: r})
	f.arm()
	return nil
}

// Clear removes every rule (the chaos rate stays).
func (f *Faults) Clear() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = nil
	f.arm()
}

// Remove removes the rule at index i (0-based, in the order Rules lists
// them), reporting whether there was one.
func (f *Faults) Remove(i int) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if i < 0 || i >= len(f.rules) {
		return false
	}
	f.rules = slices.Delete(f.rules, i, i+1)
	f.arm()
	return true
}

// SetRate changes the chaos rate.
func (f *Faults) SetRate(rate float64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rate = rate
	f.arm()
}

// Rules returns a copy of the rules with their counters.
func (f *Faults) Rules() []RuleState {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]RuleState, len(f.rules))
	for i, r := range f.rules {
		out[i] = *r
	}
	return out
}

// Pick returns the fault for a request, or nil. Rules are tried in the
// order they were added; every matching rule counts the request, the first
// that fires wins.
func (f *Faults) Pick(provider, path, key string) *Fault {
	if !f.armed.Load() {
		return nil // no rule to count the request, no draw to make
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var chosen *Fault
	for _, rs := range f.rules {
		r := &rs.Rule
		if !r.matches(provider, path, key) {
			continue
		}
		rs.Seen++
		if chosen != nil || (r.Count > 0 && rs.Fired >= r.Count) {
			continue
		}
		if r.Nth > 0 && rs.Seen != r.Nth {
			continue
		}
		if r.Probability > 0 && r.Probability < 1 && f.rng.Float64() >= r.Probability {
			continue
		}
		rs.Fired++
		chosen = &Fault{Kind: r.Fault, Status: r.Status, RetryAfter: r.RetryAfter, Delay: r.Delay, After: r.When == "after"}
	}
	if chosen != nil || f.rate <= 0 || f.rng.Float64() >= f.rate {
		return chosen
	}
	switch f.rng.IntN(4) {
	case 0:
		return &Fault{Kind: DropAfterCommit}
	case 1:
		return &Fault{Kind: ErrorBeforeCommit, Status: []int{500, 502, 503}[f.rng.IntN(3)]}
	case 2:
		return &Fault{Kind: RateLimit, RetryAfter: 1}
	default:
		return &Fault{Kind: ResetBeforeRead}
	}
}
