package chaos

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/coinepay"
	"github.com/payonce/payonce/internal/fake/a55fake"
)

// Operation kinds, named as the fakes' ledgers name them.
const (
	kindWalletCreate   = "wallet.create"
	kindChargeCreate   = "charge.create"
	kindChargeCapture  = "charge.capture"
	kindChargeRefund   = "charge.refund"
	kindChargeCancel   = "charge.cancel"
	kindCardApply      = "card.apply"
	kindCardRecharge   = "card.recharge"
	providerA55        = "a55"
	providerCoinepay   = "coinepay"
	variantMain        = 0 // the operation's own body
	variantConflicting = 1 // same key, another body: must get 409 or win alone
)

// step is one business operation of a scenario and how it is submitted.
type step struct {
	kind     string
	capture  bool // charge.create: capture at once
	second   bool // charge.refund: the refund of what remains
	dup      bool // also submitted in parallel with the same key and body
	conflict bool // also submitted in parallel with the same key and another body
}

func (s step) provider() string {
	if s.kind == kindCardApply || s.kind == kindCardRecharge {
		return providerCoinepay
	}
	return providerA55
}

// scenario is a merchant's chain of operations on one charge or card.
type scenario struct {
	id    int
	steps []step
	next  int // the step to run

	flow       string // an A55 chain's payment flow: flowCard, flowPix or flow3DS
	chargeUUID string
	amount     payonce.Amount
	cardID     string

	failed  bool
	pending *pendingStep        // parked after a temporary failure
	code    *a55fake.AnswerRule // the codes segment: the A55 code its create is answered first with
}

// scenarioGen draws scenarios from rng, a segment at a time: the
// scenarios of consecutive next calls are those one call for the sum
// would draw.
type scenarioGen struct {
	rng                   *rand.Rand
	dupRate, conflictRate float64
	a55On, coinepayOn     bool
	nextID                int
}

func newScenarioGen(rng *rand.Rand, dupRate, conflictRate float64, a55On, coinepayOn bool) *scenarioGen {
	return &scenarioGen{rng: rng, dupRate: dupRate, conflictRate: conflictRate, a55On: a55On, coinepayOn: coinepayOn}
}

// count returns how many operations next(n) would hold, drawing them.
func (g *scenarioGen) count(n int) int {
	total := 0
	for total < n {
		total += len(g.draw().steps)
	}
	return total
}

// next draws chains until they hold at least n operations, and returns
// them with the operations they hold.
func (g *scenarioGen) next(n int) ([]*scenario, int) {
	var out []*scenario
	total := 0
	for total < n {
		sc := g.draw()
		out = append(out, sc)
		total += len(sc.steps)
	}
	return out, total
}

// draw draws one chain.
func (g *scenarioGen) draw() *scenario {
	rng := g.rng
	flags := func(s step) step {
		s.dup = rng.Float64() < g.dupRate
		s.conflict = rng.Float64() < g.conflictRate
		return s
	}
	var steps []step
	// 0-2: card flows, 3: Coinepay, 4: PIX, 5: 3DS.
	pick := rng.IntN(6)
	if !g.a55On {
		pick = 3
	} else if !g.coinepayOn && pick == 3 {
		pick = []int{0, 1, 2, 4, 5}[rng.IntN(5)]
	}
	flow := flowCard
	switch pick {
	case 0: // sale: charge, refund half, refund the rest
		steps = []step{{kind: kindChargeCreate, capture: true}, {kind: kindChargeRefund}, {kind: kindChargeRefund, second: true}}
	case 1: // pre-authorisation, capture, refund
		steps = []step{{kind: kindChargeCreate}, {kind: kindChargeCapture}, {kind: kindChargeRefund, second: true}}
	case 2: // pre-authorisation, then cancel
		steps = []step{{kind: kindChargeCreate}, {kind: kindChargeCancel}}
	case 4: // PIX: paid or expired later (finishFlow)
		steps, flow = []step{{kind: kindChargeCreate}}, flowPix
	case 5: // card with 3DS: the challenge completed or abandoned later (finishFlow)
		steps, flow = []step{{kind: kindChargeCreate}}, flow3DS
	default: // issue a card, fund it twice
		steps, flow = []step{{kind: kindCardApply}, {kind: kindCardRecharge}, {kind: kindCardRecharge}}, ""
	}
	for i := range steps {
		steps[i] = flags(steps[i])
	}
	g.nextID++
	return &scenario{id: g.nextID - 1, steps: steps, flow: flow}
}

// testCard confirms on the A55 sandbox and the fake. It expires five years
// from now, so that the run never ages into refused charges.
func testCard() *payonce.Card {
	return &payonce.Card{Number: "4111111111111111", HolderName: "CHAOS TEST", ExpirationMonth: "12",
		ExpirationYear: strconv.Itoa(time.Now().Year() + 5), CVV: "123"}
}

// result is what one submission learned.
type result struct {
	id       string
	amount   payonce.Amount
	attempts int
	replayed bool        // the answer was marked as a stored replay
	charge   *a55.Charge // a charge.create's charge
}

// submit sends one submission of step st of sc. Its body is a pure
// function of the scenario's state and the variant, so a resumed
// submission sends the very same bytes.
func (r *runner) submit(ctx context.Context, sc *scenario, st step, variant int, opts ...payonce.CallOption) (result, error) {
	amountFor := func(minor int64) payonce.Amount {
		a, _ := payonce.AmountFromMinor(minor)
		return a
	}
	switch st.kind {
	case kindChargeCreate:
		ch, err := r.a55.Charges.Create(ctx, r.chargeRequest(sc, st, variant), opts...)
		if err != nil {
			return r.lookUpCreate(ctx, sc, st, variant, err)
		}
		return chargeOf(ch), nil
	case kindChargeCapture:
		req := &a55.CaptureRequest{ChargeUUID: sc.chargeUUID, WalletUUID: r.walletUUID}
		if variant == variantConflicting {
			req.Amount = sc.amount // the whole amount, written out: another body, same effect
		}
		return chargeResult(r.a55.Charges.Capture(ctx, req, opts...))
	case kindChargeRefund:
		req := &a55.RefundRequest{ChargeUUID: sc.chargeUUID, WalletUUID: r.walletUUID, Reason: "customer request"}
		if !st.second {
			req.Amount = amountFor(sc.amount.Minor() / 2)
		}
		if variant == variantConflicting {
			req.Reason = "duplicate order"
		}
		return chargeResult(r.a55.Charges.Refund(ctx, req, opts...))
	case kindChargeCancel:
		req := &a55.CancelRequest{ChargeUUID: sc.chargeUUID, WalletUUID: r.walletUUID, Reason: "customer request"}
		if variant == variantConflicting {
			req.Reason = "fraud suspicion"
		}
		return chargeResult(r.a55.Charges.Cancel(ctx, req, opts...))
	case kindCardApply:
		req := &coinepay.ApplyRequest{HeaderID: "hdr_chaos", PackageID: "pkg_basic"}
		if variant == variantConflicting {
			req.PackageID = "pkg_plus"
		}
		res, err := r.coinepay.Cards.Apply(ctx, req, opts...)
		if err != nil {
			return result{attempts: attemptsOf(err)}, err
		}
		return result{id: res.CardID, attempts: res.Meta.Attempts, replayed: res.Meta.Replayed}, nil
	case kindCardRecharge:
		req := &coinepay.RechargeRequest{CardID: sc.cardID, Amount: amountFor(500 + int64(sc.id%50))}
		if variant == variantConflicting {
			req.Amount = amountFor(req.Amount.Minor() + 1)
		}
		res, err := r.coinepay.Cards.Recharge(ctx, req, opts...)
		if err != nil {
			return result{attempts: attemptsOf(err)}, err
		}
		return result{id: res.CardID, attempts: res.Meta.Attempts, replayed: res.Meta.Replayed}, nil
	}
	return result{}, errors.New("chaos: unknown step " + st.kind)
}

// chargeRequest is the create of sc's charge in its flow: a card
// charge, a PIX charge, or a card charge with 3DS. The variant
// conflicting edits the description.
func (r *runner) chargeRequest(sc *scenario, st step, variant int) *a55.ChargeCreateRequest {
	amount, _ := payonce.AmountFromMinor(1000 + int64(sc.id%900)*10)
	req := a55test.Complete(&a55.ChargeCreateRequest{
		InstallmentValue: amount, Currency: payonce.BRL, TypeCharge: a55.TypeCreditCard,
		Card:       testCard(),
		Payer:      a55.Payer{Name: "Chaos Payer", Email: "chaos@example.com", TaxID: "12345678909"},
		WalletUUID: r.walletUUID, MerchantID: r.merchantID, Description: description(sc, variant),
	})
	switch sc.flow {
	case flowPix:
		req.TypeCharge, req.Card = a55.TypePix, nil
	case flow3DS:
		req.ThreeDSAuthentication = true
		req.DeviceInfo = &a55.DeviceInfo{IPAddress: "203.0.113.7", UserAgent: "Mozilla/5.0 (chaos)", HTTPAcceptContent: "text/html",
			HTTPBrowserLanguage: "pt-BR", HTTPBrowserColorDepth: "24", HTTPBrowserScreenHeight: "1080", HTTPBrowserScreenWidth: "1920",
			HTTPBrowserTimeDifference: "180"}
	default:
		if !st.capture {
			req.Capture = a55.Bool(false)
		}
	}
	return req
}

func chargeResult(ch *a55.Charge, err error) (result, error) {
	if err != nil {
		return result{attempts: attemptsOf(err)}, err
	}
	return result{id: ch.UUID, amount: ch.Amount, attempts: ch.Meta.Attempts, replayed: ch.Meta.Replayed}, nil
}

func attemptsOf(err error) int {
	var e *payonce.APIError
	if errors.As(err, &e) {
		return e.Attempts
	}
	return 0
}

// apply moves the scenario's state forward after a step succeeded.
func (sc *scenario) apply(st step, res result) {
	switch st.kind {
	case kindChargeCreate:
		sc.chargeUUID, sc.amount = res.id, res.amount
	case kindCardApply:
		sc.cardID = res.id
	}
}
