package chaos

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os/exec"
	"sort"
	"sync"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/coinepay"
	"github.com/payonce/payonce/coinepay/coinepaytest"
	"github.com/payonce/payonce/internal/fake/fakeserver"
	"github.com/payonce/payonce/payoncetest"
)

// CrashConfig is one crash run: worker processes share a journal and work
// through a plan of references while the parent SIGKILLs them at chosen
// moments, starts replacements and, once, moves the fakes' clock 25 hours.
type CrashConfig struct {
	References int     // business operations in the plan, one reference each
	Workers    int     // worker processes at once
	Seed       uint64  // same seed, same plan and same kill decisions
	KillRate   float64 // chance of a kill at each sync point
	HoldRate   float64 // chance, after a request left, of a kill while the fake holds it
	DualRate   float64 // share of references delivered to two workers at once
	LateRate   float64 // share of killed references redelivered only after the 25 h move
	// RevisitRate is the share of settled references delivered once more
	// after the 25 h move (they must answer from the journal).
	RevisitRate float64
	FaultRate   float64 // share of requests the fakes fault (lost answers, 503, delays)
	// FlipRate is the share of references the provider answers
	// differently twice under one key: a 4xx it does not keep, then the
	// operation (see flipState).
	FlipRate float64
	// StallRate is the share of references whose first worker stalls
	// past its journal lease mid-run (SIGSTOP, then SIGCONT; see
	// stallState).
	StallRate float64
	// OtherMerchantRate is the share of card charges a second merchant
	// also runs under the same reference: the same A55 client ID on
	// another origin (sandbox and production), sharing the journal.
	OtherMerchantRate float64
	// LookAlikeRate is the share of card charges that get a look-alike:
	// another reference with the same amount and description whose every
	// attempt the provider refuses with a 503 before anything runs. The
	// A55 fakes answer without keys, as A55 documents, so the look-alike's
	// settle lookup finds only the other reference's charge, which it
	// must never take: the look-alike is settled as not executed.
	LookAlikeRate float64
	MaxKills      int // kills per reference at most, so that every reference settles
	// LeasedRetry is how long the queue waits before it delivers again a
	// reference another run holds (0: 200 ms). The workers' leases last
	// crashLease, so a lease a killed worker left ends well before.
	LeasedRetry time.Duration
	// ClockSkews are the clock offsets of the first worker slots, one
	// each: their processes read the fakes' clock plus the skew, as hosts
	// whose clocks run ahead (minutes, or days). The last slot always
	// keeps a true clock.
	ClockSkews []time.Duration

	// Journal is where the workers' journal lives: "" for a new SQLite
	// file in a temporary directory, a file path for SQLite, or a
	// postgres:// URL (the run works in a schema of its own and drops it).
	Journal string

	A55ClientID, A55ClientSecret string
	CoinepayKey, CoinepaySecret  string

	Progress io.Writer // one line per phase (nil: none)

	// WorkerCommand returns the command of a new worker process; nil
	// re-executes the running binary with WorkerEnv=1.
	WorkerCommand func() (*exec.Cmd, error)
}

// DefaultCrashConfig is `go run ./cmd/chaos -crash`.
func DefaultCrashConfig() CrashConfig {
	return CrashConfig{
		References: 300, Workers: 6, Seed: 1,
		KillRate: 0.06, HoldRate: 0.05, DualRate: 0.1, LateRate: 0.4, RevisitRate: 0.15,
		FaultRate: 0.1, MaxKills: 3, FlipRate: 0.05, StallRate: 0.03, OtherMerchantRate: 0.1, LookAlikeRate: 0.03,
		ClockSkews:  []time.Duration{10 * time.Minute, 48 * time.Hour},
		A55ClientID: "demo-client", A55ClientSecret: "demo-secret",
		CoinepayKey: "demo-key", CoinepaySecret: "demo-secret",
	}
}

// ShortCrashConfig is the crash phase of the default run: a few seconds.
func ShortCrashConfig() CrashConfig {
	c := DefaultCrashConfig()
	c.References, c.Workers = 40, 3
	c.KillRate = 0.1
	return c
}

// Validate refuses a crash config that cannot run.
func (c CrashConfig) Validate() error {
	rate := func(f float64) bool { return f >= 0 && f <= 1 }
	switch {
	case c.References < 1:
		return errors.New("chaos: crash references must be at least 1")
	case c.Workers < 1:
		return errors.New("chaos: crash workers must be at least 1")
	case !rate(c.KillRate) || !rate(c.HoldRate) || !rate(c.DualRate) || !rate(c.LateRate) || !rate(c.RevisitRate) || !rate(c.FlipRate) || !rate(c.StallRate) || !rate(c.OtherMerchantRate) || !rate(c.LookAlikeRate):
		return errors.New("chaos: crash rates must be within 0..1")
	case !(c.FaultRate >= 0 && c.FaultRate <= 0.5): // NaN too
		return errors.New("chaos: crash fault rate must be within 0..0.5")
	case c.MaxKills < 0:
		return errors.New("chaos: crash max kills must not be negative")
	case c.LeasedRetry < 0:
		return errors.New("chaos: crash leased retry must not be negative")
	}
	return nil
}

// holdDelay is how long the fakes hold a request in the crash run's delay
// faults: long enough for a kill to land while it is held.
const holdDelay = 20 * time.Millisecond

// crashFaultRules are the crash run's server faults, a share f of the API
// requests: a third answers lost after the commit, a third 503 before it,
// a third held (half before the commit, half after).
func crashFaultRules(f float64) []fakeserver.Rule {
	if f <= 0 {
		return nil
	}
	p := f / 3
	return []fakeserver.Rule{
		{Fault: fakeserver.DropAfterCommit, Path: "/api/*", Probability: p},
		{Fault: fakeserver.ErrorBeforeCommit, Status: 503, Path: "/api/*", Probability: p / (1 - p)},
		{Fault: fakeserver.Delay, Delay: holdDelay, When: "before", Path: "/api/*", Probability: p / 2 / (1 - 2*p)},
		{Fault: fakeserver.Delay, Delay: holdDelay, When: "after", Path: "/api/*", Probability: p / 2 / (1 - 2.5*p)},
	}
}

// refState is what the parent knows of one reference.
type refState struct {
	item        planItem
	deliveries  int
	kills       int
	temporary   int
	late        bool // its redelivery waits for the 25 h move
	settled     bool
	reports     []doneReport // every delivery's report, in order
	sentSettled bool         // a delivery that began after it settled (or ended in doubt) sent a request
	flip        *flipState   // the provider answers its key differently twice (nil: no)
	stall       *stallState  // its first worker stalls past its lease (nil: no)
	definite    bool         // settled by an answer (not an outcome in doubt)
}

// crashRun is one crash run's parent.
type crashRun struct {
	cfg     CrashConfig
	latency time.Duration // the fakes' latency per request (CompareJournals)
	newCmd  func() (*exec.Cmd, error)
	a55     *a55test.Server
	a55b    *a55test.Server // the second merchant's A55 origin
	cp      *coinepaytest.Server
	clock   *payoncetest.Clock // both fakes' clock
	wcfg    workerConfig
	scopes  map[string]string // the journal scope of each provider's client
	a55c    *a55.Client       // the parent's A55 client: setup, and settling charges in doubt

	mu       sync.Mutex
	refs     map[string]*refState
	moved    bool // the fakes' clock moved 25 h
	crashes  map[string]int
	problems []string
	// workerFailures counts workers that died on their own or broke the
	// protocol: never planned, so the run fails.
	workerFailures int
	// exitFailures counts workers whose exit checkExit found wrong (a
	// race report, a stopped worker's exit other than 0): they fail the
	// run, but say nothing about whether workers can run at all.
	exitFailures int
	q            *queue          // the current phase's queue
	base         workerConfig    // the current phase's worker config, true clock
	ctx          context.Context // the run's
	stalls       int             // workers stopped past their lease
	takenOver    int             // stalled workers whose reference another settled meanwhile
	staleSends   int             // attempts a stalled worker sent after it resumed
	// exits are the stopped workers' exits the run has yet to see: a
	// -race worker takes a second to exit, which the next phase need
	// not wait for.
	exits sync.WaitGroup
}

// chance is a seeded draw in [0,1) for the given decision: the same seed
// decides the same way whatever the timing.
func (r *crashRun) chance(parts ...any) float64 {
	h := fnv.New64a()
	fmt.Fprint(h, r.cfg.Seed)
	for _, p := range parts {
		fmt.Fprintf(h, "\x00%v", p)
	}
	x := h.Sum64()
	x ^= x >> 33 // fnv's low bits mix poorly: fold the high ones in
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	return float64(x>>11) / (1 << 53)
}

// decide plays the parent at a worker's sync point: kill there, or ack and
// perhaps kill a little later while the fake holds the request.
func (r *crashRun) decide(p *workerProc, d delivery, phase, key string, i int) (bool, time.Duration) {
	r.mu.Lock()
	rs := r.refs[d.item.ref]
	if fs := rs.flip; fs != nil && d.n <= 2 {
		r.mu.Unlock()
		r.flipStep(fs, d.item, d, phase, key)
		return false, 0
	}
	if ss := rs.stall; ss != nil && d.n == 1 {
		r.mu.Unlock()
		if r.stallStep(ss, d.item, d, phase, key) {
			r.stall(p, ss, d)
		}
		return false, 0
	}
	defer r.mu.Unlock()
	if rs.kills >= r.cfg.MaxKills || rs.stall != nil && rs.stall.takingOver {
		return false, 0
	}
	if r.chance(d.item.ref, d.n, phase, i) < r.cfg.KillRate {
		rs.kills++
		return true, 0
	}
	if phase == phaseSend && r.chance(d.item.ref, d.n, "hold", i) < r.cfg.HoldRate {
		rs.kills++ // counted as a crash when it lands (the request may answer first)
		return false, time.Duration(r.chance(d.item.ref, d.n, "delay", i) * float64(2*holdDelay))
	}
	return false, 0
}

// queue is the run's job queue: deliveries wait in it, and a phase ends
// when none waits or is being worked on.
type queue struct {
	mu    sync.Mutex
	cond  *sync.Cond
	items []delivery
	open  int // deliveries pushed and not yet finished
}

func newQueue() *queue {
	q := &queue{}
	q.cond = sync.NewCond(&q.mu)
	return q
}

func (q *queue) push(d delivery) {
	q.mu.Lock()
	q.items = append(q.items, d)
	q.open++
	q.mu.Unlock()
	q.cond.Broadcast()
}

// leasedRetry is CrashConfig.LeasedRetry's default.
const leasedRetry = 200 * time.Millisecond

func (c CrashConfig) leasedRetry() time.Duration {
	if c.LeasedRetry > 0 {
		return c.LeasedRetry
	}
	return leasedRetry
}

// pushLater queues d after wait; the phase stays open meanwhile.
func (q *queue) pushLater(d delivery, wait time.Duration) {
	q.mu.Lock()
	q.open++
	q.mu.Unlock()
	time.AfterFunc(wait, func() {
		q.mu.Lock()
		q.items = append(q.items, d)
		q.mu.Unlock()
		q.cond.Broadcast()
	})
}

// pop waits for a delivery; false when the phase is over. A worker
// whose clock runs ahead (skewed) is not given a delivery another such
// worker left in doubt: a worker with a true clock takes it.
func (q *queue) pop(skewed bool) (delivery, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for {
		for i, d := range q.items {
			if skewed && d.honest {
				continue
			}
			q.items = append(q.items[:i:i], q.items[i+1:]...)
			return d, true
		}
		if len(q.items) == 0 && q.open == 0 {
			return delivery{}, false
		}
		q.cond.Wait()
	}
}

// finish ends a popped delivery (after any redelivery it caused was pushed).
func (q *queue) finish() {
	q.mu.Lock()
	q.open--
	q.mu.Unlock()
	q.cond.Broadcast()
}

// RunCrash performs one crash run and returns its report. The error is for
// a run that could not take place; a run that found duplicates or lost
// operations returns a report whose Passed() is false.
func RunCrash(ctx context.Context, cfg CrashConfig) (*CrashReport, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	r := &crashRun{cfg: cfg, newCmd: cfg.WorkerCommand, refs: map[string]*refState{}, crashes: map[string]int{}, ctx: ctx}
	if r.newCmd == nil {
		r.newCmd = defaultWorkerCommand
	}
	r.startFakes()
	defer r.closeFakes()

	jr, err := prepareJournal(ctx, cfg.Journal)
	if err != nil {
		return nil, err
	}
	defer jr.cleanup()
	defer r.exits.Wait() // before the cleanup: no worker outlives the run's journal
	setupKeys, err := r.setup(ctx)
	if err != nil {
		return nil, err
	}
	r.wcfg.Journal, r.wcfg.Schema, r.wcfg.Sync = jr.dsn, jr.schema, true
	plan := buildPlan(cfg.References, cfg.Seed)
	for _, it := range plan[:cfg.References] {
		if it.work == workCharge && r.chance(it.ref, "other") < cfg.OtherMerchantRate {
			plan = append(plan, planItem{index: it.index, work: workCharge, ref: otherPrefix + it.ref, other: true})
		}
	}
	alikes := 0
	// At least one look-alike when the rate is not 0, so that a short run
	// (the default run's crash phase) has the case too.
	firstCharge := -1
	for i, it := range plan[:cfg.References] {
		if it.work == workCharge {
			firstCharge = i
			break
		}
	}
	for i, it := range plan[:cfg.References] {
		if it.work != workCharge || r.chance(it.ref, "look-alike") >= cfg.LookAlikeRate && !(i == firstCharge && cfg.LookAlikeRate > 0 && !r.anyLookAlike(plan[:cfg.References])) {
			continue
		}
		alike := planItem{index: it.index, work: workLookAlike, ref: fmt.Sprintf("order-%d/%s", it.index, workLookAlike)}
		plan = append(plan, alike)
		alikes++
		// Before the random faults: the look-alike's key meets no other.
		if err := r.a55.AddFault(payoncetest.Rule{Fault: payoncetest.FaultErrorBeforeCommit, Status: 503, Path: "/api/*",
			IdempotencyKey: lookAlikeKey(alike, time.Now()).String()}); err != nil {
			return nil, err
		}
	}
	for _, rule := range crashFaultRules(cfg.FaultRate) {
		if err := r.a55.AddFault(payoncetest.Rule{Fault: payoncetest.FaultKind(rule.Fault), Path: rule.Path, Probability: rule.Probability,
			Status: rule.Status, Delay: rule.Delay, When: rule.When}); err != nil {
			return nil, err
		}
		if err := r.cp.AddFault(payoncetest.Rule{Fault: payoncetest.FaultKind(rule.Fault), Path: rule.Path, Probability: rule.Probability,
			Status: rule.Status, Delay: rule.Delay, When: rule.When}); err != nil {
			return nil, err
		}
		if err := r.a55b.AddFault(payoncetest.Rule{Fault: payoncetest.FaultKind(rule.Fault), Path: rule.Path, Probability: rule.Probability,
			Status: rule.Status, Delay: rule.Delay, When: rule.When}); err != nil {
			return nil, err
		}
	}

	start := time.Now()
	q := newQueue()
	dual, flipped := 0, 0
	for _, it := range plan {
		rs := &refState{item: it, late: r.chance(it.ref, "late") < cfg.LateRate}
		switch {
		case it.work == workLookAlike:
			// Its key's answers are the 503 rule's alone.
		case r.chance(it.ref, "flip") < cfg.FlipRate:
			rs.flip = newFlipState()
			flipped++
		case r.chance(it.ref, "stall") < cfg.StallRate:
			rs.stall = &stallState{}
		}
		r.refs[it.ref] = rs
		first := r.nextDelivery(rs)
		// A stalled reference's key is made on a true clock, so that the
		// worker taking it over sends it (one whose clock is true does
		// not send a key made on a clock ahead): it goes to a worker
		// with a true clock, alone.
		first.honest = first.honest || rs.stall != nil
		q.push(first)
		if rs.flip != nil || rs.stall == nil && r.chance(it.ref, "dual") < cfg.DualRate {
			q.push(r.nextDelivery(rs))
			dual++
		}
	}
	r.progress("crash: phase 1, %d references (%d delivered twice at once, %d of them answered differently twice, %d charges with a look-alike never run) to %d workers",
		len(plan), dual, flipped, alikes, cfg.Workers)
	if err := r.phase(ctx, q); err != nil {
		return nil, err
	}

	// A day and an hour later: the servers forgot every key.
	r.clock.Advance(25 * time.Hour)
	r.mu.Lock()
	r.moved = true
	q = newQueue()
	late, revisit := 0, 0
	for _, it := range plan {
		rs := r.refs[it.ref]
		switch {
		case !rs.settled:
			late++
			q.push(r.nextDeliveryLocked(rs))
		case r.chance(it.ref, "revisit") < cfg.RevisitRate:
			revisit++
			q.push(r.nextDeliveryLocked(rs))
		}
	}
	r.mu.Unlock()
	r.progress("crash: phase 2, fakes' clock +25h: %d references redelivered late, %d settled ones again", late, revisit)
	if err := r.phase(ctx, q); err != nil {
		return nil, err
	}
	r.exits.Wait() // the workers' exits count in the report
	elapsed := time.Since(start)

	rep, err := r.report(ctx, jr, plan, setupKeys)
	if err != nil {
		return nil, err
	}
	rep.Dual, rep.Late, rep.Revisited, rep.Elapsed = dual, late, revisit, elapsed
	rep.Flipped, rep.ClockSkews, rep.SecondMerchant = flipped, min(len(cfg.ClockSkews), cfg.Workers-1), len(plan)-cfg.References-alikes
	rep.LookAlikes = alikes
	r.mu.Lock()
	rep.Stalls, rep.StallsTakenOver, rep.StaleSends = r.stalls, r.takenOver, r.staleSends
	r.mu.Unlock()
	if elapsed > 0 {
		rep.OpsPerSecond = float64(rep.Operations) / elapsed.Seconds()
	}
	return rep, nil
}

// anyLookAlike reports whether the rate alone gives one of plan's card
// charges a look-alike.
func (r *crashRun) anyLookAlike(plan []planItem) bool {
	for _, it := range plan {
		if it.work == workCharge && r.chance(it.ref, "look-alike") < r.cfg.LookAlikeRate {
			return true
		}
	}
	return false
}

// startFakes starts both fakes in-process on one clock.
func (r *crashRun) startFakes() {
	big, _ := payonce.ParseAmount("100000000.00")
	r.clock = payoncetest.NewClock()
	// The A55 fakes answer as A55 documents, without the key that made a
	// charge: a settle lookup tells charges apart by what they report and
	// by what the journal holds, never by the fake's key.
	r.a55 = a55test.NewServer(payoncetest.WithSeed(r.cfg.Seed), a55test.WithRateLimit(-1, time.Minute), payoncetest.WithClock(r.clock),
		a55test.WithCredentials(r.cfg.A55ClientID, r.cfg.A55ClientSecret), payoncetest.WithLatency(r.latency), payoncetest.WithDocumentedAnswers())
	r.a55b = a55test.NewServer(payoncetest.WithSeed(r.cfg.Seed+2), a55test.WithRateLimit(-1, time.Minute), payoncetest.WithClock(r.clock),
		a55test.WithCredentials(r.cfg.A55ClientID, r.cfg.A55ClientSecret), payoncetest.WithLatency(r.latency), payoncetest.WithDocumentedAnswers())
	r.cp = coinepaytest.NewServer(payoncetest.WithSeed(r.cfg.Seed+1), coinepaytest.WithBalance(big), payoncetest.WithClock(r.clock),
		coinepaytest.WithCredentials(r.cfg.CoinepayKey, r.cfg.CoinepaySecret), payoncetest.WithLatency(r.latency))
}

func (r *crashRun) closeFakes() {
	r.a55.Close()
	r.a55b.Close()
	r.cp.Close()
}

func (r *crashRun) progress(format string, args ...any) {
	if r.cfg.Progress != nil {
		fmt.Fprintf(r.cfg.Progress, format+"\n", args...)
	}
}

func (r *crashRun) nextDelivery(rs *refState) delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.nextDeliveryLocked(rs)
}

func (r *crashRun) nextDeliveryLocked(rs *refState) delivery {
	rs.deliveries++
	// A look-alike's key is made on the machine's clock (lookAlikeKey): a worker
	// whose clock runs ahead would find it too old to send.
	return delivery{item: rs.item, n: rs.deliveries, honest: rs.item.work == workLookAlike}
}

// setup creates, without faults and without a journal, what the plan
// needs: the wallet the charges go to and the cards the recharges fund.
// It returns the keys it used, which the reconciliation leaves out.
func (r *crashRun) setup(ctx context.Context) (map[string]bool, error) {
	keys := map[string]bool{}
	clock := payonce.WithClock(r.clock.Now)
	a, err := a55.NewClient(a55.Auth{ClientID: r.cfg.A55ClientID, ClientSecret: r.cfg.A55ClientSecret, TokenURL: r.a55.TokenURL()},
		payonce.WithBaseURL(r.a55.URL), clock)
	if err != nil {
		return nil, err
	}
	w, err := a.Wallets.Create(ctx, a55test.WalletRequest("crash wallet"))
	if err != nil {
		return nil, fmt.Errorf("chaos: create wallet: %w", err)
	}
	keys[w.Meta.Key.String()] = true
	c, err := coinepay.NewClient(r.cfg.CoinepayKey, r.cfg.CoinepaySecret, payonce.WithBaseURL(r.cp.URL), clock)
	if err != nil {
		return nil, err
	}
	var cards []string
	for range 8 {
		res, err := c.Cards.Apply(ctx, &coinepay.ApplyRequest{HeaderID: "hdr_chaos", PackageID: "pkg_basic"})
		if err != nil {
			return nil, fmt.Errorf("chaos: issue card: %w", err)
		}
		keys[res.Meta.Key.String()] = true
		cards = append(cards, res.CardID)
	}
	b, err := a55.NewClient(a55.Auth{ClientID: r.cfg.A55ClientID, ClientSecret: r.cfg.A55ClientSecret, TokenURL: r.a55b.TokenURL()},
		payonce.WithBaseURL(r.a55b.URL), clock)
	if err != nil {
		return nil, err
	}
	w2, err := b.Wallets.Create(ctx, a55test.WalletRequest("crash wallet, second merchant"))
	if err != nil {
		return nil, fmt.Errorf("chaos: create the second merchant's wallet: %w", err)
	}
	keys[w2.Meta.Key.String()] = true
	r.scopes = map[string]string{providerA55: a.Core().Scope(), providerCoinepay: c.Core().Scope(), providerA55Other: b.Core().Scope()}
	r.a55c = a
	r.wcfg = workerConfig{
		A55URL: r.a55.URL, A55OtherURL: r.a55b.URL, OtherWallet: w2.UUID, OtherMerchant: w2.MerchantUUID,
		A55ClientID: r.cfg.A55ClientID, A55ClientSecret: r.cfg.A55ClientSecret,
		CoinepayURL: r.cp.URL, CoinepayKey: r.cfg.CoinepayKey, CoinepaySecret: r.cfg.CoinepaySecret,
		Wallet: w.UUID, Merchant: w.MerchantUUID, Cards: cards,
	}
	return keys, nil
}

// phase runs the queue to its end with cfg.Workers worker processes,
// replacing each killed one.
func (r *crashRun) phase(ctx context.Context, q *queue) error {
	wcfg := r.wcfg
	wcfg.ClockOffset = time.Until(r.clock.Now())
	r.mu.Lock()
	r.q, r.base = q, wcfg
	r.mu.Unlock()
	var wg sync.WaitGroup
	errs := make([]error, r.cfg.Workers)
	for s := range r.cfg.Workers {
		wg.Add(1)
		wc := wcfg
		// One slot at least keeps a true clock: a skewed worker's doubt
		// goes to such a one.
		if s < len(r.cfg.ClockSkews) && s < r.cfg.Workers-1 {
			wc.ClockOffset += r.cfg.ClockSkews[s]
			wc.skewed = r.cfg.ClockSkews[s] != 0
		}
		go func() {
			defer wg.Done()
			errs[s] = r.slot(ctx, q, wc)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// slot is one worker place: it keeps a worker process running and feeds
// it deliveries until the queue is done.
func (r *crashRun) slot(ctx context.Context, q *queue, wcfg workerConfig) error {
	var p *workerProc
	defer func() {
		if p != nil {
			p.stopping()
			r.exits.Go(func() { r.checkExit(p, p.reap(), true) })
		}
	}()
	for {
		d, ok := q.pop(wcfg.skewed)
		if !ok {
			return nil
		}
		if err := ctx.Err(); err != nil {
			q.finish()
			return err
		}
		r.mu.Lock()
		// An outcome in doubt is no last word while workers' clocks
		// differ: one whose clock makes the key young may still send it.
		d.settled = r.refs[d.item.ref].definite
		r.mu.Unlock()
		if p == nil {
			var err error
			if p, err = startWorker(r.newCmd, wcfg); err != nil {
				q.push(d)
				q.finish()
				r.abandon(q)
				return err
			}
		}
		res := deliver(ctx, p, d, func(d delivery, phase, key string, i int) (bool, time.Duration) {
			return r.decide(p, d, phase, key, i)
		})
		if res.err != nil && ctx.Err() != nil {
			_ = p.reap()
			p = nil
			q.finish()
			r.abandon(q)
			return ctx.Err()
		}
		res.skewed = wcfg.skewed
		failures := r.settle(q, d, res)
		if k := p.killedAt(); k != "" || res.err != nil {
			if res.killed == "" && k == phaseHold {
				r.countCrash(phaseHold) // the hold kill landed after the answer
			}
			p.kill(phaseSetup) // a worker that broke the protocol goes too
			r.checkExit(p, p.reap(), false)
			p = nil
		}
		q.finish()
		if failures > maxWorkerFailures {
			r.abandon(q)
			return fmt.Errorf("chaos: %d workers failed unplanned, the last: %w", failures, res.err)
		}
	}
}

// maxWorkerFailures is how many unplanned worker deaths a run survives
// before it gives up: beyond a few, the workers cannot run at all.
const maxWorkerFailures = 10

// abandon empties the queue after a worker could not start: the run
// cannot go on.
func (r *crashRun) abandon(q *queue) {
	for {
		q.mu.Lock()
		n := len(q.items)
		q.items = nil
		q.open -= n
		q.mu.Unlock()
		q.cond.Broadcast()
		if n == 0 {
			return
		}
	}
}

// checkExit counts as a worker failure a worker whose race detector
// reported a race (built with -race, as go test's workers are), and one
// stopped the ordinary way (stopped) that did not exit 0 and that the run
// did not kill (a hold kill may land after the last answer): either is a
// defect of what the worker ran, whatever its journal says.
func (r *crashRun) checkExit(p *workerProc, exitErr error, stopped bool) {
	raced := p.stderr.sawRace()
	if !raced && (!stopped || exitErr == nil || p.killedAt() != "") {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.exitFailures++
	if raced {
		r.problemLocked("worker: the race detector reported a data race")
		return
	}
	r.problemLocked("worker: exit: %v", exitErr)
}

func (r *crashRun) countCrash(phase string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.crashes[phase]++
}

// maxTemporary bounds the redeliveries after temporary failures.
const maxTemporary = 20

// settle records how a delivery ended and redelivers as a queue would: a
// killed worker's reference goes to another worker (or, for a late one in
// the first phase, waits for the 25 h move); a temporary failure goes back
// to the queue. It returns the unplanned worker failures so far.
func (r *crashRun) settle(q *queue, d delivery, res deliveryResult) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.settleLocked(q, d, res)
	return r.workerFailures
}

func (r *crashRun) settleLocked(q *queue, d delivery, res deliveryResult) {
	rs := r.refs[d.item.ref]
	if rs.flip != nil {
		rs.flip.ended(d)
	}
	switch {
	case res.err != nil:
		r.workerFailures++
		r.problemLocked("worker: %v", res.err)
		q.push(r.nextDeliveryLocked(rs))
	case res.killed != "":
		r.crashes[res.killed]++
		if rs.settled {
			return // its twin settled it
		}
		if rs.late && !r.moved {
			return // redelivered after the 25 h move
		}
		q.push(r.nextDeliveryLocked(rs))
	default:
		if res.done.status == statusUnknown && res.skewed {
			res.done.status, res.done.detail = statusSkewedDoubt, "clock_ahead"
		}
		rs.reports = append(rs.reports, res.done)
		if res.done.status == statusTemporary && res.done.detail == payonce.KindName(payonce.ErrJournalLeased) {
			// Another run holds the entry (one that died holds it until
			// its lease ends): a queue retries later, without giving up.
			if !rs.settled {
				q.pushLater(r.nextDeliveryLocked(rs), r.cfg.leasedRetry())
			}
			return
		}
		if res.done.status == statusTemporary {
			rs.temporary++
			if rs.temporary <= maxTemporary && !rs.settled {
				q.push(r.nextDeliveryLocked(rs))
			}
			return
		}
		if res.done.status == statusSkewedDoubt {
			// A worker whose clock runs ahead finds keys too old or too
			// young to send: its doubt is its clock's. The queue gives
			// the job to another worker.
			if !rs.settled {
				nd := r.nextDeliveryLocked(rs)
				nd.honest = true
				q.push(nd)
			}
			return
		}
		if !rs.settled && rs.stall != nil {
			// The stalled worker resumes once this delivery ended. Its
			// reference was taken over unless the new worker left it
			// in doubt.
			rs.stall.takenOver = !inDoubt(res.done.status)
		}
		rs.settled = true
		if !inDoubt(res.done.status) {
			rs.definite = true
		}
		if res.sends > 0 && (d.settled || res.done.status == statusUnknown) {
			rs.sentSettled = true
		}
	}
}

func (r *crashRun) problemLocked(format string, args ...any) {
	if len(r.problems) < maxProblems {
		r.problems = append(r.problems, fmt.Sprintf(format, args...))
	}
}

// crashCounts returns the crashes by phase, sorted by phase name.
func (r *crashRun) crashCounts() ([]CauseCount, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]CauseCount, 0, len(r.crashes))
	total := 0
	for p, n := range r.crashes {
		out = append(out, CauseCount{Cause: p, Count: n})
		total += n
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Cause < out[j].Cause })
	return out, total
}
