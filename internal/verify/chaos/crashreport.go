package chaos

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/fake/fakeserver"
)

// CrashReport is what a crash run found: the workers' and the journal's
// view of every reference checked against the fakes' ledgers.
type CrashReport struct {
	Journal    string `json:"journal"`     // the backend: "sqlite" or "postgres"
	Operations int    `json:"operations"`  // references in the plan
	Deliveries int    `json:"deliveries"`  // hand-overs to workers, twins and redeliveries included
	Dual       int    `json:"dual"`        // references delivered to two workers at once
	Flipped    int    `json:"flipped"`     // references whose key the provider answered differently twice (a 4xx not kept, then the operation)
	ClockSkews int    `json:"clock_skews"` // worker slots whose clock runs ahead
	// SecondMerchant counts the references a second merchant (the same
	// A55 client ID on another origin) ran too, on the same journal.
	SecondMerchant int `json:"second_merchant"`
	// LookAlikes counts the card charges that had a look-alike: another
	// reference, same amount and description, that never ran (every
	// attempt a 503), settled by lookup against answers without keys.
	LookAlikes int `json:"look_alikes"`
	Stalls     int `json:"stalls"`      // workers stopped (SIGSTOP) past their journal lease, then resumed
	StaleSends int `json:"stale_sends"` // attempts a resumed worker sent after another took its reference over
	// StallsTakenOver counts the stalls whose reference another worker
	// took over and settled while the stalled one was stopped.
	StallsTakenOver int          `json:"stalls_taken_over"`
	Redelivered     int          `json:"redelivered"` // deliveries after a kill or a temporary failure, or after 25 h
	Late            int          `json:"late"`        // killed references redelivered only after the 25 h move
	Revisited       int          `json:"revisited"`   // settled references delivered again after the 25 h move
	Crashes         int          `json:"crashes"`     // workers SIGKILLed
	CrashesAt       []CauseCount `json:"crashes_at"`  // kills by phase
	Attempts        int          `json:"attempts"`    // HTTP attempts the workers reported
	Succeeded       int          `json:"succeeded"`   // journal entries succeeded
	Failed          int          `json:"failed"`      // journal entries failed (declined cards)
	FromJournal     int          `json:"from_journal"`
	// InDoubt counts entries left pending past the key's window: the SDK
	// answered ErrOutcomeUnknown and sent nothing. The run settles them
	// against the ledger, as a merchant would with a provider lookup.
	InDoubt            int `json:"in_doubt"`
	InDoubtExecuted    int `json:"in_doubt_executed"`
	InDoubtNotExecuted int `json:"in_doubt_not_executed"`
	// InDoubtLookedUp counts the in-doubt card charges settled by listing
	// the wallet's charges through the A55 client (the charge's
	// description is its reference), as a merchant would; the others are
	// settled from the fakes' ledgers.
	InDoubtLookedUp int `json:"in_doubt_looked_up"`
	// InDoubtSettled counts the in-doubt entries the run settled through
	// the settle API (by lookup, or by hand from the provider's records).
	InDoubtSettled  int         `json:"in_doubt_settled"`
	SentWhenSettled int         `json:"sent_when_settled"` // deliveries that sent although the journal had the answer
	WorkerFailures  int         `json:"worker_failures"`   // workers that died on their own or broke the protocol
	Server          ServerStats `json:"server"`
	Duplicates      int         `json:"duplicates"`
	Lost            int         `json:"lost"`
	// Misrecorded counts outcomes the journal recorded differently from
	// what the provider did: an entry failed whose key executed, an
	// entry succeeded whose key never executed, or executed another
	// operation, or named another resource.
	Misrecorded  int           `json:"misrecorded"`
	Elapsed      time.Duration `json:"elapsed_ns"`
	OpsPerSecond float64       `json:"ops_per_second"`
	Problems     []string      `json:"problems,omitempty"`
	// ByFlow counts the A55 charge references by payment flow: the
	// references, the charges the ledger executed for them, and the
	// statuses the PIX and 3DS charges ended in after the fake's
	// triggers (before the run settled what was in doubt).
	ByFlow []FlowCount `json:"by_flow,omitempty"`
	// FlowChecksFailed counts PIX and 3DS charges whose trigger failed
	// or left another status than the event leads to.
	FlowChecksFailed int `json:"flow_checks_failed"`
}

// Passed reports no duplicate, nothing lost, nothing misrecorded,
// nothing sent for a reference the journal had settled and no worker
// that died unplanned.
func (r *CrashReport) Passed() bool {
	return r.Duplicates == 0 && r.Lost == 0 && r.Misrecorded == 0 && r.SentWhenSettled == 0 && r.StaleSends == 0 && r.WorkerFailures == 0 &&
		r.FlowChecksFailed == 0
}

// ResultLine is the crash run's last line.
func (r *CrashReport) ResultLine() string {
	return fmt.Sprintf("RESULT operations=%d attempts=%d crashes=%d redelivered=%d in_doubt=%d duplicates=%d lost=%d misrecorded=%d",
		r.Operations, r.Attempts, r.Crashes, r.Redelivered, r.InDoubt, r.Duplicates, r.Lost, r.Misrecorded)
}

func (r *CrashReport) problem(format string, args ...any) {
	if len(r.Problems) < maxProblems {
		r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
	}
}

// report reads the journal and the ledgers and reconciles them.
func (r *crashRun) report(ctx context.Context, jr *journalRun, plan []planItem, setupKeys map[string]bool) (*CrashReport, error) {
	j, closeJ, err := openJournal(ctx, jr.dsn, jr.schema)
	if err != nil {
		return nil, err
	}
	defer closeJ()
	entries := map[string]payonce.JournalEntry{}
	for _, it := range plan {
		e, err := j.Get(ctx, r.scopes[it.provider()], it.journalRef())
		switch {
		case errors.Is(err, payonce.ErrJournalNotFound):
		case err != nil:
			return nil, fmt.Errorf("chaos: read journal: %w", err)
		default:
			entries[it.ref] = e
		}
	}
	var ledger []fakeserver.Operation
	for _, op := range r.a55.Ledger().Operations() {
		ledger = append(ledger, fakeserver.Operation{Provider: op.Provider, Kind: op.Kind, IdempotencyKey: op.IdempotencyKey, ID: op.ID, Amount: op.Amount})
	}
	for _, op := range r.a55b.Ledger().Operations() {
		ledger = append(ledger, fakeserver.Operation{Provider: providerA55Other, Kind: op.Kind, IdempotencyKey: op.IdempotencyKey, ID: op.ID, Amount: op.Amount})
	}
	for _, op := range r.cp.Ledger().Operations() {
		ledger = append(ledger, fakeserver.Operation{Provider: op.Provider, Kind: op.Kind, IdempotencyKey: op.IdempotencyKey, ID: op.ID, Amount: op.Amount})
	}
	flows, flowProblems := r.finishFlows(plan, ledger)
	settled, err := r.settleInDoubt(ctx, j, plan, entries, ledger)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	rep := reconcileCrash(plan, r.refs, entries, ledger, setupKeys, settled)
	rep.ByFlow, rep.FlowChecksFailed = flows, len(flowProblems)
	rep.Problems = append(append(r.problems, flowProblems...), rep.Problems...)
	if len(rep.Problems) > maxProblems {
		rep.Problems = rep.Problems[:maxProblems]
	}
	r.mu.Unlock()
	rep.CrashesAt, rep.Crashes = r.crashCounts()
	rep.WorkerFailures = r.workerFailures + r.exitFailures
	rep.Journal = jr.kind
	a, b, c := r.a55.Stats(), r.a55b.Stats(), r.cp.Stats()
	rep.Server = ServerStats{Requests: a.Requests + b.Requests + c.Requests, Executed: a.Executed + b.Executed + c.Executed,
		Replays: a.Replayed + b.Replayed + c.Replayed, Conflicts: a.Conflicts + b.Conflicts + c.Conflicts}
	return rep, nil
}

// reconcileCrash is the crash run's verdict, a pure function of the plan,
// what the workers reported, the journal's entries (by reference) and the
// ledgers. For every reference: the ledger executed it at most once, under
// its journal key or any other (Duplicates); a succeeded entry is in the
// ledger exactly once under its key, as the reference's own operation
// (kind and amount) and with the resource the workers were told of, a
// pending one executed at most under its own key, a failed one not at all, and an executed one has a
// succeeded or pending entry (Lost counts each violation, a reference
// that never settled, and a ledger operation no reference explains).
// Pending entries are in doubt and settled against the ledger.
//
// settled holds the in-doubt entries after the run settled them through
// the settle API: each must be settled, and say what the ledger says
// (Misrecorded otherwise).
func reconcileCrash(plan []planItem, refs map[string]*refState, entries map[string]payonce.JournalEntry,
	ledger []fakeserver.Operation, setupKeys map[string]bool, settled map[string]settledEntry) *CrashReport {
	c := newCrashReconciler(plan, ledger, setupKeys, settled)
	for _, it := range plan {
		rs := refs[it.ref]
		if rs == nil {
			rs = &refState{item: it}
		}
		e, has := entries[it.ref]
		c.reference(it, rs, e, has)
	}
	c.unexplained()
	return c.rep
}

// crashReconciler holds the indexes of the ledger that reconcileCrash
// checks each reference against, and the report it fills.
type crashReconciler struct {
	rep       *CrashReport
	ledger    []fakeserver.Operation
	setupKeys map[string]bool
	settled   map[string]settledEntry
	byKey     map[string][]fakeserver.Operation // the ledger by ledgerKey, setup keys left out
	byAmount  map[string]string                 // the reference a charge or recharge names by its amount
	explained map[string]bool                   // the ledgerKeys a reference explains
}

// ledgerKey names an idempotency key of one provider.
func ledgerKey(provider, key string) string { return provider + "\x00" + key }

// newCrashReconciler indexes the ledger by key and the plan's charges and
// recharges by amount.
func newCrashReconciler(plan []planItem, ledger []fakeserver.Operation, setupKeys map[string]bool, settled map[string]settledEntry) *crashReconciler {
	c := &crashReconciler{rep: &CrashReport{Operations: len(plan)}, ledger: ledger, setupKeys: setupKeys, settled: settled,
		byKey: map[string][]fakeserver.Operation{}, byAmount: map[string]string{}, explained: map[string]bool{}}
	for _, op := range ledger {
		if !setupKeys[op.IdempotencyKey] {
			k := ledgerKey(op.Provider, op.IdempotencyKey)
			c.byKey[k] = append(c.byKey[k], op)
		}
	}
	// A charge or recharge names its reference by its amount; a
	// look-alike shares its card charge's and never runs.
	for _, it := range plan {
		if it.work != workApply && it.work != workLookAlike {
			a, _ := payonce.AmountFromMinor(itemAmount(it))
			c.byAmount[it.provider()+"\x00"+it.kind()+"\x00"+a.String()] = it.ref
		}
	}
	return c
}

// reference checks one reference: its deliveries, its executions, and
// its journal entry e (has is false without one) against them.
func (c *crashReconciler) reference(it planItem, rs *refState, e payonce.JournalEntry, has bool) {
	rep := c.rep
	c.countDeliveries(it, rs)
	execs := c.executions(it, e, has)
	if len(execs) > 1 {
		rep.Duplicates++
		rep.problem("duplicate: %s executed %d times", it.ref, len(execs))
	}
	if !rs.settled {
		rep.Lost++
		rep.problem("lost: %s never settled (%d deliveries: %s)", it.ref, rs.deliveries, endings(rs.reports))
	}
	if !has {
		if len(execs) > 0 || rs.settled {
			rep.Lost++
			rep.problem("lost: %s has no journal entry", it.ref)
		}
		return
	}
	last := lastAnswer(rs.reports)
	switch e.State {
	case payonce.JournalSucceeded:
		c.succeeded(it, rs, e, execs, last)
	case payonce.JournalFailed:
		c.failed(it, rs, e, execs, last)
	default:
		c.pending(it, rs, e, execs, last)
	}
}

// countDeliveries adds up a reference's deliveries and the attempts they
// reported, and flags one sent although the journal had settled it.
func (c *crashReconciler) countDeliveries(it planItem, rs *refState) {
	rep := c.rep
	rep.Deliveries += rs.deliveries
	rep.Redelivered += max(0, rs.deliveries-1)
	for _, d := range rs.reports {
		rep.Attempts += d.attempts
		if d.status == statusJournal {
			rep.FromJournal++
		}
	}
	if rs.sentSettled {
		rep.SentWhenSettled++
		rep.problem("sent: %s went out although the journal had settled it (deliveries ended: %s)", it.ref, endings(rs.reports))
	}
}

// executions returns the ledger's executions of a reference: under its
// journal key, then under any other, and marks their keys explained.
func (c *crashReconciler) executions(it planItem, e payonce.JournalEntry, has bool) []fakeserver.Operation {
	var execs []fakeserver.Operation
	if has {
		k := ledgerKey(it.provider(), e.Key)
		execs = c.byKey[k]
		c.explained[k] = true
	}
	// Executions of this reference under another key.
	for _, op := range c.ledger {
		if c.setupKeys[op.IdempotencyKey] || op.Provider != it.provider() || op.Kind != it.kind() ||
			c.byAmount[op.Provider+"\x00"+op.Kind+"\x00"+op.Amount] != it.ref || (has && op.IdempotencyKey == e.Key) {
			continue
		}
		execs = append(execs, op)
		c.explained[ledgerKey(op.Provider, op.IdempotencyKey)] = true
	}
	return execs
}

// lastAnswer returns the last delivery that ended with an answer: a
// temporary ending (a lease held, a run taken over) says nothing final.
func lastAnswer(reports []doneReport) doneReport {
	last := doneReport{}
	for _, d := range reports {
		if (d.status != statusTemporary && d.status != statusSkewedDoubt) || last.status == "" {
			last = d
		}
	}
	return last
}

// succeeded checks a succeeded entry: the ledger executed its own
// operation once under its key, with the resource the entry and the
// workers name, and its last delivery answered.
func (c *crashReconciler) succeeded(it planItem, rs *refState, e payonce.JournalEntry, execs []fakeserver.Operation, last doneReport) {
	rep := c.rep
	rep.Succeeded++
	switch {
	case len(execs) == 0 || execs[0].IdempotencyKey != e.Key:
		rep.Misrecorded++
		rep.problem("misrecorded: %s succeeded in the journal, missing from the ledger", it.ref)
	case !ownOperation(it, execs[0]):
		rep.Misrecorded++
		rep.problem("misrecorded: %s succeeded in the journal, but the ledger executed another operation under its key (%s %s)", it.ref, execs[0].Kind, execs[0].Amount)
	case !resultNames(e.Result, execs[0].ID):
		rep.Misrecorded++
		rep.problem("misrecorded: %s succeeded in the journal with another result than the ledger's %s", it.ref, execs[0].ID)
	case !idsAgree(rs.reports, execs[0].ID):
		rep.Lost++
		rep.problem("lost: %s: workers were told of another resource than the ledger's %s (deliveries ended: %s)", it.ref, execs[0].ID, endings(rs.reports))
	case last.status != statusOK && last.status != statusJournal && !inDoubt(last.status):
		// An answer in doubt is true of a run that took over an
		// entry a stalled or killed worker may still complete: when
		// that worker then records the success, the journal the
		// merchant settles doubt from says it. Any other ending is
		// a wrong answer.
		rep.Lost++
		rep.problem("lost: %s succeeded, but its last delivery ended %s", it.ref, last.status)
	}
}

// failed checks a failed entry: the ledger never executed it and its
// last delivery failed with the entry's error.
func (c *crashReconciler) failed(it planItem, rs *refState, e payonce.JournalEntry, execs []fakeserver.Operation, last doneReport) {
	rep := c.rep
	rep.Failed++
	if len(execs) > 0 {
		rep.Misrecorded++
		rep.problem("misrecorded: %s failed in the journal (%s), but the ledger executed it (deliveries ended: %s)", it.ref, e.ErrorKind, endings(rs.reports))
	}
	if last.status != statusFailed || last.detail != e.ErrorKind {
		rep.Lost++
		rep.problem("lost: %s failed with %s, but its last delivery ended %s %s", it.ref, e.ErrorKind, last.status, last.detail)
	}
}

// pending checks an entry in doubt: executed at most as its own
// operation under its own key, settled as the ledger says, and answered
// in doubt by its last delivery.
func (c *crashReconciler) pending(it planItem, rs *refState, e payonce.JournalEntry, execs []fakeserver.Operation, last doneReport) {
	rep := c.rep
	rep.InDoubt++
	if len(execs) > 0 {
		rep.InDoubtExecuted++
	} else {
		rep.InDoubtNotExecuted++
	}
	for _, op := range execs {
		switch {
		case op.IdempotencyKey != e.Key:
			rep.Lost++
			rep.problem("lost: %s executed under a key its journal entry does not hold (%s)", it.ref, op.IdempotencyKey)
		case !ownOperation(it, op):
			rep.Lost++
			rep.problem("lost: %s: the ledger executed another operation under its key (%s %s)", it.ref, op.Kind, op.Amount)
		}
	}
	if s, ok := c.settled[it.ref]; ok {
		c.settledInDoubt(it, s, execs)
	}
	if rs.settled && !inDoubt(last.status) {
		rep.Lost++
		rep.problem("lost: %s pending in the journal, but its last delivery ended %s", it.ref, last.status)
	}
}

// settledInDoubt checks how the run settled an entry in doubt against
// the ledger's executions of it.
func (c *crashReconciler) settledInDoubt(it planItem, s settledEntry, execs []fakeserver.Operation) {
	rep := c.rep
	rep.InDoubtSettled++
	if s.how == settledByLookup {
		rep.InDoubtLookedUp++
	}
	after := s.entry
	switch {
	case after.State == payonce.JournalPending:
		rep.Lost++
		rep.problem("lost: %s still in doubt after settling", it.ref)
	case after.State == payonce.JournalFailed && len(execs) > 0:
		rep.Misrecorded++
		rep.problem("misrecorded: %s settled (%s) as %s, but the ledger executed it", it.ref, s.how, after.ErrorKind)
	case after.State == payonce.JournalSucceeded && len(execs) == 0:
		rep.Misrecorded++
		rep.problem("misrecorded: %s settled (%s) as succeeded, but the ledger never executed it", it.ref, s.how)
	case after.State == payonce.JournalSucceeded && !resultNames(after.Result, execs[0].ID):
		rep.Misrecorded++
		rep.problem("misrecorded: %s settled (%s) with another result than the ledger's %s", it.ref, s.how, execs[0].ID)
	}
}

// unexplained counts as lost each ledger key no reference explains.
func (c *crashReconciler) unexplained() {
	for _, op := range c.ledger {
		k := ledgerKey(op.Provider, op.IdempotencyKey)
		if c.setupKeys[op.IdempotencyKey] || c.explained[k] {
			continue
		}
		c.explained[k] = true
		c.rep.Lost++
		c.rep.problem("lost: %s %s key %s in the ledger, but no reference explains it", op.Provider, op.Kind, op.IdempotencyKey)
	}
}

// ownOperation reports whether op is the item's own operation: its kind
// and, for a charge or recharge, its amount (a card issue has no amount of
// its own).
func ownOperation(it planItem, op fakeserver.Operation) bool {
	if op.Kind != it.kind() {
		return false
	}
	if it.work == workApply {
		return true
	}
	a, err := payonce.AmountFromMinor(itemAmount(it))
	return err == nil && op.Amount == a.String()
}

// endings lists how a reference's deliveries ended, for a problem line.
func endings(reports []doneReport) string {
	var parts []string
	for _, d := range reports {
		parts = append(parts, d.status+":"+d.detail)
	}
	return strings.Join(parts, ", ")
}

// resultNames reports whether a succeeded entry's recorded answer names
// the ledger's resource id (an entry recorded without an answer names
// none and passes).
func resultNames(result []byte, id string) bool {
	return len(result) == 0 || id == "" || bytes.Contains(result, []byte(`"`+id+`"`))
}

// idsAgree reports whether every successful delivery named the ledger's
// resource.
func idsAgree(reports []doneReport, id string) bool {
	for _, d := range reports {
		if (d.status == statusOK || d.status == statusJournal) && d.detail != id {
			return false
		}
	}
	return true
}

// WriteText prints the crash report; its last line is ResultLine.
func (r *CrashReport) WriteText(w io.Writer) error {
	var b strings.Builder
	r.writeSection(&b)
	for _, p := range r.Problems {
		b.WriteString("problem: " + p + "\n")
	}
	b.WriteString(r.ResultLine() + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// writeSection writes the crash figures without problems or result line.
func (r *CrashReport) writeSection(b *strings.Builder) {
	b.WriteString("payonce crash run (worker processes SIGKILLed, journal: " + r.Journal + ")\n")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	row := func(name string, v any) { fmt.Fprintf(tw, "%s\t%v\n", name, v) }
	row("operations (references)", r.Operations)
	row("deliveries", r.Deliveries)
	row("  delivered to two workers at once", r.Dual)
	row("  answered differently twice under one key (4xx not kept, then 2xx)", r.Flipped)
	row("worker slots with a skewed clock", r.ClockSkews)
	row("references a second merchant ran too (one client ID, another origin, one journal)", r.SecondMerchant)
	row("charges with a look-alike never run (same amount and description, answers without keys)", r.LookAlikes)
	row("workers stalled past their lease (SIGSTOP, SIGCONT)", fmt.Sprintf("%d (%d taken over meanwhile)", r.Stalls, r.StallsTakenOver))
	row("  attempts they sent after resuming", r.StaleSends)
	row("  redelivered", r.Redelivered)
	row("  redelivered after the clock moved 25 h", fmt.Sprintf("%d killed + %d settled", r.Late, r.Revisited))
	row("crashes (SIGKILL)", r.Crashes)
	for _, c := range r.CrashesAt {
		row("  at "+c.Cause, c.Count)
	}
	row("attempts (reported by deliveries that finished)", r.Attempts)
	row("server requests / replays", strconv.Itoa(r.Server.Requests)+" / "+strconv.Itoa(r.Server.Replays))
	row("journal: succeeded / failed", fmt.Sprintf("%d / %d", r.Succeeded, r.Failed))
	row("answered from the journal", r.FromJournal)
	row("in_doubt (pending after the run)", fmt.Sprintf("%d (executed %d, not executed %d; settled %d: %d by provider lookup, %d by hand)",
		r.InDoubt, r.InDoubtExecuted, r.InDoubtNotExecuted, r.InDoubtSettled, r.InDoubtLookedUp, r.InDoubtSettled-r.InDoubtLookedUp))
	row("sent although settled", r.SentWhenSettled)
	row("workers failed unplanned", r.WorkerFailures)
	row("duplicates", r.Duplicates)
	row("lost", r.Lost)
	row("misrecorded (journal says otherwise than the provider)", r.Misrecorded)
	for _, f := range r.ByFlow {
		row("  a55 "+f.Flow+": references / ledger / then", fmt.Sprintf("%d / %d / %s", f.Count, f.Ledger, outcomeText(f.Outcomes)))
	}
	row("flow checks failed (PIX, 3DS)", r.FlowChecksFailed)
	row("elapsed", r.Elapsed.Round(time.Millisecond))
	row("operations per second", fmt.Sprintf("%.0f", r.OpsPerSecond))
	_ = tw.Flush()
}
