package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/payonce/payonce/internal/corekit"

	"github.com/payonce/payonce/internal/fake/a55fake"
	"github.com/payonce/payonce/internal/fake/coinepayfake"
	"github.com/payonce/payonce/internal/fake/fakeserver"
)

// faultMix is the share of requests each fault hits. For a total rate f
// the shares sum to exactly f: two sevenths answer lost after the commit,
// two sevenths 5xx before it, a seventh resets, a seventh 429 with
// Retry-After, a seventh short delays (half before, half after the
// commit). At the default f = 0.35 that is 10 %, 10 %, 5 %, 5 % and 5 %.
type faultMix struct {
	drop, errBefore, reset, rateLimit, delayBefore, delayAfter float64
}

func mixFor(f float64) faultMix {
	return faultMix{drop: f * 2 / 7, errBefore: f * 2 / 7, reset: f / 7, rateLimit: f / 7, delayBefore: f / 14, delayAfter: f / 14}
}

// total is the share of requests hit by any fault.
func (m faultMix) total() float64 {
	return m.drop + m.errBefore + m.reset + m.rateLimit + m.delayBefore + m.delayAfter
}

// rules turns the mix into the fakes' rules. Rules are tried in order, so
// each probability is conditional on the earlier rules not firing.
func (m faultMix) rules() []fakeserver.Rule {
	type entry struct {
		p float64
		r fakeserver.Rule
	}
	entries := []entry{
		{m.drop, fakeserver.Rule{Fault: fakeserver.DropAfterCommit}},
		{m.errBefore, fakeserver.Rule{Fault: fakeserver.ErrorBeforeCommit, Status: 503}},
		{m.reset, fakeserver.Rule{Fault: fakeserver.ResetBeforeRead}},
		{m.rateLimit, fakeserver.Rule{Fault: fakeserver.RateLimit, RetryAfter: 1}},
		{m.delayBefore, fakeserver.Rule{Fault: fakeserver.Delay, Delay: faultDelay, When: "before"}},
		{m.delayAfter, fakeserver.Rule{Fault: fakeserver.Delay, Delay: faultDelay, When: "after"}},
	}
	var out []fakeserver.Rule
	left := 1.0
	for _, e := range entries {
		if e.p <= 0 || left <= 0 {
			continue
		}
		r := e.r
		r.Path = "/api/*"
		r.Probability = min(e.p/left, 0.999)
		left -= e.p
		out = append(out, r)
	}
	return out
}

func (m faultMix) String() string {
	return fmt.Sprintf("%.1f%% answer lost after commit, %.1f%% 503 before commit, %.1f%% connection reset, %.1f%% 429 Retry-After, %.1f%% delayed",
		m.drop*100, m.errBefore*100, m.reset*100, m.rateLimit*100, (m.delayBefore+m.delayAfter)*100)
}

// env is where the run's servers are: in-process fakes, or external URLs
// with faults injected by the client's transport.
type env struct {
	cfg          Config
	mix          faultMix
	a55URL       string
	coinepayURL  string
	a55Srv       *localFake
	coinepaySrv  *localFake
	a55Fake      *a55fake.Fake     // the in-process A55 fake's own API: answers, triggers
	clientFaults []*faultTransport // external mode, one per external provider
	rules        []fakeserver.Rule // the in-process fakes' fault rules

	// External servers may have served earlier runs: the run reads only
	// the ledger entries after ledgerBase and counts stats above statsBase.
	ledgerBase map[string]uint64
	statsBase  map[string]fakeserver.Stats
}

func startEnv(cfg Config) (*env, error) {
	e := &env{cfg: cfg, mix: mixFor(cfg.FaultRate)}
	e.rules = e.mix.rules()
	if cfg.A55URL != "" {
		e.a55URL = strings.TrimRight(cfg.A55URL, "/")
	} else {
		e.a55Srv = newLocalFake(cfg.Seed, localMaxOperations(cfg.segment()), func(en *fakeserver.Engine) http.Handler {
			e.a55Fake = a55fake.New(en, a55fake.Config{Clients: fakeserver.Credentials(cfg.A55ClientID, cfg.A55ClientSecret, nil),
				RateLimit: -1, RateWindow: time.Minute})
			return e.a55Fake.Handler()
		})
		e.a55URL = e.a55Srv.URL
		if err := e.a55Srv.addFaults(e.rules); err != nil {
			e.close()
			return nil, err
		}
	}
	big := fakeserver.MustDecimal("100000000.00")
	if cfg.CoinepayURL != "" {
		e.coinepayURL = strings.TrimRight(cfg.CoinepayURL, "/")
		if err := e.adminPost(e.coinepayURL+"/_fakepay/balance", map[string]string{"api_key": cfg.CoinepayKey, "amount": big.String()}); err != nil {
			e.close()
			return nil, fmt.Errorf("chaos: set coinepay balance: %w", err)
		}
	} else {
		e.coinepaySrv = newLocalFake(cfg.Seed+1, localMaxOperations(cfg.segment()), func(en *fakeserver.Engine) http.Handler {
			return coinepayfake.New(en, coinepayfake.Config{Keys: fakeserver.Credentials(cfg.CoinepayKey, cfg.CoinepaySecret, nil),
				StartBalance: &big}).Handler()
		})
		e.coinepayURL = e.coinepaySrv.URL
		if err := e.coinepaySrv.addFaults(e.rules); err != nil {
			e.close()
			return nil, err
		}
	}
	if err := e.markExternal(); err != nil {
		e.close()
		return nil, fmt.Errorf("chaos: read the external ledger: %w", err)
	}
	return e, nil
}

// markExternal notes where each external server's ledger and counters
// stand before the run, so that operations and requests of earlier runs
// are neither taken as lost nor counted.
func (e *env) markExternal() error {
	e.ledgerBase = map[string]uint64{}
	e.statsBase = map[string]fakeserver.Stats{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, u := range e.externalURLs() {
		var page struct {
			LastSeq uint64 `json:"last_seq"`
		}
		if err := e.adminGet(ctx, u+"/_fakepay/ledger?limit=1", &page); err != nil {
			return err
		}
		var st fakeserver.Stats
		if err := e.adminGet(ctx, u+"/_fakepay/stats", &st); err != nil {
			return err
		}
		e.ledgerBase[u], e.statsBase[u] = page.LastSeq, st
	}
	return nil
}

func (e *env) close() {
	for _, f := range e.locals() {
		f.close()
	}
}

// locals returns the in-process fakes.
func (e *env) locals() []*localFake {
	var out []*localFake
	if e.a55Srv != nil {
		out = append(out, e.a55Srv)
	}
	if e.coinepaySrv != nil {
		out = append(out, e.coinepaySrv)
	}
	return out
}

// httpClient is the client the provider's SDK client sends through: the
// fault-injecting transport for an external server.
func (e *env) httpClient(provider string) *http.Client {
	hc := corekit.DefaultHTTPClient()
	external := (provider == providerA55 && e.cfg.A55URL != "") || (provider == providerCoinepay && e.cfg.CoinepayURL != "")
	if external {
		ft := newFaultTransport(hc.Transport, e.mix, e.cfg.Seed+uint64(len(e.clientFaults)))
		e.clientFaults = append(e.clientFaults, ft)
		hc.Transport = ft
	}
	if e.cfg.wrapTransport != nil {
		hc.Transport = e.cfg.wrapTransport(provider, hc.Transport)
	}
	return hc
}

// stopFaults ends the injected faults (an outage ends) so that the last
// resumed operations can settle.
func (e *env) stopFaults() {
	for _, f := range e.locals() {
		f.engine.Faults().Clear()
	}
	for _, ft := range e.clientFaults {
		ft.setStopped(true)
	}
}

// restartFaults brings the faults back after stopFaults, for the next
// segment of the run.
func (e *env) restartFaults() error {
	for _, f := range e.locals() {
		f.engine.Faults().Clear()
		if err := f.addFaults(e.rules); err != nil {
			return err
		}
	}
	for _, ft := range e.clientFaults {
		ft.setStopped(false)
	}
	return nil
}

func (e *env) faultsDescription() string {
	where := "server-side, in the fakes"
	if e.cfg.A55URL != "" || e.cfg.CoinepayURL != "" {
		where = "client-side for external servers"
	}
	return e.mix.String() + " (" + where + ")"
}

// ledger returns the operations the servers executed since the last call
// (the first: since the run began).
func (e *env) ledger(ctx context.Context) ([]fakeserver.Operation, error) {
	var ops []fakeserver.Operation
	for _, f := range e.locals() {
		more, err := f.newOps()
		if err != nil {
			return nil, err
		}
		ops = append(ops, more...)
	}
	for _, u := range e.externalURLs() {
		after := strconv.FormatUint(e.ledgerBase[u], 10)
		for {
			var v struct {
				Operations []fakeserver.Operation `json:"operations"`
				Next       string                 `json:"next"`
			}
			if err := e.adminGet(ctx, u+"/_fakepay/ledger?limit=1000&after="+after, &v); err != nil {
				return nil, err
			}
			for _, op := range v.Operations {
				e.ledgerBase[u] = max(e.ledgerBase[u], op.Seq)
				if (op.Provider == providerA55 && e.a55URL == u) || (op.Provider == providerCoinepay && e.coinepayURL == u) {
					ops = append(ops, op)
				}
			}
			if v.Next == "" || v.Next == after {
				break
			}
			after = v.Next
		}
	}
	return ops, nil
}

// serverStats counts what the servers saw: requests, replays, conflicts.
func (e *env) serverStats(ctx context.Context) (ServerStats, error) {
	var st ServerStats
	add := func(s fakeserver.Stats) {
		st.Requests += s.Requests
		st.Replays += s.Replayed
		st.Conflicts += s.Conflicts
		st.Executed += s.Executed
	}
	for _, f := range e.locals() {
		add(f.engine.Stats())
	}
	for _, u := range e.externalURLs() {
		var s fakeserver.Stats
		if err := e.adminGet(ctx, u+"/_fakepay/stats", &s); err != nil {
			return st, err
		}
		if b, ok := e.statsBase[u]; ok && s.Requests >= b.Requests {
			s.Requests -= b.Requests
			s.Replayed -= b.Replayed
			s.Conflicts -= b.Conflicts
			s.Executed -= b.Executed
		}
		add(s)
	}
	return st, nil
}

func (e *env) externalURLs() []string {
	var out []string
	if e.cfg.A55URL != "" {
		out = append(out, strings.TrimRight(e.cfg.A55URL, "/"))
	}
	if u := strings.TrimRight(e.cfg.CoinepayURL, "/"); u != "" && (len(out) == 0 || out[0] != u) {
		out = append(out, u)
	}
	return out
}

func (e *env) adminGet(ctx context.Context, url string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: HTTP %d", req.URL.Path, resp.StatusCode)
	}
	return json.NewDecoder(io.LimitReader(resp.Body, 256<<20)).Decode(out)
}

func (e *env) adminPost(url string, body any) error {
	b, _ := json.Marshal(body)
	resp, err := http.Post(url, "application/json", bytes.NewReader(b))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return nil
}

// faultTransport injects the fault mix on the client side, for servers the
// run does not control: it drops answers after the server has them, answers
// 503 or 429 itself before sending, fails as a reset connection would, or
// delays a request before sending it or its answer after.
type faultTransport struct {
	next http.RoundTripper
	mix  faultMix

	mu      sync.Mutex
	rng     *rand.Rand
	stopped bool
}

func newFaultTransport(next http.RoundTripper, mix faultMix, seed uint64) *faultTransport {
	return &faultTransport{next: next, mix: mix, rng: rand.New(rand.NewPCG(seed, seed^0xfa17))}
}

func (t *faultTransport) setStopped(stopped bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stopped = stopped
}

var errInjectedReset = errors.New("chaos: connection reset (injected)")
var errInjectedDrop = errors.New("chaos: answer lost after the server had it (injected)")

func (t *faultTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !strings.HasPrefix(req.URL.Path, "/api/") {
		return t.next.RoundTrip(req)
	}
	t.mu.Lock()
	x := t.rng.Float64()
	stopped := t.stopped
	t.mu.Unlock()
	m := t.mix
	synth := func(status int, retryAfter string) *http.Response {
		h := http.Header{"Content-Type": {"application/json"}}
		if retryAfter != "" {
			h.Set("Retry-After", retryAfter)
		}
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return &http.Response{StatusCode: status, Status: http.StatusText(status), Header: h, Request: req,
			Body: io.NopCloser(strings.NewReader(`{}`)), ProtoMajor: 1, ProtoMinor: 1}
	}
	switch {
	case stopped:
	case x < m.drop:
		resp, err := t.next.RoundTrip(req)
		if err != nil {
			return nil, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		return nil, errInjectedDrop
	case x < m.drop+m.errBefore:
		return synth(http.StatusServiceUnavailable, ""), nil
	case x < m.drop+m.errBefore+m.reset:
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, errInjectedReset
	case x < m.drop+m.errBefore+m.reset+m.rateLimit:
		return synth(http.StatusTooManyRequests, "1"), nil
	case x < m.drop+m.errBefore+m.reset+m.rateLimit+m.delayBefore:
		if err := sleepCtx(req, faultDelay); err != nil {
			return nil, err
		}
	case x < m.total():
		resp, err := t.next.RoundTrip(req)
		if err == nil {
			if err := sleepCtx(req, faultDelay); err != nil {
				_ = resp.Body.Close()
				return nil, err
			}
		}
		return resp, err
	}
	return t.next.RoundTrip(req)
}

// faultDelay is how long a delay fault holds a request.
const faultDelay = 2 * time.Millisecond

func sleepCtx(req *http.Request, d time.Duration) error {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-req.Context().Done():
		return req.Context().Err()
	}
}

// CloseIdleConnections reaches the wrapped transport.
func (t *faultTransport) CloseIdleConnections() {
	if c, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
