package simcheck

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"sort"
	"strings"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/journal"
)

// Worker is one worker of a scenario: a process running the reference's
// job with its own client.
type Worker struct {
	Name        string
	Merchant    int           // index into Scenario.Merchants
	ClockOffset time.Duration // the worker's clock minus the true clock
	MaxAttempts int           // attempts per call (default 2)
	Deliveries  int           // calls in a row, as a queue redelivering the job to the same process (default 1)
	// Crashes is how many times the worker may crash (at any of its yield
	// points); each crash redelivers the job to a new process with the
	// same clock.
	Crashes int
	// Reference is the worker's reference: 0 the scenario's, 1 a second
	// one of the same merchant (its own entry, its own key).
	Reference int
	// Settle makes the worker settle its reference by lookup (A55's
	// SettleCreate, recording not executed once the window is over)
	// instead of running the operation.
	Settle bool
}

// Merchant is one credential on one provider origin.
type Merchant struct {
	Origin   string // e.g. "http://127.0.0.1:9001"
	ClientID string // A55 client ID or Coinepay API key
}

// EnvStep is something the world does at a point of the schedule the
// explorer picks: move the true clock (a lease expiring, a day passing).
type EnvStep struct {
	Advance time.Duration
}

// Scenario is one exhaustive check.
type Scenario struct {
	Name      string
	Provider  Provider
	Reference string
	Merchants []Merchant // default: one
	Workers   []Worker
	Env       []EnvStep
	// Answers is the alphabet of a fresh key (default DefaultAnswers).
	Answers []Answer
	// SameRequest gives every reference the same request (amount and
	// description): the provider's records of two references look alike,
	// and carry no key.
	SameRequest bool
	// Journal returns the journal of one run, on the true clock, and its
	// reference prefix (a SQL journal reused across runs keeps runs apart
	// by reference). nil: a new journal.NewMemory per run.
	Journal func(now func() time.Time) (journal.Store, error)
	// MaxDepth bounds the branching choice points of a run (default 40).
	MaxDepth int
	// MaxRuns stops the exploration after so many runs (0: no limit).
	MaxRuns int
	// KeepGoing explores on after a counterexample and returns the first
	// of each kind of problem.
	KeepGoing bool
	// Script names the options of the first branching choices, as a
	// counterexample prints them; every continuation is explored.
	Script []string
}

// caller runs the scenario's operation once.
type caller func(ctx context.Context) (id string, fromJournal bool, err error)

// point is a yield point: where a worker waits for the scheduler.
type point struct {
	kind string // "reserve", "update", "get", ..., or "send"
	send *sendInfo
}

// resumeMsg is the scheduler's word to a waiting worker.
type resumeMsg struct {
	crash  bool
	answer Answer
}

type event struct {
	p    *proc
	at   *point // nil: the worker finished
	done bool
}

// proc is one worker process of a run.
type proc struct {
	w      *world
	id     int
	spec   int // index into Scenario.Workers
	name   string
	resume chan resumeMsg
	at     *point
	done   bool
	steps  int
	hist   uint64 // the inputs the worker received, hashed (see note)

	// Touched only by the worker's goroutine between its yields, or by
	// the scheduler while the worker waits.
	crashed bool
	run     *runState
	results []delivery
}

// runState is one call of the operation by one worker.
type runState struct {
	got2xx string // the resource of a 2xx answer the run received
	sent   int
}

// delivery is how one call ended.
type delivery struct {
	worker      string
	id          string
	fromJournal bool
	err         error
	got2xx      string
	crashed     bool
	settle      bool // a settle by lookup: id is what it recorded, "" for not executed
}

// world is one run: the scheduler, the provider models, the journal.
type world struct {
	sc       *Scenario
	x        *explorer
	clock    *simClock
	models   map[string]*model // by origin
	journal  journal.Store
	procs    []*proc
	events   chan event
	envNext  int
	crashes  []int // crashes left per worker spec
	log      strings.Builder
	steps    int
	problems []string
	scopes   map[int]string // merchant index -> the client's journal scope
	ref      string         // the run's reference (unique per run: a SQL journal outlives runs)
	refs     int            // how many references the workers use (Worker.Reference)
	// stateSeen collects the distinct states of every run of one
	// exploration.
	stateSeen map[string]struct{}
	names     map[string]string // canon
	pruned    bool              // the run reached a state seen before
}

var errCrashed = errors.New("simcheck: process crashed")

// yield stops the worker at pt until the scheduler resumes it.
func (p *proc) yield(pt *point) resumeMsg {
	if p.crashed {
		return resumeMsg{crash: true}
	}
	p.w.events <- event{p: p, at: pt}
	m := <-p.resume
	if m.crash {
		p.crashed = true
	}
	return m
}

func (w *world) logf(format string, args ...any) {
	fmt.Fprintf(&w.log, "  %3d. "+format+"\n", append([]any{w.steps}, args...)...)
}

func (w *world) problem(format string, args ...any) {
	w.problems = append(w.problems, fmt.Sprintf(format, args...))
}

// option is one thing the scheduler may do next.
type option struct {
	p      *proc
	env    bool
	crash  bool
	answer Answer
}

func (o option) String() string {
	switch {
	case o.env:
		return "env: clock +" + fmtDur(o.p.w.sc.Env[o.p.w.envNext].Advance)
	case o.crash:
		return o.p.name + " crashes at " + o.p.at.kind
	case o.p.at.kind == "send":
		return o.p.name + " sends, provider answers " + string(o.answer)
	}
	return o.p.name + " " + o.p.at.kind
}

// start launches a worker process and waits for its first yield.
func (w *world) start(spec int) {
	p := &proc{w: w, id: len(w.procs), spec: spec, resume: make(chan resumeMsg)}
	n := w.sc.Workers[spec].Name
	if k := w.countSpec(spec); k > 0 {
		n = fmt.Sprintf("%s#%d", n, k+1)
	}
	p.name = n
	w.procs = append(w.procs, p)
	go p.main()
	w.wait(p)
}

func (w *world) countSpec(spec int) int {
	n := 0
	for _, p := range w.procs {
		if p.spec == spec {
			n++
		}
	}
	return n
}

// wait blocks until p, the only goroutine running, yields or ends.
func (w *world) wait(p *proc) {
	ev := <-w.events
	if ev.p != p {
		panic("simcheck: two workers ran at once")
	}
	if ev.done {
		p.done = true
		p.at = nil
		return
	}
	p.at = ev.at
}

// main is the worker process: it calls the operation Deliveries times
// (once after a crash) with a fresh client.
func (p *proc) main() {
	defer func() { p.w.events <- event{p: p, done: true} }()
	spec := p.w.sc.Workers[p.spec]
	call, err := p.w.newCaller(p)
	if err != nil {
		p.results = append(p.results, delivery{worker: p.name, err: err})
		return
	}
	n := max(spec.Deliveries, 1)
	if p.w.countSpec(p.spec) > 1 {
		n = 1 // a redelivery after a crash
	}
	for range n {
		p.run = &runState{}
		ctx, cancel := context.WithCancel(context.Background())
		id, fromJournal, err := call(ctx)
		cancel()
		d := delivery{worker: p.name, id: id, fromJournal: fromJournal, err: err, got2xx: p.run.got2xx, crashed: p.crashed, settle: spec.Settle}
		p.results = append(p.results, d)
		if p.crashed {
			return
		}
	}
}

// schedule runs the world to its end.
func (w *world) schedule() {
	for i := range w.sc.Workers {
		w.start(i)
	}
	for {
		var opts []option
		for _, p := range w.procs {
			if p.done || p.at == nil || !w.mayMove(p) {
				continue
			}
			if p.at.kind == "send" {
				for _, a := range w.modelFor(p).options(*p.at.send) {
					opts = append(opts, option{p: p, answer: a})
				}
			} else {
				opts = append(opts, option{p: p})
			}
			if w.crashes[p.spec] > 0 {
				opts = append(opts, option{p: p, crash: true})
			}
		}
		if len(opts) == 0 {
			return
		}
		if w.envNext < len(w.sc.Env) {
			opts = append(opts, option{p: opts[0].p, env: true})
		}
		i := w.x.choose(len(opts), func(i int) string { return opts[i].String() })
		o := opts[i]
		w.steps++
		w.logf("%s", o)
		if o.env {
			w.clock.Advance(w.sc.Env[w.envNext].Advance)
			w.envNext++
		} else {
			p := o.p
			p.steps++
			if o.crash {
				w.crashes[p.spec]--
			}
			p.note(o.String(), w.clock.Now().Sub(start))
			p.at = nil
			p.resume <- resumeMsg{crash: o.crash, answer: o.answer}
			w.wait(p)
			if p.done && p.crashed {
				w.start(p.spec) // the queue redelivers the job
			}
		}
		// A replayed step reaches a state seen before by design; a new one
		// that does is pruned.
		if seen := w.noteState(); seen && len(w.x.trace) >= len(w.x.prefix) {
			w.abort()
			return
		}
	}
}

// abort ends a pruned run: every waiting worker goes on as crashed, with
// no effect, to its end.
func (w *world) abort() {
	w.pruned = true
	for _, p := range w.procs {
		if p.done || p.at == nil {
			continue
		}
		p.at = nil
		p.resume <- resumeMsg{crash: true}
		w.wait(p)
	}
}

// mayMove reports whether p may take its next step: a worker settling
// a reference by lookup starts once every run of that reference has
// ended, as a merchant settles an entry in doubt (a run still under way,
// or paused between its check and its bytes leaving, could still make
// what the lookup concludes was never made). The runs of other
// references go on meanwhile.
func (w *world) mayMove(p *proc) bool {
	wk := w.sc.Workers[p.spec]
	if !wk.Settle || p.steps > 0 {
		return true
	}
	for _, q := range w.procs {
		if qw := w.sc.Workers[q.spec]; !qw.Settle && qw.Merchant == wk.Merchant && qw.Reference == wk.Reference && !q.done {
			return false
		}
	}
	return true
}

func (w *world) modelFor(p *proc) *model {
	return w.models[w.merchant(p).Origin]
}

func (w *world) merchant(p *proc) Merchant {
	return w.sc.Merchants[w.sc.Workers[p.spec].Merchant]
}

// noteState records the state reached and reports whether an earlier
// run reached it already. A state is everything the rest of the run
// depends on: the journal's rows, the providers' keys and ledgers, the
// clock, what is left to do, and each worker's position and history (the
// inputs it received, from which its own variables follow). Random keys
// and owners are named in order of appearance, so two schedules that
// commute reach one state. The exploration prunes a run at a state seen
// before: every continuation from there was explored the first time.
func (w *world) noteState() bool {
	var b strings.Builder
	fmt.Fprintf(&b, "t=%s env=%d crashes=%v|", w.clock.Now().Sub(start), w.envNext, w.crashes)
	origins := make([]string, 0, len(w.models))
	for o := range w.models {
		origins = append(origins, o)
	}
	sort.Strings(origins)
	for _, o := range origins {
		b.WriteString(w.models[o].state(w.canon) + "|")
	}
	for i := range w.sc.Merchants {
		for r := range w.refs {
			e, err := w.journal.Get(context.Background(), w.scopes[i], w.refName(r))
			if err != nil {
				b.WriteString("none|")
				continue
			}
			b.WriteString(w.entryString(e) + "|")
		}
	}
	for _, p := range w.procs {
		at := "-"
		if p.at != nil {
			at = p.at.kind
		}
		fmt.Fprintf(&b, "%s:%x:%s:%t;", p.name, p.hist, at, p.done)
	}
	k := b.String()
	if _, ok := w.stateSeen[k]; ok {
		return true
	}
	w.stateSeen[k] = struct{}{}
	return false
}

// refName is the run's name of reference r (Worker.Reference).
func (w *world) refName(r int) string {
	if r == 0 {
		return w.ref
	}
	return fmt.Sprintf("%s#%d", w.ref, r+1)
}

// canon names a random value (a key, a lease owner) by its order of
// appearance in the run.
func (w *world) canon(s string) string {
	if s == "" {
		return ""
	}
	n, ok := w.names[s]
	if !ok {
		n = fmt.Sprintf("v%d", len(w.names)+1)
		w.names[s] = n
	}
	return n
}

// entryString is a journal entry's part of a state.
func (w *world) entryString(e payonce.JournalEntry) string {
	rel := func(t time.Time) time.Duration {
		if t.IsZero() {
			return -1
		}
		return t.Sub(start)
	}
	return fmt.Sprintf("%s a=%d k=%s kc=%s fp=%t res=%s st=%d kind=%s code=%s cause=%s c=%s u=%s lease=%s/%s",
		e.State, e.Attempts, w.canon(e.Key), rel(e.KeyCreated), e.Fingerprint != "", resultID(w.sc.Provider, e.Result), e.StatusCode,
		e.ErrorKind, e.ErrorCode, e.LastCause, rel(e.CreatedAt), rel(e.UpdatedAt), w.canon(e.LeaseOwner), rel(e.LeaseUntil)) + entryExtra(w, e)
}

// note adds an input the worker received to its history.
func (p *proc) note(parts ...any) {
	h := fnv.New64a()
	fmt.Fprintf(h, "%x", p.hist)
	for _, x := range parts {
		fmt.Fprintf(h, "\x00%v", x)
	}
	p.hist = h.Sum64()
}

func fmtDur(d time.Duration) string {
	if d >= time.Hour && d%time.Hour == 0 {
		return fmt.Sprintf("%dh", d/time.Hour)
	}
	return d.String()
}
