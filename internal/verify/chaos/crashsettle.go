package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/coinepay"
	"github.com/payonce/payonce/internal/corekit"
	"github.com/payonce/payonce/internal/fake/fakeserver"
	"github.com/payonce/payonce/journal"
)

// Ways an in-doubt entry was settled.
const (
	settledByLookup = "lookup" // the provider lookup found what happened (a55 SettleCreate, coinepay SettleApply)
	settledByHand   = "hand"   // payonce.Client.Settle with what the provider's records show
)

// settledEntry is an in-doubt entry after the run settled it.
type settledEntry struct {
	entry payonce.JournalEntry
	how   string
}

// settleInDoubt settles every entry left pending, as a merchant does
// after the run: through the settle API, never by writing the journal
// itself. Card charges and card issues are looked up at the provider
// (SettleCreate, SettleApply, which record not executed once the lookup
// window is over); what a lookup cannot tell, and recharges (Coinepay
// lists no recharges), are settled by hand with Client.Settle from the
// provider's records, here the fake's ledger, as a merchant settles from
// the provider's support or statement.
func (r *crashRun) settleInDoubt(ctx context.Context, j journal.Store, plan []planItem,
	entries map[string]payonce.JournalEntry, ledger []fakeserver.Operation) (map[string]settledEntry, error) {
	clock := payonce.WithClock(r.clock.Now)
	a, err := a55.NewClient(a55.Auth{ClientID: r.cfg.A55ClientID, ClientSecret: r.cfg.A55ClientSecret, TokenURL: r.a55.TokenURL()},
		payonce.WithBaseURL(r.a55.URL), clock, payonce.WithJournal(j))
	if err != nil {
		return nil, err
	}
	b, err := a55.NewClient(a55.Auth{ClientID: r.cfg.A55ClientID, ClientSecret: r.cfg.A55ClientSecret, TokenURL: r.a55b.TokenURL()},
		payonce.WithBaseURL(r.a55b.URL), clock, payonce.WithJournal(j))
	if err != nil {
		return nil, err
	}
	c, err := coinepay.NewClient(r.cfg.CoinepayKey, r.cfg.CoinepaySecret, payonce.WithBaseURL(r.cp.URL), clock, payonce.WithJournal(j))
	if err != nil {
		return nil, err
	}
	out := map[string]settledEntry{}
	for _, it := range plan {
		e, ok := entries[it.ref]
		if !ok || e.State != payonce.JournalPending {
			continue
		}
		if err := waitLease(ctx, j, e); err != nil {
			return nil, err
		}
		opts := &a55.SettleOptions{RecordNotExecuted: true}
		var got payonce.JournalEntry
		var lerr error
		switch it.work {
		case workCharge, workDeclined, workLookAlike, workPix, work3DS:
			// The journal alone: the entry's summary, no card.
			client := a
			if it.other {
				client = b
			}
			var s *a55.ChargeSettlement
			if s, lerr = client.Charges.SettleCreate(ctx, it.journalRef(), opts); lerr == nil {
				got = s.Entry
			}
		case workApply:
			var s *coinepay.ApplySettlement
			if s, lerr = c.Cards.SettleApply(ctx, it.journalRef(), applyRequest(), &coinepay.SettleOptions{RecordNotExecuted: true}); lerr == nil {
				got = s.Entry
			}
		default:
			lerr = errNoLookup
		}
		if lerr == nil && got.Settled() {
			out[it.ref] = settledEntry{entry: got, how: settledByLookup}
			continue
		}
		if lerr != nil && !errors.Is(lerr, payonce.ErrLookupNotFound) && !errors.Is(lerr, payonce.ErrLookupAmbiguous) && !errors.Is(lerr, errNoLookup) {
			return nil, fmt.Errorf("chaos: settle %s by lookup: %w", it.ref, lerr)
		}
		core := a.Core()
		switch it.provider() {
		case providerCoinepay:
			core = c.Core()
		case providerA55Other:
			core = b.Core()
		}
		got, err := core.Settle(ctx, it.journalRef(), settlementFromRecords(it, e, ledger))
		if err != nil {
			return nil, fmt.Errorf("chaos: settle %s by hand: %w", it.ref, err)
		}
		out[it.ref] = settledEntry{entry: got, how: settledByHand}
	}
	return out, nil
}

var errNoLookup = errors.New("chaos: the provider lists no such operation")

// maxLeaseWait bounds how long the settling waits for the lease of a
// worker that died holding an entry (a run's lease before its first
// attempt is corekit.JournalReserveLease).
const maxLeaseWait = corekit.JournalReserveLease + 5*time.Second

// waitLease waits until e's lease, held by a worker that died, ends on
// the journal's clock: Settle refuses an entry a run still holds.
func waitLease(ctx context.Context, j journal.Store, e payonce.JournalEntry) error {
	deadline := time.Now().Add(maxLeaseWait)
	for {
		now, err := j.Now(ctx)
		if err != nil {
			return err
		}
		if now.IsZero() {
			now = time.Now()
		}
		if e.LeaseOwner == "" || !e.LeaseUntil.After(now) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("chaos: %s still leased after %s", e.Reference, maxLeaseWait)
		}
		t := time.NewTimer(min(e.LeaseUntil.Sub(now)+10*time.Millisecond, time.Second))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		if e, err = j.Get(ctx, e.Scope, e.Reference); err != nil {
			return err
		}
	}
}

// settlementFromRecords is what the provider's records say of e: the
// operation its key executed, or none.
func settlementFromRecords(it planItem, e payonce.JournalEntry, ledger []fakeserver.Operation) payonce.Settlement {
	for _, op := range ledger {
		if op.Provider != it.provider() || op.IdempotencyKey != e.Key {
			continue
		}
		var body []byte
		if it.a55() {
			body, _ = json.Marshal(map[string]any{"charge_uuid": op.ID, "status": "confirmed", "amount": op.Amount, "currency": "BRL", "description": it.journalRef()})
		} else {
			// The ledger names a Coinepay operation by its card: an
			// issue's card is its resource, but a recharge is one of
			// many on that card, and naming the card as its recharge_id
			// would claim another reference's recharge of the card (the
			// journal refuses it). The records give no recharge ID:
			// none is named.
			body, _ = json.Marshal(map[string]any{"code": 200, "message": "ok", "message_key": "success",
				"data": map[string]any{"card_id": op.ID, "amount": op.Amount}})
		}
		return payonce.Settlement{State: payonce.JournalSucceeded, Result: body, StatusCode: 200,
			Reason: "the provider's records show the operation under the entry's key"}
	}
	return payonce.Settlement{State: payonce.JournalFailed, NotExecuted: true, Reason: "the provider's records show no operation under the entry's key"}
}
