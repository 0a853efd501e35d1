package chaos

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/coinepay"
)

// opRecord is what the clients learned about one operation (one key).
type opRecord struct {
	provider, kind, key string
	flow                string // a charge.create's payment flow
	order               string // a charge.create's order (its description)
	id                  string // the resource the client was told of
	ids                 map[string]bool
	done                bool // the client believes it executed
	failed              bool // it ended in a final error
	resumed             bool
	conflicts           int
	latency             time.Duration
}

// pendingStep is a step parked after a temporary failure: the submissions
// to resume, each with the error that carries its key.
type pendingStep struct {
	rec  *opRecord
	subs []pendingSub
}

type pendingSub struct {
	variant int
	err     error
}

// runner holds one run's clients and tallies.
type runner struct {
	cfg        Config
	a55        *a55.Client
	coinepay   *coinepay.Client
	walletUUID string
	merchantID string // the wallet's merchant, as its create answered
	stats      *retryStats
	telemetry  *telemetry // Config.Telemetry
	env        *env
	flows      *flowTally
	flowFailed atomic.Int64 // PIX and 3DS checks after the create that failed

	mu      sync.Mutex
	ops     []*opRecord
	parked  []*scenario
	failed  []string // descriptions of final failures
	done    atomic.Int64
	attempt atomic.Int64
	subs    atomic.Int64
	replays atomic.Int64 // answers the clients saw marked as replays
}

func (r *runner) newRecord(st step, key string) *opRecord {
	rec := &opRecord{provider: st.provider(), kind: st.kind, key: key, ids: map[string]bool{}}
	r.mu.Lock()
	r.ops = append(r.ops, rec)
	r.mu.Unlock()
	return rec
}

// runStep runs step st of sc, first time: a new key, the submissions in
// parallel. It reports whether the scenario may go on.
func (r *runner) runStep(ctx context.Context, sc *scenario, st step) bool {
	key, err := payonce.NewKey(time.Now(), uuid.NewString())
	if err != nil {
		r.fail(fmt.Sprintf("scenario %d: %v", sc.id, err))
		return false
	}
	rec := r.newRecord(st, key.String())
	if st.kind == kindChargeCreate {
		rec.flow, rec.order = sc.flow, description(sc, variantMain)
	}
	if err := r.answerFirst(sc, st, key.String()); err != nil {
		r.fail(fmt.Sprintf("scenario %d: %v", sc.id, err))
	}
	variants := []int{variantMain}
	if st.dup {
		variants = append(variants, variantMain)
	}
	if st.conflict {
		variants = append(variants, variantConflicting)
	}
	start := time.Now()
	subs := make([]pendingSub, len(variants))
	for i, v := range variants {
		subs[i] = pendingSub{variant: v}
	}
	ok, parked := r.settle(ctx, sc, st, rec, subs, func(ps pendingSub) []payonce.CallOption {
		return []payonce.CallOption{payonce.WithKey(key)}
	}, func(ps pendingSub) context.Context { return ctx })
	if ok {
		rec.latency = time.Since(start)
	}
	if parked {
		return false
	}
	return ok
}

// settle submits subs in parallel and sorts out the step's outcome: done
// (state moves on), parked (temporary failures to resume later) or failed.
func (r *runner) settle(ctx context.Context, sc *scenario, st step, rec *opRecord, subs []pendingSub,
	opts func(pendingSub) []payonce.CallOption, ctxFor func(pendingSub) context.Context) (ok, parked bool) {
	type outcome struct {
		res result
		err error
	}
	outs := make([]outcome, len(subs))
	var wg sync.WaitGroup
	for i, ps := range subs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := r.submit(ctxFor(ps), sc, st, ps.variant, opts(ps)...)
			outs[i] = outcome{res, err}
		}()
	}
	wg.Wait()
	var won *result
	var retry []pendingSub
	var final error
	for i, o := range outs {
		r.subs.Add(1)
		r.attempt.Add(int64(o.res.attempts))
		if o.res.replayed {
			r.replays.Add(1)
		}
		switch {
		case o.err == nil:
			rec.ids[o.res.id] = true
			if won == nil {
				won = &outs[i].res
			}
		case errors.Is(o.err, payonce.ErrIdempotencyConflict):
			rec.conflicts++
		case payonce.IsTemporary(o.err):
			retry = append(retry, pendingSub{variant: subs[i].variant, err: o.err})
		default:
			final = o.err
		}
	}
	if won != nil {
		rec.done, rec.id = true, won.id
		sc.apply(st, *won)
		if st.kind == kindChargeCreate {
			r.finishFlow(ctx, sc, won.charge)
		}
		r.done.Add(1)
		return true, false
	}
	if len(retry) > 0 {
		sc.pending = &pendingStep{rec: rec, subs: retry}
		r.mu.Lock()
		r.parked = append(r.parked, sc)
		r.mu.Unlock()
		return false, true
	}
	rec.failed = true
	r.done.Add(1)
	r.fail(fmt.Sprintf("%s %s: %v", rec.provider, rec.kind, final))
	return false, false
}

func (r *runner) fail(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.failed) < 20 {
		r.failed = append(r.failed, msg)
	}
}

// runScenario runs sc from its next step until it ends or parks.
func (r *runner) runScenario(ctx context.Context, sc *scenario) {
	for sc.next < len(sc.steps) {
		if !r.runStep(ctx, sc, sc.steps[sc.next]) {
			if sc.pending == nil {
				sc.failed = true
			}
			return
		}
		sc.next++
	}
}

// resume retries a parked scenario's step with the keys its errors carry
// (payonce.KeyOf), as a merchant's job queue would, then goes on
// with the rest of the scenario.
func (r *runner) resume(ctx context.Context, sc *scenario) {
	p := sc.pending
	sc.pending = nil
	p.rec.resumed = true
	ok, parked := r.settle(ctx, sc, sc.steps[sc.next], p.rec, p.subs,
		func(ps pendingSub) []payonce.CallOption {
			return []payonce.CallOption{payonce.WithKey(payonce.KeyOf(ps.err))}
		},
		func(pendingSub) context.Context { return ctx })
	if parked {
		return
	}
	if !ok {
		sc.failed = true
		return
	}
	sc.next++
	r.runScenario(ctx, sc)
}

// resumeParked resumes the parked scenarios round after round until none
// is left, and returns the rounds it took. After MaxResumeRounds the
// faults stop (a merchant's outage ends too) until the next segment.
func (r *runner) resumeParked(ctx context.Context, env *env) (int, error) {
	rounds, stopped := 0, false
	for parked := r.takeParked(); len(parked) > 0; parked = r.takeParked() {
		rounds++
		if rounds > r.cfg.MaxResumeRounds {
			env.stopFaults()
			stopped = true
		}
		if rounds > r.cfg.MaxResumeRounds+5 {
			for _, sc := range parked {
				r.fail(fmt.Sprintf("scenario %d: still failing after %d resume rounds", sc.id, rounds))
			}
			break
		}
		pool(r.cfg.Concurrency, parked, func(sc *scenario) { r.resume(ctx, sc) })
	}
	if stopped {
		return rounds, env.restartFaults()
	}
	return rounds, nil
}

// takeRecords returns the records so far and forgets them.
func (r *runner) takeRecords() []*opRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	ops := r.ops
	r.ops = nil
	return ops
}

// takeParked empties the resume queue.
func (r *runner) takeParked() []*scenario {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.parked
	r.parked = nil
	sort.Slice(p, func(i, j int) bool { return p[i].id < p[j].id })
	return p
}

// pool runs fn over items with n workers.
func pool[T any](n int, items []T, fn func(T)) {
	ch := make(chan T)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range ch {
				fn(it)
			}
		}()
	}
	for _, it := range items {
		ch <- it
	}
	close(ch)
	wg.Wait()
}

// Run performs one chaos run and returns its report. The error is for a
// run that could not take place (bad config, a server that did not start);
// a run that found duplicates or lost operations returns a report whose
// Passed() is false.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	env, err := startEnv(cfg)
	if err != nil {
		return nil, err
	}
	defer env.close()

	r := &runner{cfg: cfg, stats: newRetryStats(), env: env, flows: newFlowTally()}
	if cfg.Telemetry {
		if r.telemetry, err = newTelemetry(); err != nil {
			return nil, err
		}
		defer r.telemetry.close()
	}
	if err := r.newClients(env); err != nil {
		return nil, err
	}
	newGen := func() *scenarioGen {
		return newScenarioGen(rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x5eed)), cfg.DuplicateRate, cfg.ConflictRate, r.a55 != nil, r.coinepay != nil)
	}
	total := newGen().count(cfg.Operations)
	if r.a55 != nil {
		total++
		if err := r.createWallet(ctx); err != nil {
			return nil, err
		}
		if err := env.addCodes(ctx); err != nil {
			return nil, err
		}
	}
	prog := newProgress(cfg, total, &r.done)
	prog.start()
	start := time.Now()
	// The run goes segment by segment: start a segment's scenarios, resume
	// its parked ones, then check what its clients were told against the
	// part of the ledger it added and let both go. No key of a segment is
	// sent again later, so a late execution still shows, as a ledger key
	// no client knows of.
	gen := newGen()
	check := newReconciler()
	rounds := 0
	for left := cfg.Operations; left > 0; {
		scenarios, n := gen.next(min(left, cfg.segment()))
		left -= n
		pool(cfg.Concurrency, scenarios, func(sc *scenario) { r.runScenario(ctx, sc) })
		segRounds, err := r.resumeParked(ctx, env)
		if err != nil {
			prog.stop()
			return nil, err
		}
		rounds = max(rounds, segRounds)
		ledger, err := env.ledger(ctx)
		if err != nil {
			prog.stop()
			return nil, fmt.Errorf("chaos: read ledger: %w", err)
		}
		recs := r.takeRecords()
		if check.strangers, err = r.strangers(ctx, recs, ledger); err != nil {
			prog.stop()
			return nil, err
		}
		check.add(recs, ledger)
	}
	if err := r.runCodeSegment(ctx, env, gen); err != nil {
		prog.stop()
		return nil, err
	}
	if r.a55 != nil && env.a55Fake != nil {
		ledger, err := env.ledger(ctx)
		if err != nil {
			prog.stop()
			return nil, fmt.Errorf("chaos: read ledger: %w", err)
		}
		recs := r.takeRecords()
		if check.strangers, err = r.strangers(ctx, recs, ledger); err != nil {
			prog.stop()
			return nil, err
		}
		check.add(recs, ledger)
	}
	elapsed := time.Since(start)
	prog.stop()

	server, err := env.serverStats(ctx)
	if err != nil {
		return nil, fmt.Errorf("chaos: read request log: %w", err)
	}
	rep := r.report(check, server, elapsed, rounds)
	if r.a55 != nil {
		if rep.Codes, err = env.codeCounts(ctx); err != nil {
			return nil, fmt.Errorf("chaos: read the A55 answers: %w", err)
		}
		r.checkLongWaits(rep)
	}
	if r.telemetry != nil {
		if rep.Telemetry, err = r.telemetry.collect(ctx); err != nil {
			return nil, err
		}
	}
	rep.Faults = env.faultsDescription()
	return rep, nil
}

// newClients builds the SDK clients exactly as a merchant would, with the
// run's retry policy and a debug logger that counts retries by cause.
func (r *runner) newClients(env *env) error {
	handler := slog.Handler(r.stats)
	if r.cfg.DebugLog != nil {
		handler = teeHandler{r.stats, slog.NewTextHandler(r.cfg.DebugLog, &slog.HandlerOptions{Level: slog.LevelDebug})}
	}
	common := func(url string, hc *http.Client) []payonce.Option {
		opts := []payonce.Option{payonce.WithBaseURL(url), payonce.WithRetryPolicy(r.cfg.Retry),
			payonce.WithLogger(slog.New(handler)), payonce.WithHTTPClient(hc)}
		if r.telemetry != nil {
			opts = append(opts, payonce.WithObserver(r.telemetry.obs.Hooks()))
		}
		if r.cfg.RetryBudget > 0 {
			opts = append(opts, payonce.WithRetryBudget(payonce.NewRetryBudget(r.cfg.RetryBudget)))
		}
		return opts
	}
	var err error
	if env.a55URL != "" {
		auth := a55.Auth{ClientID: r.cfg.A55ClientID, ClientSecret: r.cfg.A55ClientSecret, TokenURL: env.a55URL + "/oauth2/token"}
		// The A55 client may wait the minute 3DS_UNAVAILABLE asks for; its
		// injected sleep skips that wait (the run never sleeps a minute).
		opts := append(common(env.a55URL, env.httpClient(providerA55)), payonce.WithRetryPolicy(a55Policy(r.cfg.Retry)), payonce.WithSleep(r.sleep))
		if r.a55, err = a55.NewClient(auth, opts...); err != nil {
			return err
		}
	}
	if env.coinepayURL != "" {
		if r.coinepay, err = coinepay.NewClient(r.cfg.CoinepayKey, r.cfg.CoinepaySecret, common(env.coinepayURL, env.httpClient(providerCoinepay))...); err != nil {
			return err
		}
	}
	return nil
}

// createWallet makes the wallet the run's charges go to; it is an
// operation like any other, resumed until it is done.
func (r *runner) createWallet(ctx context.Context) error {
	key, err := payonce.NewKey(time.Now(), uuid.NewString())
	if err != nil {
		return err
	}
	rec := r.newRecord(step{kind: kindWalletCreate}, key.String())
	for i := 0; ; i++ {
		w, err := r.a55.Wallets.Create(ctx, a55test.WalletRequest("chaos wallet"), payonce.WithKey(key))
		r.subs.Add(1)
		r.attempt.Add(int64(attemptsOf(err)))
		if err == nil {
			r.attempt.Add(int64(w.Meta.Attempts))
			if w.Meta.Replayed {
				r.replays.Add(1)
			}
			rec.done, rec.id, rec.ids[w.UUID] = true, w.UUID, true
			r.walletUUID, r.merchantID = w.UUID, w.MerchantUUID
			r.done.Add(1)
			return nil
		}
		if !payonce.IsTemporary(err) || i > 50 {
			return fmt.Errorf("chaos: create wallet: %w", err)
		}
		rec.resumed = true
		key = payonce.KeyOf(err)
	}
}
