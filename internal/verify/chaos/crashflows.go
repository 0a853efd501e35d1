package chaos

import (
	"errors"
	"fmt"
	"sort"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/internal/fake/fakeserver"
)

// finishFlows plays the payers of the crash run's PIX and 3DS charges
// once the workers are done: each charge the first merchant's ledger
// executed for a PIX reference is paid or expired, each 3DS challenge
// completed or abandoned (a seeded choice per reference), through the
// fake's triggers, and the status must be the one the event leads to.
// It counts the A55 references by flow and returns the problems.
func (r *crashRun) finishFlows(plan []planItem, ledger []fakeserver.Operation) ([]FlowCount, []string) {
	flows := map[string]*FlowCount{}
	flowOf := func(f string) *FlowCount {
		if flows[f] == nil {
			flows[f] = &FlowCount{Flow: f, Outcomes: map[string]int{}}
		}
		return flows[f]
	}
	byAmount := map[string]planItem{}
	for _, it := range plan {
		f := flowOfWork(it.work)
		if f == "" {
			continue
		}
		flowOf(f).Count++
		if it.work != workLookAlike {
			a, _ := payonce.AmountFromMinor(itemAmount(it))
			byAmount[it.provider()+"\x00"+a.String()] = it
		}
	}
	var problems []string
	for _, op := range ledger {
		it, ok := byAmount[op.Provider+"\x00"+op.Amount]
		if !ok || op.Kind != kindChargeCreate {
			continue
		}
		f := flowOfWork(it.work)
		flowOf(f).Ledger++
		if it.provider() != providerA55 || (f != flowPix && f != flow3DS) {
			continue
		}
		ev, want := a55test.EventPixPaid, "paid"
		switch {
		case f == flowPix && r.chance(it.ref, "pix") < 0.3:
			ev, want = a55test.EventPixExpired, "expired"
		case f == flow3DS && r.chance(it.ref, "3ds") < 0.3:
			ev, want = a55test.Event3DSAbandoned, "canceled"
		case f == flow3DS:
			ev, want = a55test.Event3DSCompleted, "confirmed"
		}
		got, err := r.a55.Trigger(op.ID, ev, "", "")
		switch {
		case errors.Is(err, a55test.ErrEventNotAllowed):
			// Already past the event (a charge in doubt a lookup read):
			// its status now is what counts.
			got, _, err = r.a55.ChargeStatus(op.ID)
			want = got
		case err == nil && got != want:
			err = fmt.Errorf("status %s after %s, want %s", got, ev, want)
		}
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %s charge %s: %v", it.ref, f, op.ID, err))
			continue
		}
		flowOf(f).Outcomes[want]++
	}
	out := make([]FlowCount, 0, len(flows))
	for _, fc := range flows {
		if len(fc.Outcomes) == 0 {
			fc.Outcomes = nil
		}
		out = append(out, *fc)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Flow < out[j].Flow })
	return out, problems
}
