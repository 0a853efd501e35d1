package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/coinepay"
)

// Kinds of work in the crash run's plan. A reference names the order and
// its step, "order-17/charge": the worker rebuilds the body from it alone,
// as a merchant's job re-runs its business logic for an order, so no card
// data ever crosses the pipes.
const (
	workCharge   = "charge"   // A55 charge with a card that confirms
	workDeclined = "declined" // A55 charge with a card the issuer declines: a final failure
	workApply    = "apply"    // Coinepay card issue
	workRecharge = "recharge" // Coinepay recharge of one of the run's cards
	// workLookAlike is an A55 charge with the amount and description of the
	// card charge of its index, under its own reference and a key of its
	// own (lookAlikeKey), which the provider answers 503 before anything runs:
	// never executed.
	workLookAlike = "lookalike"
	workPix       = "pix" // A55 PIX charge: issued, then paid or expired by the fake's trigger
	work3DS       = "3ds" // A55 card charge with 3DS: pending with url_3ds, then completed or abandoned
)

// planItem is one business operation of the crash run.
type planItem struct {
	index int
	work  string
	ref   string // the run's name of the item, unique in the plan
	// other: the item is the second merchant's (the same A55 client ID on
	// another origin), under the same journal reference as the first
	// merchant's item of that index.
	other bool
}

// otherPrefix marks the second merchant's items in the plan.
const otherPrefix = "b:"

// providerA55Other is the second merchant's A55 (another origin).
const providerA55Other = "a55-other"

// journalRef is the reference the item is recorded under: both merchants
// use the same ones.
func (p planItem) journalRef() string { return strings.TrimPrefix(p.ref, otherPrefix) }

// provider is the provider the item's operation goes to.
func (p planItem) provider() string {
	switch {
	case p.work == workApply || p.work == workRecharge:
		return providerCoinepay
	case p.other:
		return providerA55Other
	}
	return providerA55
}

// a55 reports whether the item goes to an A55 fake.
func (p planItem) a55() bool { return p.provider() != providerCoinepay }

// kind is the ledger's name of the item's operation.
func (p planItem) kind() string {
	switch p.work {
	case workApply:
		return kindCardApply
	case workRecharge:
		return kindCardRecharge
	}
	return kindChargeCreate
}

// buildPlan draws n references: about 30 % card charges, 5 % declined
// charges, 7 % PIX charges, 8 % 3DS charges, 20 % card issues and 30 %
// recharges.
func buildPlan(n int, seed uint64) []planItem {
	rng := rand.New(rand.NewPCG(seed, seed^0xc7a5))
	out := make([]planItem, n)
	for i := range out {
		x := rng.Float64()
		w := workRecharge
		switch {
		case x < 0.30:
			w = workCharge
		case x < 0.35:
			w = workDeclined
		case x < 0.42:
			w = workPix
		case x < 0.50:
			w = work3DS
		case x < 0.70:
			w = workApply
		}
		out[i] = planItem{index: i, work: w, ref: fmt.Sprintf("order-%d/%s", i, w)}
	}
	// A plan of 20 or more has every A55 flow: the last recharges become
	// a PIX and a 3DS charge when the draw gave none.
	for _, w := range []string{workPix, work3DS} {
		if n < 20 || slices.ContainsFunc(out, func(p planItem) bool { return p.work == w }) {
			continue
		}
		for i := n - 1; i >= 0; i-- {
			if out[i].work == workRecharge {
				out[i] = planItem{index: i, work: w, ref: fmt.Sprintf("order-%d/%s", i, w)}
				break
			}
		}
	}
	return out
}

// parseRef turns a reference back into its plan item.
func parseRef(ref string) (planItem, error) {
	if rest, ok := strings.CutPrefix(ref, otherPrefix); ok {
		p, err := parseRef(rest)
		if err != nil || p.work != workCharge {
			return planItem{}, fmt.Errorf("chaos: bad reference %q", ref)
		}
		p.ref, p.other = ref, true
		return p, nil
	}
	order, w, ok := strings.Cut(ref, "/")
	num, ok2 := strings.CutPrefix(order, "order-")
	i, err := strconv.Atoi(num)
	if !ok || !ok2 || err != nil || i < 0 {
		return planItem{}, fmt.Errorf("chaos: bad reference %q", ref)
	}
	switch w {
	case workCharge, workDeclined, workApply, workRecharge, workLookAlike, workPix, work3DS:
	default:
		return planItem{}, fmt.Errorf("chaos: bad reference %q", ref)
	}
	return planItem{index: i, work: w, ref: ref}, nil
}

// lookAlikeKey is the key a look-alike is sent under, created at created:
// its ID is the look-alike's reference's, so that the parent names it in the fault
// rule that answers it 503 (the journal keeps the first creation time).
// A worker makes it on the machine's clock, which a PostgreSQL journal's
// shares: never ahead of it, so never refused as created in the future.
func lookAlikeKey(p planItem, created time.Time) payonce.Key {
	k, err := payonce.NewKey(created, "chaos-lookalike", p.journalRef())
	if err != nil { // the parts are never empty
		panic(err)
	}
	return k
}

// crashCVV is the CVV of the crash run's cards: distinctive, so that a
// test finding it in the journal finds a leak.
const crashCVV = "7391"

// itemAmount is the item's amount in minor units: unique per reference
// within a kind, so that the ledger's amount names the reference even
// under a key the journal never saw.
func itemAmount(p planItem) int64 {
	if p.work == workRecharge {
		return 500 + int64(p.index)
	}
	return 1000 + int64(p.index)
}

// crashClients are one worker's SDK clients and the resources the parent
// set up for the run.
type crashClients struct {
	a55       *a55.Client
	a55Other  *a55.Client // the second merchant's (another origin)
	coinepay  *coinepay.Client
	wallet    string
	merchant  string // the wallet's merchant
	wallet2   string // the second merchant's wallet
	merchant2 string // its merchant
	cards     []string
	journal   bool // the clients have a journal: calls carry their reference
}

// outcome is what one delivery of a reference ended with.
type outcome struct {
	id          string // the resource the answer named (ledger ID)
	attempts    int
	fromJournal bool
}

// chargeRequest is the A55 charge of a charge item into wallet of
// merchant: the same bytes in every worker and in the parent's settle
// lookup.
func chargeRequest(p planItem, amount payonce.Amount, wallet, merchant string) *a55.ChargeCreateRequest {
	card := &payonce.Card{Number: "4111111111111111", HolderName: "CHAOS CRASH", ExpirationMonth: "12",
		ExpirationYear: testCard().ExpirationYear, CVV: crashCVV}
	if p.work == workDeclined {
		card.Number = a55test.CardDeclined
	}
	description := p.journalRef()
	if p.work == workLookAlike {
		description = fmt.Sprintf("order-%d/%s", p.index, workCharge) // its card charge's: a lookup cannot tell them apart
	}
	req := a55test.Complete(&a55.ChargeCreateRequest{
		InstallmentValue: amount, Currency: payonce.BRL, TypeCharge: a55.TypeCreditCard, Card: card,
		Payer:      a55.Payer{Name: "Crash Payer", Email: "crash@example.com", TaxID: "12345678909"},
		WalletUUID: wallet, MerchantID: merchant, Description: description,
	})
	switch p.work {
	case workPix:
		req.TypeCharge, req.Card = a55.TypePix, nil
	case work3DS:
		req.ThreeDSAuthentication = true
		req.DeviceInfo = &a55.DeviceInfo{IPAddress: "203.0.113.7", UserAgent: "Mozilla/5.0 (chaos)", HTTPAcceptContent: "text/html",
			HTTPBrowserLanguage: "pt-BR", HTTPBrowserColorDepth: "24", HTTPBrowserScreenHeight: "1080", HTTPBrowserScreenWidth: "1920",
			HTTPBrowserTimeDifference: "180"}
	}
	return req
}

// flowOfWork is the payment flow of an A55 charge item ("" for Coinepay's).
func flowOfWork(w string) string {
	switch w {
	case workPix:
		return flowPix
	case work3DS:
		return flow3DS
	case workCharge, workDeclined, workLookAlike:
		return flowCard
	}
	return ""
}

// applyRequest is the Coinepay card issue of an apply item.
func applyRequest() *coinepay.ApplyRequest {
	return &coinepay.ApplyRequest{HeaderID: "hdr_chaos", PackageID: "pkg_basic"}
}

// execute runs the item's operation with its reference, exactly as a
// merchant's job would. The body is a pure function of the reference.
func (cc *crashClients) execute(ctx context.Context, p planItem) (outcome, error) {
	amount, err := payonce.AmountFromMinor(itemAmount(p))
	if err != nil {
		return outcome{}, err
	}
	var opts []payonce.CallOption
	if cc.journal {
		opts = append(opts, payonce.WithReference(p.journalRef()))
	}
	switch p.work {
	case workCharge, workDeclined, workLookAlike, workPix, work3DS:
		client, wallet, merchant := cc.a55, cc.wallet, cc.merchant
		if p.work == workLookAlike {
			opts = append(opts, payonce.WithKey(lookAlikeKey(p, time.Now())))
		}
		if p.other {
			client, wallet, merchant = cc.a55Other, cc.wallet2, cc.merchant2
		}
		if client == nil {
			return outcome{}, errors.New("chaos: no client for the second merchant")
		}
		ch, err := client.Charges.Create(ctx, chargeRequest(p, amount, wallet, merchant), opts...)
		if err != nil {
			return outcome{attempts: attemptsOf(err)}, err
		}
		return outcome{id: ch.UUID, attempts: ch.Meta.Attempts, fromJournal: ch.Meta.FromJournal}, nil
	case workApply:
		res, err := cc.coinepay.Cards.Apply(ctx, applyRequest(), opts...)
		if err != nil {
			return outcome{attempts: attemptsOf(err)}, err
		}
		return outcome{id: res.CardID, attempts: res.Meta.Attempts, fromJournal: res.Meta.FromJournal}, nil
	case workRecharge:
		if len(cc.cards) == 0 {
			return outcome{}, errors.New("chaos: no card to recharge")
		}
		req := &coinepay.RechargeRequest{CardID: cc.cards[p.index%len(cc.cards)], Amount: amount}
		res, err := cc.coinepay.Cards.Recharge(ctx, req, opts...)
		if err != nil {
			return outcome{attempts: attemptsOf(err)}, err
		}
		return outcome{id: res.CardID, attempts: res.Meta.Attempts, fromJournal: res.Meta.FromJournal}, nil
	}
	return outcome{}, fmt.Errorf("chaos: unknown work %q", p.work)
}
