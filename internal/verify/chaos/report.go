package chaos

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/payonce/payonce/internal/fake/fakeserver"
)

// Report is what a chaos run found.
type Report struct {
	Operations   int           `json:"operations"`  // business operations (one key each)
	Submissions  int           `json:"submissions"` // calls of the SDK, parallel duplicates and resumptions included
	Attempts     int           `json:"attempts"`    // HTTP attempts the clients sent
	Retries      []CauseCount  `json:"retries"`     // retries by cause, from the SDK's debug log
	Recoveries   int           `json:"recoveries"`  // attempts repeated after a signer recovery (token refresh, clock skew)
	Replays      int           `json:"replays"`     // answers the servers served from their idempotency store
	Conflicts    int           `json:"conflicts"`   // submissions answered 409 (same key, another body)
	Resumed      int           `json:"resumed"`     // operations resumed with the key their error carried
	ResumeRounds int           `json:"resume_rounds"`
	Failed       int           `json:"failed"`     // operations that ended in a final error
	Duplicates   int           `json:"duplicates"` // operations executed more than once
	Lost         int           `json:"lost"`       // done for a client but not in a ledger, or the reverse
	ByKind       []KindCount   `json:"by_kind"`
	Server       ServerStats   `json:"server"`
	LatencyP50   time.Duration `json:"latency_p50_ns"`
	LatencyP99   time.Duration `json:"latency_p99_ns"`
	Elapsed      time.Duration `json:"elapsed_ns"`
	OpsPerSecond float64       `json:"ops_per_second"`
	Faults       string        `json:"faults"`
	Problems     []string      `json:"problems,omitempty"` // the first duplicates, losses and failures, described
	// Crash is the crash phase's report (worker processes killed), when
	// the run had one.
	Crash *CrashReport `json:"crash,omitempty"`
	// ReplayedAnswers counts the answers clients got marked as a replay
	// (X-Idempotent-Replay: true), from the results' Meta.
	ReplayedAnswers int `json:"replayed_answers"`
	// Telemetry is what otelpayonce's instruments counted (-otel), nil
	// without it.
	Telemetry *Telemetry `json:"telemetry,omitempty"`
	// ByFlow counts the A55 charge creates by payment flow (card, PIX,
	// 3DS): what the clients were told, what the ledger executed, and
	// the statuses the PIX and 3DS charges ended in.
	ByFlow []FlowCount `json:"by_flow,omitempty"`
	// Codes counts the A55 codes the fake answered creates with.
	Codes []CauseCount `json:"codes,omitempty"`
	// LongWaits counts the retries the A55 client waited at least 60 s
	// for (3DS_UNAVAILABLE), on its injected sleep: none was slept.
	LongWaits int `json:"long_waits"`
	// LookedUp counts the creates whose outcome was unknown (TIMEOUT,
	// DUPLICATE_REQUEST naming no charge), looked up before anything was
	// sent again: found executed, or found never run and sent again.
	LookedUp         int `json:"looked_up"`
	LookedUpExecuted int `json:"looked_up_executed"`
	LookedUpResent   int `json:"looked_up_resent"`
	// FlowChecksFailed counts the checks of the PIX and 3DS flows that
	// failed (a charge without its QR code or challenge URL, a status
	// other than the trigger leads to) and 3DS_UNAVAILABLE retries not
	// waited for.
	FlowChecksFailed int `json:"flow_checks_failed"`
}

// FlowCount is the A55 charge creates of one payment flow.
type FlowCount struct {
	Flow     string         `json:"flow"`
	Count    int            `json:"count"`  // creates the clients made
	Ledger   int            `json:"ledger"` // charges the ledger executed for them (and strangers of the flow)
	Outcomes map[string]int `json:"outcomes,omitempty"`
}

// CauseCount is a number of retries for one cause.
type CauseCount struct {
	Cause string `json:"cause"`
	Count int    `json:"count"`
}

// KindCount is the operations of one kind.
type KindCount struct {
	Provider string `json:"provider"`
	Kind     string `json:"kind"`
	Count    int    `json:"count"`
	Ledger   int    `json:"ledger"`
}

// ServerStats is what the fake servers counted.
type ServerStats struct {
	Requests  int `json:"requests"`
	Executed  int `json:"executed"`
	Replays   int `json:"replays"`
	Conflicts int `json:"conflicts"`
}

// Passed reports zero duplicates and zero lost operations, in the crash
// phase too.
func (r *Report) Passed() bool {
	return r.Duplicates == 0 && r.Lost == 0 && r.FlowChecksFailed == 0 && (r.Crash == nil || r.Crash.Passed())
}

// ResultLine is the report's last line. With a crash phase, its figures
// are the sums of both phases and crashes counts the workers killed.
func (r *Report) ResultLine() string {
	ops, attempts, replays, dups, lost, crashes, mis := r.Operations, r.Attempts, r.Replays, r.Duplicates, r.Lost, 0, 0
	if c := r.Crash; c != nil {
		ops, attempts, replays = ops+c.Operations, attempts+c.Attempts, replays+c.Server.Replays
		dups, lost, crashes, mis = dups+c.Duplicates, lost+c.Lost, c.Crashes, c.Misrecorded
	}
	return fmt.Sprintf("RESULT operations=%d attempts=%d replays=%d resumed=%d crashes=%d duplicates=%d lost=%d misrecorded=%d",
		ops, attempts, replays, r.Resumed, crashes, dups, lost, mis)
}

// maxProblems caps the problems a report describes.
const maxProblems = 20

// report checks the ledgers against what the clients were told and adds
// the run's tallies.
func (r *runner) report(check *reconciler, server ServerStats, elapsed time.Duration, rounds int) *Report {
	r.mu.Lock()
	failed := r.failed
	r.mu.Unlock()
	rep := check.finish()
	rep.Server, rep.ResumeRounds, rep.Elapsed, rep.Replays = server, rounds, elapsed, server.Replays
	rep.Submissions = int(r.subs.Load())
	rep.Attempts = int(r.attempt.Load())
	rep.ReplayedAnswers = int(r.replays.Load())
	rep.Retries, rep.Recoveries = r.stats.snapshot()
	if elapsed > 0 {
		rep.OpsPerSecond = float64(rep.Operations) / elapsed.Seconds()
	}
	for _, f := range failed {
		rep.problem("failed: %s", f)
	}
	rep.FlowChecksFailed += int(r.flowFailed.Load())
	rep.LookedUp, rep.LookedUpExecuted, rep.LookedUpResent = int(r.flows.lookups.Load()), int(r.flows.lookupExecuted.Load()), int(r.flows.lookupResent.Load())
	r.flows.mu.Lock()
	for i := range rep.ByFlow {
		rep.ByFlow[i].Outcomes = r.flows.outcomes[rep.ByFlow[i].Flow]
	}
	r.flows.mu.Unlock()
	return rep
}

func (r *Report) problem(format string, args ...any) {
	if len(r.Problems) < maxProblems {
		r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
	}
}

// reconcile is the proof's verdict, a pure function of what the clients
// were told (one record per operation, that is per key) and the ledger of
// what the servers executed. An operation executed more than once (several
// ledger entries for its key, or its submissions answered with different
// resources) counts once in Duplicates. Lost counts an operation a client
// believes done that the ledger lacks or holds under another id, one the
// ledger holds although its client was told it failed, one that never
// settled, and a ledger key no client knows of.
func reconcile(ops []*opRecord, ledger []fakeserver.Operation) *Report {
	c := newReconciler()
	c.add(ops, ledger)
	return c.finish()
}

// reconciler is reconcile over a run taken in parts: each add brings the
// records of some operations and the ledger entries of exactly those
// operations (and of nothing else, unless by mistake); it keeps only the
// tallies, the latencies and the first problems.
type reconciler struct {
	rep   *Report
	kinds map[[2]string]*KindCount
	flows map[string]*FlowCount
	lat   []time.Duration
	// strangers are the charges the ledger executed under keys no client
	// knows, by ledger ID: their flow and order as the provider reports
	// them (set before add).
	strangers map[string]stranger
}

// stranger is what the provider reports of a charge no client knows of.
type stranger struct{ flow, order string }

func newReconciler() *reconciler {
	return &reconciler{rep: &Report{}, kinds: map[[2]string]*KindCount{}, flows: map[string]*FlowCount{}}
}

func (c *reconciler) flowOf(f string) *FlowCount {
	fc := c.flows[f]
	if fc == nil {
		fc = &FlowCount{Flow: f}
		c.flows[f] = fc
	}
	return fc
}

func (c *reconciler) kindOf(p, k string) *KindCount {
	kc := c.kinds[[2]string{p, k}]
	if kc == nil {
		kc = &KindCount{Provider: p, Kind: k}
		c.kinds[[2]string{p, k}] = kc
	}
	return kc
}

// add checks one part.
func (c *reconciler) add(ops []*opRecord, ledger []fakeserver.Operation) {
	rep, kindOf := c.rep, c.kindOf
	keyOf := func(provider, key string) string { return provider + "\x00" + key }
	byKey := map[string][]fakeserver.Operation{}
	for _, op := range ledger {
		k := keyOf(op.Provider, op.IdempotencyKey)
		byKey[k] = append(byKey[k], op)
		kindOf(op.Provider, op.Kind).Ledger++
	}
	known := map[string]bool{}
	paid := map[string]string{} // order -> the key of its create the ledger executed
	for _, rec := range ops {
		rep.Operations++
		kindOf(rec.provider, rec.kind).Count++
		rep.Conflicts += rec.conflicts
		if rec.resumed {
			rep.Resumed++
		} else if rec.done {
			c.lat = append(c.lat, rec.latency)
		}
		k := keyOf(rec.provider, rec.key)
		known[k] = true
		entries := byKey[k]
		if rec.flow != "" {
			fc := c.flowOf(rec.flow)
			fc.Count++
			fc.Ledger += len(entries)
			if len(entries) > 0 && rec.order != "" {
				paid[rec.order] = rec.key
			}
		}
		duplicate := false
		if len(entries) > 1 {
			duplicate = true
			rep.problem("duplicate: %s %s key %s executed %d times", rec.provider, rec.kind, rec.key, len(entries))
		}
		if len(rec.ids) > 1 {
			duplicate = true
			rep.problem("duplicate: %s %s key %s answered with %d different resources", rec.provider, rec.kind, rec.key, len(rec.ids))
		}
		if duplicate {
			rep.Duplicates++
		}
		switch {
		case rec.failed:
			rep.Failed++
			if len(entries) > 0 {
				rep.Lost++
				rep.problem("lost: %s %s key %s executed, but its client was told it failed", rec.provider, rec.kind, rec.key)
			}
		case rec.done && len(entries) == 0:
			rep.Lost++
			rep.problem("lost: %s %s key %s done for the client, missing from the ledger", rec.provider, rec.kind, rec.key)
		case rec.done && entries[0].ID != rec.id:
			rep.Lost++
			rep.problem("lost: %s %s key %s: client has %s, ledger has %s", rec.provider, rec.kind, rec.key, rec.id, entries[0].ID)
		case !rec.done:
			rep.Lost++
			rep.problem("lost: %s %s key %s never settled", rec.provider, rec.kind, rec.key)
		}
	}
	// Keys no client knows, in ledger order so that the problems are stable.
	for _, op := range ledger {
		k := keyOf(op.Provider, op.IdempotencyKey)
		if known[k] {
			continue
		}
		known[k] = true
		entries := byKey[k]
		rep.Lost++
		rep.problem("lost: %s %s key %s in the ledger, but no client learned of it", op.Provider, op.Kind, op.IdempotencyKey)
		if st, ok := c.strangers[op.ID]; ok {
			c.flowOf(st.flow).Ledger += len(entries)
			if first, ok := paid[st.order]; ok {
				// A second payment for an order whose own create executed.
				rep.Duplicates++
				rep.problem("duplicate: %s payment for %s made twice: key %s, and key %s no client knows", st.flow, st.order, first, op.IdempotencyKey)
				continue
			}
		}
		if len(entries) > 1 {
			rep.Duplicates++
			rep.problem("duplicate: %s %s key %s executed %d times", op.Provider, op.Kind, op.IdempotencyKey, len(entries))
		}
	}
}

// finish returns the report of every part added.
func (c *reconciler) finish() *Report {
	rep, lat := c.rep, c.lat
	rep.ByFlow = nil
	for _, fc := range c.flows {
		rep.ByFlow = append(rep.ByFlow, *fc)
	}
	sort.Slice(rep.ByFlow, func(i, j int) bool { return rep.ByFlow[i].Flow < rep.ByFlow[j].Flow })
	rep.ByKind = nil
	for _, kc := range c.kinds {
		rep.ByKind = append(rep.ByKind, *kc)
	}
	sort.Slice(rep.ByKind, func(i, j int) bool {
		a, b := rep.ByKind[i], rep.ByKind[j]
		return a.Provider < b.Provider || (a.Provider == b.Provider && a.Kind < b.Kind)
	})
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	if n := len(lat); n > 0 {
		rep.LatencyP50 = lat[n/2]
		rep.LatencyP99 = lat[min(n-1, n*99/100)]
	}
	return rep
}

// WriteText prints the report as a table; its last line is ResultLine.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	b.WriteString("payonce chaos run\n")
	fmt.Fprintf(&b, "faults: %s\n\n", r.Faults)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "provider\toperation\tclient\tledger\t")
	for _, k := range r.ByKind {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t\n", k.Provider, k.Kind, k.Count, k.Ledger)
	}
	_ = tw.Flush()
	if len(r.ByFlow) > 0 {
		b.WriteString("\n")
		tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "a55 flow\tcreates\tledger\tthen\t")
		for _, f := range r.ByFlow {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t\n", f.Flow, f.Count, f.Ledger, outcomeText(f.Outcomes))
		}
		_ = tw.Flush()
	}
	b.WriteString("\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	row := func(name string, v any) { fmt.Fprintf(tw, "%s\t%v\n", name, v) }
	row("operations", r.Operations)
	row("submissions (incl. parallel duplicates, resumptions)", r.Submissions)
	row("attempts", r.Attempts)
	for _, c := range r.Retries {
		row("  retries: "+c.Cause, c.Count)
	}
	row("repeats after signer recovery", r.Recoveries)
	row("server requests", r.Server.Requests)
	row("replays (served from the idempotency store)", r.Replays)
	row("conflicts (409, same key + other body)", r.Conflicts)
	row("resumed (with the key from the error)", fmt.Sprintf("%d in %d round(s)", r.Resumed, r.ResumeRounds))
	for _, c := range r.Codes {
		row("  a55 answered "+c.Cause, c.Count)
	}
	row("retries waited >= 60 s (3DS_UNAVAILABLE; injected sleep, not slept)", r.LongWaits)
	row("outcome unknown, looked up before sending again", fmt.Sprintf("%d (executed %d, never run and sent again %d)", r.LookedUp, r.LookedUpExecuted, r.LookedUpResent))
	row("failed (final error)", r.Failed)
	row("duplicates", r.Duplicates)
	row("lost", r.Lost)
	row("flow checks failed (PIX, 3DS, 60 s waits)", r.FlowChecksFailed)
	row("latency p50 / p99", fmt.Sprintf("%v / %v", r.LatencyP50.Round(10*time.Microsecond), r.LatencyP99.Round(10*time.Microsecond)))
	row("elapsed", r.Elapsed.Round(time.Millisecond))
	row("operations per second", fmt.Sprintf("%.0f", r.OpsPerSecond))
	if r.Telemetry != nil {
		row("replayed answers (marked X-Idempotent-Replay, from results)", r.ReplayedAnswers)
		row("telemetry (OpenTelemetry spans and metrics, otelpayonce)", "")
		r.Telemetry.rows(row)
	}
	_ = tw.Flush()
	if r.Crash != nil {
		b.WriteString("\n")
		r.Crash.writeSection(&b)
	}
	for _, p := range r.Problems {
		b.WriteString("problem: " + p + "\n")
	}
	if r.Crash != nil {
		for _, p := range r.Crash.Problems {
			b.WriteString("problem: crash run: " + p + "\n")
		}
	}
	b.WriteString(r.ResultLine() + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// outcomeText lists a flow's final statuses, sorted by name.
func outcomeText(m map[string]int) string {
	if len(m) == 0 {
		return "-"
	}
	var parts []string
	for s, n := range m {
		parts = append(parts, fmt.Sprintf("%s %d", s, n))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}
