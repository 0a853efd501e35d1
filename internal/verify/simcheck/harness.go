package simcheck

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/coinepay"
	"github.com/payonce/payonce/journal"
)

// Explore runs every schedule of sc (up to its bounds) and returns what it
// covered and the counterexamples found: the first one, or with
// sc.KeepGoing the first of each kind of problem.
func Explore(sc Scenario) (Stats, []*Violation, error) {
	if len(sc.Merchants) == 0 {
		sc.Merchants = []Merchant{{Origin: "http://127.0.0.1:9001", ClientID: "merchant-1"}}
	}
	if sc.Reference == "" {
		sc.Reference = "order-1/charge"
	}
	if sc.MaxDepth == 0 {
		sc.MaxDepth = 40
	}
	if len(sc.Workers) == 0 {
		return Stats{}, nil, errors.New("simcheck: a scenario needs workers")
	}
	for _, wk := range sc.Workers {
		if wk.Merchant < 0 || wk.Merchant >= len(sc.Merchants) {
			return Stats{}, nil, fmt.Errorf("simcheck: worker %s: no merchant %d", wk.Name, wk.Merchant)
		}
		if wk.Reference < 0 || wk.Reference > 1 {
			return Stats{}, nil, fmt.Errorf("simcheck: worker %s: reference %d: a scenario has references 0 and 1", wk.Name, wk.Reference)
		}
		if wk.Settle && sc.Provider != A55 {
			return Stats{}, nil, fmt.Errorf("simcheck: worker %s: only an A55 charge is settled by lookup here", wk.Name)
		}
	}
	x := &explorer{maxDepth: sc.MaxDepth, script: sc.Script}
	seen := map[string]struct{}{}
	var st Stats
	var prefix []int
	var found []*Violation
	classes := map[string]bool{}
	for run := 0; ; run++ {
		x.prefix, x.trace, x.branching, x.scriptPos = prefix, nil, 0, 0
		w, err := newWorld(&sc, x, seen, run)
		if err != nil {
			return st, nil, err
		}
		w.schedule()
		if !w.pruned {
			w.check()
		} else {
			st.Pruned++
		}
		if x.diverged != "" {
			return st, nil, fmt.Errorf("simcheck: %s: the script no longer fits: %s", sc.Name, x.diverged)
		}
		st.Runs++
		st.Steps += w.steps
		st.MaxChoice = max(st.MaxChoice, x.branching)
		st.States = len(seen)
		st.Truncated = st.Truncated || x.truncated
		if len(w.problems) > 0 {
			st.Violating++
			v := &Violation{Scenario: sc.Name, Run: run, Problems: w.problems, Path: x.path(), Log: w.log.String()}
			if !sc.KeepGoing {
				return st, []*Violation{v}, nil
			}
			for _, pr := range w.problems {
				class, _, _ := strings.Cut(pr, ":")
				if !classes[class] {
					classes[class] = true
					found = append(found, v)
					break
				}
			}
		}
		p, ok := x.next()
		if !ok || (sc.MaxRuns > 0 && st.Runs >= sc.MaxRuns) {
			st.Truncated = st.Truncated || ok
			return st, found, nil
		}
		prefix = p
	}
}

// start is the true clock's first reading in every run.
var start = time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)

func newWorld(sc *Scenario, x *explorer, seen map[string]struct{}, run int) (*world, error) {
	w := &world{sc: sc, x: x, clock: &simClock{t: start}, models: map[string]*model{}, events: make(chan event),
		scopes: map[int]string{}, stateSeen: seen, names: map[string]string{}}
	w.ref = fmt.Sprintf("%s/run-%d", sc.Reference, run)
	w.refs = 1
	for _, wk := range sc.Workers {
		w.refs = max(w.refs, wk.Reference+1)
	}
	for _, m := range sc.Merchants {
		if w.models[m.Origin] == nil {
			w.models[m.Origin] = newModel(sc.Provider, w.clock, sc.Answers)
		}
	}
	for _, wk := range sc.Workers {
		w.crashes = append(w.crashes, wk.Crashes)
	}
	if sc.Journal != nil {
		j, err := sc.Journal(w.clock.Now)
		if err != nil {
			return nil, err
		}
		w.journal = j
	} else {
		w.journal = journal.NewMemory().WithClock(w.clock.Now)
	}
	for i, m := range sc.Merchants {
		s, err := scopeOf(sc.Provider, m)
		if err != nil {
			return nil, err
		}
		w.scopes[i] = s
	}
	return w, nil
}

// scopeOf is the journal scope the merchant's client records under.
func scopeOf(p Provider, m Merchant) (string, error) {
	c, err := newClient(p, m, &http.Client{}, nil, time.Now, 1, false)
	if err != nil {
		return "", err
	}
	return c.scope, nil
}

// typedClient is one worker's client for the scenario's operation.
type typedClient struct {
	scope string
	call  func(ctx context.Context, ref string) (id string, fromJournal bool, err error)
	// settle settles ref by lookup: the resource recorded as its
	// outcome, "" for not executed.
	settle func(ctx context.Context, ref string) (id string, err error)
}

// policy is the workers' retry policy: no waits (the true clock does not
// move on its own), maxAttempts attempts.
func policy(maxAttempts int) payonce.RetryPolicy {
	p := payonce.DefaultRetryPolicy()
	p.MaxAttempts = maxAttempts
	p.InitialInterval, p.MaxInterval, p.Multiplier, p.RandomizationFactor = 0, 0, 1, 0
	p.MaxElapsedTime = 0
	p.MaxRetryAfter = time.Millisecond
	p.AttemptTimeout = time.Minute
	return p
}

// newClient is a client of merchant m on provider p; same gives every
// reference the same request (Scenario.SameRequest).
func newClient(p Provider, m Merchant, hc *http.Client, j journal.Store, now func() time.Time, maxAttempts int, same bool) (*typedClient, error) {
	opts := []payonce.Option{payonce.WithBaseURL(m.Origin), payonce.WithHTTPClient(hc), payonce.WithClock(now),
		payonce.WithRetryPolicy(policy(maxAttempts)), payonce.WithRetryBudget(nil)}
	if j != nil {
		opts = append(opts, payonce.WithJournal(j))
	}
	switch p {
	case A55:
		c, err := a55.NewClient(a55.Auth{ClientID: m.ClientID, ClientSecret: "secret-" + m.ClientID, TokenURL: m.Origin + "/oauth2/token"}, opts...)
		if err != nil {
			return nil, err
		}
		return &typedClient{scope: c.Core().Scope(), call: func(ctx context.Context, ref string) (string, bool, error) {
			ch, err := c.Charges.Create(ctx, chargeRequest(ref, same), payonce.WithReference(ref))
			if err != nil {
				return "", false, err
			}
			return ch.UUID, ch.Meta.FromJournal, nil
		}, settle: func(ctx context.Context, ref string) (string, error) {
			s, err := c.Charges.SettleCreate(ctx, ref, &a55.SettleOptions{RecordNotExecuted: true})
			if err != nil || s.Entry.State != payonce.JournalSucceeded {
				return "", err
			}
			return resultID(A55, s.Entry.Result), nil
		}}, nil
	case Coinepay:
		c, err := coinepay.NewClient(m.ClientID, "secret-"+m.ClientID, opts...)
		if err != nil {
			return nil, err
		}
		return &typedClient{scope: c.Core().Scope(), call: func(ctx context.Context, ref string) (string, bool, error) {
			amount, _ := payonce.ParseAmount("10.00")
			res, err := c.Cards.Recharge(ctx, &coinepay.RechargeRequest{CardID: "card_1", Amount: amount}, payonce.WithReference(ref))
			if err != nil {
				return "", false, err
			}
			return res.RechargeID, res.Meta.FromJournal, nil
		}}, nil
	}
	return nil, fmt.Errorf("simcheck: unknown provider %q", p)
}

// chargeRequest is the A55 charge a reference stands for: its body is a
// pure function of the reference, as a merchant's job rebuilds it; with
// same, every reference's is the same charge (amount and description).
func chargeRequest(ref string, same bool) *a55.ChargeCreateRequest {
	if same {
		ref = "sim order"
	}
	amount, _ := payonce.ParseAmount("10.00")
	return a55test.Complete(&a55.ChargeCreateRequest{
		InstallmentValue: amount, Currency: payonce.BRL, TypeCharge: a55.TypeCreditCard,
		Card: &payonce.Card{Number: "4111111111111111", HolderName: "SIM CHECK", ExpirationMonth: "12",
			ExpirationYear: strconv.Itoa(start.Year() + 5), CVV: "123"},
		Payer:      a55.Payer{Name: "Sim Payer", Email: "sim@example.com", TaxID: "12345678909"},
		WalletUUID: simWallet, MerchantID: simMerchant, Description: ref,
	})
}

// simWallet and simMerchant are the wallet and merchant of every charge.
const (
	simWallet   = "6f1c2b1e-3d4a-4b5c-8d6e-7f8091a2b3c4"
	simMerchant = "0b7f5c3e-2a4d-4e6f-9a1b-3c5d7e9f1a2b"
)

// newCaller builds the worker's client on its own clock, with the
// yielding journal and transport.
func (w *world) newCaller(p *proc) (caller, error) {
	wk := w.sc.Workers[p.spec]
	off := wk.ClockOffset
	now := func() time.Time { return w.clock.Now().Add(off) }
	attempts := wk.MaxAttempts
	if attempts == 0 {
		attempts = 2
	}
	hc := &http.Client{Transport: &simTransport{p: p}}
	c, err := newClient(w.sc.Provider, w.merchant(p), hc, &simJournal{p: p, j: w.journal}, now, attempts, w.sc.SameRequest)
	if err != nil {
		return nil, err
	}
	ref := w.refName(wk.Reference)
	if wk.Settle {
		return func(ctx context.Context) (string, bool, error) {
			id, err := c.settle(ctx, ref)
			return id, false, err
		}, nil
	}
	return func(ctx context.Context) (string, bool, error) { return c.call(ctx, ref) }, nil
}

// simTransport makes every attempt a yield point and answers it from the
// provider model; token requests are answered at once.
type simTransport struct{ p *proc }

func (t *simTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	p, w := t.p, t.p.w
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
		_ = req.Body.Close()
	}
	if strings.HasSuffix(req.URL.Path, "/oauth2/token") {
		b := []byte(`{"access_token":"tok-` + req.URL.Host + `","token_type":"Bearer","expires_in":3600}`)
		return response{status: 200, body: b}.http(false), nil
	}
	if p.crashed {
		return nil, errCrashed
	}
	if req.Method == http.MethodGet {
		// A read (a settle lookup's list): one yield, one answer.
		if m := p.yield(&point{kind: "list"}); m.crash {
			return nil, errCrashed
		}
		resp := w.modelFor(p).list(strconv.Itoa(w.sc.Workers[p.spec].Merchant), req.URL.Path)
		p.note("list", resp.StatusCode)
		return resp, nil
	}
	si := sendInfo{merchant: strconv.Itoa(w.sc.Workers[p.spec].Merchant), key: req.Header.Get("Idempotency-Key"),
		fp: fingerprint(req.Method, req.URL.Path, body), path: req.URL.Path, desc: descriptionOf(body)}
	m := p.yield(&point{kind: "send", send: &si})
	if m.crash {
		return nil, errCrashed
	}
	p.run.sent++
	resp, err := w.modelFor(p).serve(si, m.answer)
	p.note("answer", w.canon(si.key), errText(err))
	if err == nil && resp.StatusCode >= 200 && resp.StatusCode < 300 {
		b, _ := io.ReadAll(resp.Body)
		p.run.got2xx = resultID(w.sc.Provider, b)
		resp.Body = io.NopCloser(strings.NewReader(string(b)))
	}
	return resp, err
}

// descriptionOf is the description of a request body, "" for none.
func descriptionOf(body []byte) string {
	var v struct {
		Description string `json:"description"`
	}
	_ = json.Unmarshal(body, &v)
	return v.Description
}

// resultID is the resource a 2xx answer (or a journal entry's Result)
// names.
func resultID(p Provider, body []byte) string {
	var v struct {
		ChargeUUID string `json:"charge_uuid"`
		Data       struct {
			RechargeID string `json:"recharge_id"`
		} `json:"data"`
	}
	if json.Unmarshal(body, &v) != nil {
		return ""
	}
	if p == A55 {
		return v.ChargeUUID
	}
	return v.Data.RechargeID
}

// simJournal makes every journal call a yield point.
type simJournal struct {
	p *proc
	j journal.Store
}

func (s *simJournal) enter(kind string) error {
	if m := s.p.yield(&point{kind: kind}); m.crash {
		return errCrashed
	}
	return nil
}

func (s *simJournal) Reserve(ctx context.Context, e payonce.JournalEntry) (payonce.JournalEntry, bool, error) {
	if err := s.enter("reserve"); err != nil {
		return payonce.JournalEntry{}, false, err
	}
	got, created, err := s.j.Reserve(ctx, e)
	s.p.note("reserve", created, s.p.w.entryString(got), errText(err))
	s.p.w.logf("       %s reserve: created=%t state=%s err=%v", s.p.name, created, got.State, errText(err))
	return got, created, err
}

func (s *simJournal) Update(ctx context.Context, e payonce.JournalEntry) error {
	if err := s.enter("update " + string(e.State)); err != nil {
		return err
	}
	w := s.p.w
	before, _ := s.j.Get(ctx, e.Scope, e.Reference)
	err := s.j.Update(ctx, e)
	if err == nil && e.State != payonce.JournalSucceeded && e.Fence < before.Fence {
		w.problem("stale write: %s wrote %s with fence %d over fence %d", s.p.name, e.State, e.Fence, before.Fence)
	}
	s.p.note("update", errText(err))
	w.logf("       %s update %s: err=%v", s.p.name, e.State, errText(err))
	return err
}

func (s *simJournal) Take(ctx context.Context, r payonce.JournalEntry) (payonce.JournalEntry, error) {
	if err := s.enter("take"); err != nil {
		return payonce.JournalEntry{}, err
	}
	got, err := s.j.Take(ctx, r)
	s.p.note("take", s.p.w.entryString(got), errText(err))
	s.p.w.logf("       %s take: fence=%d err=%v", s.p.name, got.Fence, errText(err))
	return got, err
}

func (s *simJournal) BeginAttempt(ctx context.Context, r payonce.JournalEntry) (payonce.JournalEntry, error) {
	if err := s.enter("begin attempt"); err != nil {
		return payonce.JournalEntry{}, err
	}
	got, err := s.j.BeginAttempt(ctx, r)
	s.p.note("begin", s.p.w.entryString(got), errText(err))
	s.p.w.logf("       %s begin attempt (fence %d): err=%v", s.p.name, r.Fence, errText(err))
	return got, err
}

// Now is no yield point: it reads the journal's clock and changes nothing.
func (s *simJournal) Now(ctx context.Context) (time.Time, error) {
	if s.p.crashed {
		return time.Time{}, errCrashed
	}
	return s.j.Now(ctx)
}

// Get is a yield point when it reads a scope a worker records under. A
// read of another scope (a run looking its reference up under the
// earlier forms of its client's scope) is none: nothing in the model
// writes there, so no interleaving around it can differ.
func (s *simJournal) Get(ctx context.Context, scope, reference string) (payonce.JournalEntry, error) {
	if !slices.Contains(slices.Collect(maps.Values(s.p.w.scopes)), scope) {
		if s.p.crashed {
			return payonce.JournalEntry{}, errCrashed
		}
		return s.j.Get(ctx, scope, reference)
	}
	if err := s.enter("get"); err != nil {
		return payonce.JournalEntry{}, err
	}
	got, err := s.j.Get(ctx, scope, reference)
	s.p.note("get", s.p.w.entryString(got), errText(err))
	return got, err
}

func (s *simJournal) Pending(ctx context.Context, q journal.PendingQuery) ([]payonce.JournalEntry, error) {
	if err := s.enter("pending"); err != nil {
		return nil, err
	}
	got, err := s.j.Pending(ctx, q)
	s.p.note("pending", len(got), errText(err))
	return got, err
}

func (s *simJournal) Claim(ctx context.Context, c journal.ClaimRequest) ([]payonce.JournalEntry, error) {
	if err := s.enter("claim"); err != nil {
		return nil, err
	}
	got, err := s.j.Claim(ctx, c)
	s.p.note("claim", len(got), errText(err))
	return got, err
}

// Holders is a yield point: a settle lookup reads who holds a record.
func (s *simJournal) Holders(ctx context.Context, scope, resourceID string) ([]payonce.JournalEntry, error) {
	if err := s.enter("holders"); err != nil {
		return nil, err
	}
	got, err := s.j.(payonce.JournalFinder).Holders(ctx, scope, resourceID)
	s.p.note("holders", refsOf(got), errText(err))
	return got, err
}

// LookAlikes is a yield point: a settle lookup reads which entries look
// alike.
func (s *simJournal) LookAlikes(ctx context.Context, q payonce.LookAlikeQuery) ([]payonce.JournalEntry, error) {
	if err := s.enter("look-alikes"); err != nil {
		return nil, err
	}
	got, err := s.j.(payonce.JournalFinder).LookAlikes(ctx, q)
	var states []string
	for _, e := range got {
		states = append(states, e.Reference+":"+s.p.w.entryString(e))
	}
	s.p.note("look-alikes", states, errText(err))
	return got, err
}

func refsOf(es []payonce.JournalEntry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Reference)
	}
	return out
}

func (s *simJournal) Purge(ctx context.Context, before time.Time) (int64, error) {
	if err := s.enter("purge"); err != nil {
		return 0, err
	}
	return s.j.Purge(ctx, before)
}

func errText(err error) string {
	if err == nil {
		return "nil"
	}
	var ae *payonce.APIError
	if errors.As(err, &ae) && ae.Kind != nil {
		return payonce.KindName(ae.Kind)
	}
	switch {
	case errors.Is(err, journal.ErrSettled):
		return "settled"
	case errors.Is(err, payonce.ErrJournalFenced):
		return "fenced"
	case errors.Is(err, payonce.ErrJournalLeased):
		return "leased"
	case errors.Is(err, errCrashed):
		return "crashed"
	}
	return "error"
}

// check asserts the invariants on the run's end state.
func (w *world) check() {
	for _, m := range w.models {
		for _, l := range m.late {
			w.problem("sent past the window: %s", l)
		}
	}
	for i, mc := range w.sc.Merchants {
		mdl := w.models[mc.Origin]
		merchant := strconv.Itoa(i)
		owned := map[string]bool{} // keys of the merchant's entries
		for r := range w.refs {
			e, err := w.journal.Get(context.Background(), w.scopes[i], w.refName(r))
			has := err == nil
			var execs []execution
			for _, ex := range mdl.ledger {
				if ex.merchant == merchant && has && ex.key == e.Key {
					execs = append(execs, ex)
				}
			}
			if has {
				owned[e.Key] = true
			}
			if len(execs) > 1 {
				w.problem("duplicate: merchant %d executed reference %d %d times", i, r, len(execs))
			}
			if has {
				w.checkEntry(i, e, execs)
			}
			for _, p := range w.procs {
				if wk := w.sc.Workers[p.spec]; wk.Merchant != i || wk.Reference != r {
					continue
				}
				for _, d := range p.results {
					w.checkDelivery(i, d, execs)
				}
			}
		}
		for _, ex := range mdl.ledger {
			if ex.merchant == merchant && !owned[ex.key] {
				w.problem("duplicate: merchant %d executed key %s, which no entry holds", i, short(ex.key))
			}
		}
	}
}

func (w *world) checkEntry(i int, e payonce.JournalEntry, execs []execution) {
	switch e.State {
	case payonce.JournalFailed:
		if len(execs) > 0 {
			w.problem("misrecorded: merchant %d's entry is failed (%s), but the provider executed it", i, e.ErrorKind)
		}
	case payonce.JournalSucceeded:
		switch {
		case len(execs) == 0:
			w.problem("misrecorded: merchant %d's entry is succeeded, but the provider never executed it", i)
		case execs[0].key != e.Key:
			w.problem("misrecorded: merchant %d's entry is succeeded under key %s, the provider executed key %s", i, short(e.Key), short(execs[0].key))
		case resultID(w.sc.Provider, e.Result) != execs[0].id:
			w.problem("misrecorded: merchant %d's entry holds result %s, the provider's is %s", i, short(resultID(w.sc.Provider, e.Result)), short(execs[0].id))
		}
	}
}

func (w *world) checkDelivery(i int, d delivery, execs []execution) {
	if d.crashed {
		return
	}
	if d.err == nil && !(d.settle && d.id == "") {
		found := false
		for _, ex := range execs {
			found = found || ex.id == d.id
		}
		if !found {
			w.problem("told success: %s was told %s succeeded (from journal %t), merchant %d's provider has no such execution", d.worker, short(d.id), d.fromJournal, i)
		}
	}
	if d.got2xx != "" && (d.err != nil || d.id != d.got2xx) {
		w.problem("2xx lost to the caller: %s's attempt got the 2xx %s, the call returned %s", d.worker, short(d.got2xx), errText(d.err))
	}
}
