package chaos

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/internal/fake/a55fake"
	"github.com/payonce/payonce/internal/fake/fakeserver"
)

// Payment flows of an A55 charge.create: a card charge (sale or
// pre-authorisation), a PIX charge paid or left to expire, and a card
// charge with 3DS whose challenge the payer completes or abandons.
const (
	flowCard = "card"
	flowPix  = "pix"
	flow3DS  = "3ds"
)

// codeRules are the A55 codes the fault run has the A55 fake answer
// charge creates with, on top of the network faults: a share of the
// creates each. TIMEOUT here runs nothing and names no charge;
// DUPLICATE_REQUEST answers ahead of the key's store and names the key's
// charge, if any; 3DS_UNAVAILABLE (a charge with card fields) asks for
// 60 s before the next attempt; PROCESSING_ERROR is retried under the
// key. A TIMEOUT that made the charge is given per key instead
// (answerFirst: timeoutExecutedRate of the creates), among the same
// network faults, its answer lost like any other: the client looks the
// charge up before it sends the key again. Creates with a parallel twin
// are left out of it: A55 keeps only 2xx answers under a key, so a twin
// waiting on the first request runs the charge again when the first is
// answered TIMEOUT, whatever its client does without a journal.
func codeRules() []a55fake.AnswerRule {
	return []a55fake.AnswerRule{
		{Code: a55fake.AnswerTimeout, Path: a55ChargePath, Probability: 0.02},
		{Code: a55fake.AnswerDuplicateRequest, Path: a55ChargePath, Probability: 0.01},
		{Code: a55fake.Answer3DSUnavailable, Path: a55ChargePath, Probability: 0.02},
		{Code: a55fake.AnswerProcessingError, Path: a55ChargePath, Probability: 0.02},
	}
}

// a55ChargePath is the create-charge path, exactly: the codes go to
// creates only, never to a move under it.
const a55ChargePath = "/api/v1/bank/wallet/charge/"

// longWait is the least wait 3DS_UNAVAILABLE asks for.
const longWait = 60 * time.Second

// flowTally counts what the PIX and 3DS flows saw after their charges
// were created, and the lookups of creates whose outcome was unknown.
type flowTally struct {
	mu       sync.Mutex
	outcomes map[string]map[string]int // flow -> final status -> charges

	longWaits      atomic.Int64 // retries the client waited >= 60 s for, on the injected sleep
	lookups        atomic.Int64 // creates in doubt looked up before anything was sent again
	lookupExecuted atomic.Int64 // ... found executed
	lookupResent   atomic.Int64 // ... found never run, then sent again under the key
}

func newFlowTally() *flowTally { return &flowTally{outcomes: map[string]map[string]int{}} }

func (t *flowTally) outcome(flow, status string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.outcomes[flow]
	if m == nil {
		m = map[string]int{}
		t.outcomes[flow] = m
	}
	m[status]++
}

// sleep is the A55 client's wait before a retry (corekit.WithSleep): the
// run never waits a provider's minute. A wait of 60 s or more is counted
// and skipped; a shorter one (backoff, a Retry-After) is slept, at most
// maxNap, as the run's other clients cap it.
func (r *runner) sleep(ctx context.Context, d time.Duration) error {
	if d >= longWait {
		r.flows.longWaits.Add(1)
		return ctx.Err()
	}
	t := time.NewTimer(min(d, r.cfg.Retry.MaxInterval))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// a55Policy is the A55 client's retry policy: the run's, able to wait
// the 60 s 3DS_UNAVAILABLE asks for (on the injected sleep).
func a55Policy(p payonce.RetryPolicy) payonce.RetryPolicy {
	p.MaxRetryAfter = max(p.MaxRetryAfter, 2*time.Minute)
	if p.MaxElapsedTime > 0 {
		p.MaxElapsedTime = max(p.MaxElapsedTime, 10*time.Minute)
	}
	return p
}

// description is the charge's description: the order's, so that a
// lookup by description finds this order's charge and no other.
func description(sc *scenario, variant int) string {
	d := fmt.Sprintf("order-%d", sc.id)
	if variant == variantConflicting {
		d += " (edited)"
	}
	return d
}

// chargeOf is the result of a create that named its charge.
func chargeOf(ch *a55.Charge) result {
	return result{id: ch.UUID, amount: ch.Amount, attempts: ch.Meta.Attempts, replayed: ch.Meta.Replayed, charge: ch}
}

// lookUpCreate settles a create whose outcome is unknown (TIMEOUT,
// DUPLICATE_REQUEST naming no charge) as a merchant without a journal
// does: the charge is looked up, by the UUID the answer named or by the
// order's description, and the create is sent again under its key only
// when no charge is found.
func (r *runner) lookUpCreate(ctx context.Context, sc *scenario, st step, variant int, err error) (result, error) {
	for range 3 {
		if !errors.Is(err, payonce.ErrOutcomeUnknown) {
			return result{attempts: attemptsOf(err)}, err
		}
		r.flows.lookups.Add(1)
		want := description(sc, variant)
		found, lerr := r.findCharge(ctx, err, want)
		if lerr != nil {
			return result{attempts: attemptsOf(err)}, lerr
		}
		if found != nil {
			r.flows.lookupExecuted.Add(1)
			return chargeOf(found), nil
		}
		r.flows.lookupResent.Add(1)
		// The create in doubt counts as a submission with its attempts; the
		// one sent again as the caller's.
		r.subs.Add(1)
		r.attempt.Add(int64(attemptsOf(err)))
		var ch *a55.Charge
		ch, err = r.a55.Charges.Create(ctx, r.chargeRequest(sc, st, variant), payonce.WithKey(payonce.KeyOf(err)))
		if err == nil {
			return chargeOf(ch), nil
		}
	}
	return result{attempts: attemptsOf(err)}, err
}

// findCharge finds the charge of a create in doubt: the one its error
// names, else the wallet's charge with the order's description; nil when
// there is none. Two charges for one order are a double charge.
func (r *runner) findCharge(ctx context.Context, err error, want string) (*a55.Charge, error) {
	if ch, ok := a55.ChargeFromError(err); ok && ch.UUID != "" {
		got, gerr := r.getCharge(ctx, ch.UUID)
		if gerr != nil {
			return nil, gerr
		}
		if got.Description == want {
			return got, nil
		}
	}
	var page *a55.ChargePage
	var lerr error
	for range 10 {
		page, lerr = r.a55.Charges.List(ctx, &a55.ChargeListOptions{WalletUUID: r.walletUUID, Description: want, Limit: 10})
		r.subs.Add(1)
		if lerr == nil {
			r.attempt.Add(int64(page.Meta.Attempts))
		} else {
			r.attempt.Add(int64(attemptsOf(lerr)))
		}
		if lerr == nil || !payonce.IsTemporary(lerr) {
			break
		}
	}
	if lerr != nil {
		return nil, fmt.Errorf("chaos: look up %s: %w", want, lerr)
	}
	switch n := len(page.Charges); {
	case n == 0:
		return nil, nil
	case n > 1:
		r.fail(fmt.Sprintf("a55 charge.create %s: %d charges found for one order", want, n))
	}
	return r.getCharge(ctx, page.Charges[0].UUID)
}

// getCharge reads a charge, retrying reads the faults broke.
func (r *runner) getCharge(ctx context.Context, uuid string) (*a55.Charge, error) {
	var ch *a55.Charge
	var err error
	for range 10 {
		ch, err = r.a55.Charges.Get(ctx, uuid, r.walletUUID)
		r.subs.Add(1) // a read the run makes counts as a submission, with its attempts
		if err == nil {
			r.attempt.Add(int64(ch.Meta.Attempts))
		} else {
			r.attempt.Add(int64(attemptsOf(err)))
		}
		if err == nil || !payonce.IsTemporary(err) {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("chaos: get charge %s: %w", uuid, err)
	}
	return ch, nil
}

// seeded is a draw in [0,1) from the run's seed and parts.
func seeded(seed uint64, parts ...any) float64 {
	h := fnv.New64a()
	fmt.Fprint(h, seed)
	for _, p := range parts {
		fmt.Fprintf(h, "\x00%v", p)
	}
	x := h.Sum64()
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	return float64(x>>11) / (1 << 53)
}

// finishFlow plays the payer after a PIX or 3DS charge was created: the
// charge must carry what the payer needs (the QR code and the copy-paste
// code; the challenge URL), then the fake's trigger pays or expires the
// PIX, completes or abandons the challenge, and a read of the charge must
// give the status the event leads to. A check that fails is a problem
// and counts in Report.FlowChecksFailed.
func (r *runner) finishFlow(ctx context.Context, sc *scenario, ch *a55.Charge) {
	if sc.flow != flowPix && sc.flow != flow3DS {
		return
	}
	bad := func(format string, args ...any) {
		r.flowFailed.Add(1)
		r.fail(fmt.Sprintf("%s order-%d: ", sc.flow, sc.id) + fmt.Sprintf(format, args...))
	}
	if ch == nil {
		bad("the create gave no charge")
		return
	}
	var ev a55fake.Event
	var want a55.Status
	switch sc.flow {
	case flowPix:
		if ch.Pix == nil || ch.Pix.QRCode == "" || ch.Pix.Payload == "" {
			bad("charge %s has no QR code or copy-paste code", ch.UUID)
			return
		}
		ev, want = a55fake.EventPixPaid, a55.StatusPaid
		if seeded(r.cfg.Seed, "pix", sc.id) < 0.3 {
			ev, want = a55fake.EventPixExpired, a55.StatusExpired
		}
	case flow3DS:
		if _, ok := ch.ChallengeURL(); !ok || !ch.Status.Is(a55.StatusPending) {
			bad("charge %s is %s without a challenge URL", ch.UUID, ch.Status)
			return
		}
		ev, want = a55fake.Event3DSCompleted, a55.StatusConfirmed
		if seeded(r.cfg.Seed, "3ds", sc.id) < 0.3 {
			ev, want = a55fake.Event3DSAbandoned, a55.StatusCanceled
		}
	}
	if err := r.env.trigger(ctx, ch.UUID, ev); err != nil {
		bad("trigger %s on %s: %v", ev, ch.UUID, err)
		return
	}
	got, err := r.getCharge(ctx, ch.UUID)
	if err != nil {
		bad("%v", err)
		return
	}
	if !got.Status.Is(want) {
		bad("charge %s is %s after %s, want %s", ch.UUID, got.Status, ev, want)
		return
	}
	r.flows.outcome(sc.flow, string(want))
}

// trigger makes ev happen to an A55 charge at the fake: in-process, or
// through the admin API of an external fake.
func (e *env) trigger(ctx context.Context, chargeUUID string, ev a55fake.Event) error {
	if e.a55Fake != nil {
		_, err := e.a55Fake.Trigger(chargeUUID, ev, a55fake.TriggerOptions{})
		return err
	}
	return e.adminPostCtx(ctx, e.a55URL+a55fake.AdminPrefix+"/charges/"+chargeUUID+"/events", map[string]string{"event": string(ev)})
}

// addCodes has the in-process A55 fake answer creates with A55's codes
// (codeRules). An external server is left as it is: its answer rules
// would outlive the run.
func (e *env) addCodes(context.Context) error {
	if e.a55Fake == nil || !e.cfg.A55Codes {
		return nil
	}
	for _, a := range codeRules() {
		if err := e.a55Fake.AddAnswer(a); err != nil {
			return err
		}
	}
	return nil
}

// codeCounts returns how often the A55 fake answered each code, by code
// (a TIMEOUT that ran the charge as "TIMEOUT (executed)").
func (e *env) codeCounts(ctx context.Context) ([]CauseCount, error) {
	if e.a55Fake == nil {
		return nil, ctx.Err()
	}
	rules := e.a55Fake.Answers()
	by := map[string]int{}
	for _, s := range rules {
		name := s.Code
		if s.Executed {
			name += " (executed)"
		}
		by[name] += s.Fired
	}
	out := make([]CauseCount, 0, len(by))
	for c, n := range by {
		out = append(out, CauseCount{Cause: c, Count: n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Cause < out[j].Cause })
	return out, nil
}

func (e *env) adminPostCtx(ctx context.Context, url string, body any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return e.adminPost(url, body)
}

// checkLongWaits holds the A55 client to 3DS_UNAVAILABLE's minute: every
// retry after it waited at least 60 s (on the injected sleep), and no
// other retry did.
func (r *runner) checkLongWaits(rep *Report) {
	rep.LongWaits = int(r.flows.longWaits.Load())
	retried := 0
	for _, c := range rep.Retries {
		if strings.EqualFold(c.Cause, a55fake.Answer3DSUnavailable) {
			retried += c.Count
		}
	}
	if retried != rep.LongWaits {
		rep.FlowChecksFailed++
		rep.problem("3DS_UNAVAILABLE: %d retries after it, %d waits of at least %s", retried, rep.LongWaits, longWait)
	}
}

// strangers reads, for every A55 charge the ledger executed under a key
// no record holds, its flow and order as the provider reports them: a
// second payment for an order shows as a duplicate, not only as an
// operation no client knows.
func (r *runner) strangers(ctx context.Context, recs []*opRecord, ledger []fakeserver.Operation) (map[string]stranger, error) {
	known := map[string]bool{}
	for _, rec := range recs {
		known[rec.provider+"\x00"+rec.key] = true
	}
	out := map[string]stranger{}
	for _, op := range ledger {
		if op.Provider != providerA55 || op.Kind != kindChargeCreate || known[op.Provider+"\x00"+op.IdempotencyKey] || r.a55 == nil {
			continue
		}
		ch, err := r.getCharge(ctx, op.ID)
		if err != nil {
			return nil, err
		}
		flow := flowCard
		switch {
		case ch.TypeCharge == a55.TypePix:
			flow = flowPix
		case ch.URL3DS != "" || ch.Status.Is(a55.StatusPending):
			flow = flow3DS
		}
		out[op.ID] = stranger{flow: flow, order: strings.TrimSuffix(ch.Description, " (edited)")}
	}
	return out, nil
}

// codeSegmentOps is the size of the codes segment: charge creates of
// every flow, each answered first with one of A55's codes (codeCycle)
// under its key, submitted once, network faults off.
const codeSegmentOps = 60

// codeCycle is the codes segment's answers, one per create in turn.
func codeCycle() []a55fake.AnswerRule {
	return []a55fake.AnswerRule{
		{Code: a55fake.AnswerTimeout, Executed: true},
		{Code: a55fake.AnswerTimeout},
		{Code: a55fake.AnswerDuplicateRequest},
		{Code: a55fake.Answer3DSUnavailable},
		{Code: a55fake.AnswerProcessingError},
	}
}

// runCodeSegment runs the codes segment: network faults stopped, A55
// chains only, no twins, each create's key answered once with the next
// code of codeCycle. It needs the in-process A55 fake.
func (r *runner) runCodeSegment(ctx context.Context, env *env, gen *scenarioGen) error {
	if env.a55Fake == nil || r.a55 == nil || !r.cfg.A55Codes {
		return nil
	}
	env.stopFaults()
	var scs []*scenario
	for n := 0; n < codeSegmentOps; {
		sc := gen.draw()
		if sc.steps[0].kind != kindChargeCreate {
			continue
		}
		for i := range sc.steps {
			sc.steps[i].dup, sc.steps[i].conflict = false, false
		}
		rule := codeCycle()[len(scs)%len(codeCycle())]
		sc.code = &rule
		scs = append(scs, sc)
		n += len(sc.steps)
	}
	pool(r.cfg.Concurrency, scs, func(sc *scenario) { r.runScenario(ctx, sc) })
	if _, err := r.resumeParked(ctx, env); err != nil {
		return err
	}
	return env.restartFaults()
}

// timeoutExecutedRate is the share of the fault run's creates without a
// twin answered TIMEOUT after the charge was made, once under their key.
const timeoutExecutedRate = 0.03

// answerFirst has the A55 fake answer the first request under key with
// sc's code (the codes segment), or, in the fault run, a create without a
// twin with TIMEOUT after making the charge (timeoutExecutedRate), under
// the network faults like any other answer.
func (r *runner) answerFirst(sc *scenario, st step, key string) error {
	if st.kind != kindChargeCreate || r.env.a55Fake == nil {
		return nil
	}
	if sc.code == nil {
		if !r.cfg.A55Codes || st.dup || st.conflict || seeded(r.cfg.Seed, "timeout executed", sc.id) >= timeoutExecutedRate {
			return nil
		}
		return r.env.a55Fake.AddAnswer(a55fake.AnswerRule{Code: a55fake.AnswerTimeout, Executed: true,
			Path: a55ChargePath, IdempotencyKey: key, Count: 1})
	}
	a := *sc.code
	a.Path, a.IdempotencyKey, a.Count = a55ChargePath, key, 1
	return r.env.a55Fake.AddAnswer(a)
}
