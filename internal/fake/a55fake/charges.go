package a55fake

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/payonce/payonce/internal/fake/fakeserver"
)

// Charge statuses (charge-webhook and status-lifecycle pages, plus
// declined and expired of the quickstart and PIX pages).
const (
	StatusIssued                  = "issued"
	StatusPending                 = "pending" // awaiting the 3DS challenge or the acquirer's answer, or a boleto registered at the bank
	StatusConfirmed               = "confirmed"
	StatusPreCaptured             = "pre_captured" // captured, the acquirer's confirmation awaited
	StatusPaid                    = "paid"
	StatusCanceled                = "canceled"
	StatusError                   = "error"
	StatusDeclined                = "declined"
	StatusExpired                 = "expired"
	StatusRefunded                = "refunded"
	StatusRefundError             = "refund_error" // a refund failed: nothing went back
	StatusChargebackRequested     = "chargeback_requested"
	StatusPreChargebackResolution = "pre_chargeback_resolution"
	StatusChargebackReversed      = "chargeback_reversed"
	StatusChargebackRefunded      = "chargeback_refunded"
	StatusChargeback              = "chargeback" // a dispute lost (status-lifecycle: terminal)
)

// Timing of the fake's asynchronous life, on its clock.
const (
	// PixLifetime is how long a PIX charge created without a due date
	// (the guide's body) waits for its payment; one with a due date
	// waits until that date ends (23:59:59 UTC).
	PixLifetime = 24 * time.Hour
	// BoletoLifetime is how long a boleto created without a due date
	// waits (the boleto page's default, 3 days); one with a due date
	// waits until that date ends.
	BoletoLifetime = 72 * time.Hour
	// ThreeDSTimeout is how long a 3DS challenge waits for the payer
	// before the charge is canceled (abandoned).
	ThreeDSTimeout = 10 * time.Minute
)

// ChargeMessage is one entry of a charge's message list.
type ChargeMessage struct {
	Code        string `json:"code"`
	Source      string `json:"source"`
	Description string `json:"description"`
}

// subscription is the subscription a charge created.
type subscription struct {
	UUID, Cycle, Status, NextChargeDate, EndDate string
}

// charge is a charge as the fake keeps it. It holds the card's brand,
// never its number or CVV.
type charge struct {
	UUID, WalletUUID, MerchantID string
	Status                       string
	TypeCharge, Currency         string
	InstallmentValue             decimal
	InstallmentCount             int
	Amount                       decimal // InstallmentValue × InstallmentCount
	Captured, Refunded           decimal
	capture                      bool // the request's capture: false authorises only
	authorised                   bool // card authorised with capture false, nothing captured yet
	DueDate, Description         string
	TransactionRef               string
	WebhookURL, RedirectURL      string
	origin                       string // the fake's own URL as the creating request reached it, for url_3ds and pages
	threeDS                      bool   // sent to a 3DS challenge
	required3DS                  bool   // answered 3DS_REQUIRED: in status error, its challenge waits (with threeDS)
	acquirerThen                 Event  // pending at the acquirer after a TIMEOUT: the event its ExpiresAt brings
	beforeRefundError            string // the status a failed refund left behind, back after a refund succeeds
	outcome                      cardOutcome
	pix                          *pixPayload
	pixDedicated                 bool // created on /charge/pix/: answers with that page's spelling
	Barcode                      string
	sub                          *subscription
	CardBrand                    string
	Message                      []ChargeMessage
	messageObject                bool // the cancel page's {} on success
	CreatedAt, UpdatedAt         time.Time
	ExpiresAt                    time.Time // the fake clock's time of its timed end (zero: none)
	IdempotencyKey               string
	ChargebackReason             string
	client                       string
	webhooks                     int // deliveries recorded for the charge, for MaxWebhooksPerCharge
}

// places returns the decimals of the charge's currency.
func (c *charge) places() int { return currencyDecimals[c.Currency] }

// remaining is what can still be refunded.
func (c *charge) remaining() decimal { return c.Captured.sub(c.Refunded) }

// isCard reports whether the charge is paid by card.
func (c *charge) isCard() bool {
	switch c.TypeCharge {
	case typeCredit, typeDebit, typeApplePay, typeGooglePay:
		return true
	}
	return false
}

// spec is a validated create request, whichever body form it came in.
type spec struct {
	walletUUID, merchantID  string
	typeCharge, currency    string
	value                   decimal
	count                   int
	dueDate                 string
	dueEnd                  time.Time // when the due date runs out (zero: none given)
	description             string
	capture                 bool
	webhookURL, redirectURL string
	card                    *cardIn
	threeDS                 bool
	sub                     *subscription
	pixDedicated            bool
}

// cardIn is a card as a request sent it; it lives for the request only.
type cardIn struct {
	number, name, month, year, cvv string
}

// Body forms of a create request.
const (
	formReference = iota // the create-charge reference's flat body
	formPix              // the create-pix-charge page's body
	formGuide            // the idempotency guide's nested body
)

// guideOnly are members only the guide's body has; the guide's body has
// no installment_value.
var guideOnly = []string{"amount", "card", "payer"}

// isGuideForm reports whether obj is the idempotency guide's body: no
// installment_value, one of the guide's own members (amount, card,
// payer), and nothing the guide's body does not hold. Any other body is
// read by the reference's rules.
func isGuideForm(obj object) bool {
	if _, ok := obj["installment_value"]; ok {
		return false
	}
	own := false
	for _, k := range guideOnly {
		if _, ok := obj[k]; ok {
			own = true
		}
	}
	if !own {
		return false
	}
	for k := range obj {
		if !hasField(guideChargeFields, k) {
			return false
		}
	}
	return true
}

// createCharge serves POST /api/v1/bank/wallet/charge/ in the
// reference's form or the guide's.
func (f *Fake) createCharge(r *fakeserver.Request) fakeserver.Response {
	return f.create(r, formReference)
}

// createPixCharge serves POST /api/v1/bank/wallet/charge/pix/.
func (f *Fake) createPixCharge(r *fakeserver.Request) fakeserver.Response {
	return f.create(r, formPix)
}

func (f *Fake) create(r *fakeserver.Request, form int) fakeserver.Response {
	obj, bad := f.parseBody(r.Body, false)
	if bad != nil {
		return *bad
	}
	if form == formReference && isGuideForm(obj) {
		form = formGuide
	}
	now := f.e.Clock().Now().UTC()
	var c checks
	var s *spec
	switch form {
	case formReference:
		c.walk("", obj, createChargeFields, false)
		s = referenceSpec(&c, obj, now)
	case formPix:
		c.walk("", obj, createPixFields, false)
		s = pixSpec(&c, obj, now)
	default:
		c.walk("", obj, guideChargeFields, false)
		s = guideSpec(&c, obj, now)
	}
	if !c.ok() {
		return c.answer(f)
	}
	return f.commitCharge(r, s, now)
}

// parseBody decodes a request body as a JSON object; an empty body is {}
// when allowEmpty. A body that is not JSON, or not an object, is answered
// 400.
func (f *Fake) parseBody(body []byte, allowEmpty bool) (object, *fakeserver.Response) {
	if allowEmpty && len(strings.TrimSpace(string(body))) == 0 {
		return object{}, nil
	}
	obj, ok, isObject := parseObject(body)
	switch {
	case !ok:
		resp := f.Problem(fakeserver.ProblemMalformedJSON, 0, "")
		return nil, &resp
	case !isObject:
		resp := f.generalError(http.StatusBadRequest, codeInvalidRequest, "a member has the wrong JSON type",
			[]Detail{{Field: "body", Reason: "want a JSON object"}})
		return nil, &resp
	}
	return obj, nil
}

// commonSpec reads what the reference form and the PIX form share.
func commonSpec(c *checks, obj object, now time.Time, typeCharge string) *spec {
	s := &spec{walletUUID: obj.str("wallet_uuid"), merchantID: obj.str("merchant_id"), typeCharge: typeCharge,
		currency: obj.str("currency"), description: obj.str("description"), capture: true,
		webhookURL: obj.str("webhook_url"), count: 1}
	c.checkID("wallet_uuid", s.walletUUID)
	c.checkID("merchant_id", s.merchantID)
	if e := obj.str("payer_email"); e != "" {
		c.checkEmail("payer_email", e)
	}
	if p := obj.str("payer_cell_phone"); strings.TrimSpace(p) != "" {
		c.checkPhone("payer_cell_phone", p)
	}
	if s.webhookURL != "" {
		c.checkURL("webhook_url", s.webhookURL)
	}
	if d := obj.str("due_date"); d != "" {
		s.dueDate = d
		end, ok := parseDate(d)
		switch {
		case !ok:
			c.rule("due_date", "want a date YYYY-MM-DD")
		case (typeCharge == typePix || typeCharge == typeBoleto) && end.Before(now):
			c.rule("due_date", "already past: a "+typeCharge+" charge expires at its due date")
		default:
			s.dueEnd = end
		}
	}
	return s
}

// referenceSpec checks the create-charge reference's rules beyond the
// members' types and presence, and returns the request.
func referenceSpec(c *checks, obj object, now time.Time) *spec {
	typ := obj.str("type_charge")
	s := commonSpec(c, obj, now, typ)
	s.redirectURL = obj.str("redirect_url")
	if s.redirectURL != "" {
		c.checkURL("redirect_url", s.redirectURL)
	}
	places, known := currencyDecimals[s.currency]
	if (typ == typePix || typ == typeBoleto) && known && s.currency != "BRL" {
		c.ruleCode("currency", typ+" takes BRL only", codeCurrency)
	}
	if v := obj.number("installment_value"); v != "" && known {
		s.value, _ = c.checkAmount("installment_value", v, places, true)
	}
	if n := obj.number("installment_count"); n != "" {
		hi := int64(12)
		if typ == typeDebit || typ == typePix || typ == typeBoleto {
			hi = 1 // debit page: no instalments; boleto: always 1
		}
		count, _ := c.checkInteger("installment_count", n, 1, hi)
		s.count = int(count)
	}
	card := typ == typeCredit || typ == typeDebit || typ == typeApplePay || typ == typeGooglePay
	if capture, given := obj.boolean("capture"); given {
		s.capture = capture
		if !capture && !(typ == typeCredit || typ == typeApplePay || typ == typeGooglePay) {
			c.rule("capture", "false (a pre-authorisation) is for credit cards only, not "+typ)
		}
	}
	s.card = flatCard(c, obj, now)
	if s.card != nil && !card {
		c.rule(fCardNumber, "card fields are not taken with type_charge "+typ)
	}
	threeDS, _ := obj.boolean("threeds_authentication")
	s.threeDS = threeDS && s.card != nil
	switch {
	case threeDS && !(typ == typeCredit || typ == typeDebit):
		c.rule("threeds_authentication", "3DS is for credit_card and debit_card")
	case threeDS && !obj.has("device_info"):
		c.rule("device_info", "required with threeds_authentication")
	}
	if typ == typeDebit && s.card != nil {
		// Debit page: without 3DS and device_info a debit charge is declined.
		if !threeDS {
			c.rule("threeds_authentication", "debit_card with card fields needs true")
		}
		if !obj.has("device_info") && !threeDS {
			c.rule("device_info", "required for debit_card with card fields")
		}
		s.threeDS = true
	}
	for _, pay := range []string{typeApplePay, typeGooglePay} {
		switch {
		case obj.has(pay) && typ != pay:
			c.rule(pay, "only with type_charge "+pay)
		case obj.has(pay) && s.card == nil:
			c.rule(fCardNumber, "required with "+pay+": the token's decrypted card")
		case typ == pay && s.card != nil && !obj.has(pay):
			c.rule(pay, "required with card fields: eci and cavv of the token")
		}
	}
	if sub := obj.sub("subscription"); sub != nil {
		if typ != typeCredit && typ != typeDebit {
			c.rule("subscription", "only with credit_card or debit_card")
		}
		s.sub = &subscription{Cycle: sub.str("cycle"), Status: "active", EndDate: sub.str("end_date")}
		if e := s.sub.EndDate; e != "" {
			if end, ok := parseDate(e); !ok || len(e) != len(time.DateOnly) {
				c.rule("subscription.end_date", "want a date YYYY-MM-DD")
			} else if end.Before(now) {
				c.rule("subscription.end_date", "already past")
			}
		}
	}
	for i, it := range obj.list("items") {
		name := "items[" + strconv.Itoa(i) + "]."
		if q := it.number("quantity"); q != "" {
			c.checkInteger(name+"quantity", q, 1, 1_000_000)
		}
		for _, a := range []string{"total_amount", "unit_amount"} {
			if v := it.number(a); v != "" && known {
				c.checkAmount(name+a, v, places, false)
			}
		}
	}
	if s.card != nil && s.count > 1 {
		if b := cardBrand(s.card.number); b == "Diners" || b == "Discover" {
			c.rule("installment_count", b+" cards take no instalments")
		}
	}
	return s
}

// flatCard reads the five card fields: all or none.
func flatCard(c *checks, obj object, now time.Time) *cardIn {
	n := 0
	for _, name := range cardFieldNames {
		if obj.has(name) {
			n++
		}
	}
	switch n {
	case 0:
		return nil
	case len(cardFieldNames):
	default:
		for _, name := range cardFieldNames {
			if !obj.has(name) {
				c.rule(name, "required with the other card fields: all five or none")
			}
		}
		return nil
	}
	k := &cardIn{number: obj.str(fCardNumber), name: obj.str(fCardName), month: obj.str(fCardMonth),
		year: obj.str(fCardYear), cvv: obj.str(fCardCVV)}
	checkCard(c, k, now, [5]string{fCardNumber, fCardName, fCardMonth, fCardYear, fCardCVV})
	return k
}

// checkCard checks a card's shape (digits only, 12 to 19 of them; month
// 01..12; four-digit year, not past; 3 or 4 CVV digits). The Luhn check
// is not made: the fake is A55's sandbox, whose test cards fail it and
// are decided by their last digit. names are the fields' names in the
// body form.
func checkCard(c *checks, k *cardIn, now time.Time, names [5]string) {
	if l := len(k.number); l < 12 || l > 19 || !allDigits(k.number) {
		c.ruleCode(names[0], "want 12 to 19 digits", codeInvalidCard)
	} else if cardBrand(k.number) == "JCB" {
		c.ruleCode(names[0], "JCB cards are not accepted", codeInvalidCard)
	}
	month, err := strconv.Atoi(k.month)
	monthOK := err == nil && len(k.month) == 2 && allDigits(k.month) && month >= 1 && month <= 12
	if !monthOK {
		c.ruleCode(names[2], "want two digits, 01 to 12", codeInvalidCard)
	}
	year, err := strconv.Atoi(k.year)
	yearOK := err == nil && len(k.year) == 4 && allDigits(k.year)
	if !yearOK {
		c.ruleCode(names[3], "want four digits", codeInvalidCard)
	}
	if monthOK && yearOK && !now.Before(time.Date(year, time.Month(month)+1, 1, 0, 0, 0, 0, time.UTC)) {
		c.ruleCode(names[3], "the card expired", codeExpiredCard)
	}
	if l := len(k.cvv); l < 3 || l > 4 || !allDigits(k.cvv) {
		c.ruleCode(names[4], "want 3 or 4 digits", codeInvalidCVC)
	}
}

// pixSpec checks the create-pix-charge page's body beyond its members.
func pixSpec(c *checks, obj object, now time.Time) *spec {
	s := commonSpec(c, obj, now, typePix)
	s.pixDedicated = true
	if v := obj.number("amount"); v != "" {
		s.value, _ = c.checkAmount("amount", v, currencyDecimals["BRL"], true)
	}
	return s
}

// guideSpec checks the guide's body by the guide's rules: amount a
// decimal string of the currency's decimals, currency, type_charge, and
// a card for card methods. amount is the charge's total.
func guideSpec(c *checks, obj object, now time.Time) *spec {
	typ := obj.str("type_charge")
	s := &spec{walletUUID: obj.str("wallet_uuid"), typeCharge: typ, currency: obj.str("currency"),
		description: obj.str("description"), capture: true, webhookURL: obj.str("webhook_url"), count: 1}
	if p := obj.str("payer_cell_phone"); strings.TrimSpace(p) != "" {
		c.checkPhone("payer_cell_phone", p)
	}
	if s.webhookURL != "" {
		c.checkURL("webhook_url", s.webhookURL)
	}
	places, known := currencyDecimals[s.currency]
	if (typ == typePix || typ == typeBoleto) && known && s.currency != "BRL" {
		c.ruleCode("currency", typ+" takes BRL only", codeCurrency)
	}
	var total decimal
	if v := obj.str("amount"); v != "" && known {
		total, _ = c.checkAmount("amount", v, places, true)
	}
	if n := obj.number("installment_count"); n != "" {
		if count, ok := c.checkInteger("installment_count", n, 1, 12); ok {
			s.count = int(count)
		}
	}
	s.value = decimal{total.cents / int64(s.count)}
	if s.value.mul(s.count) != total || (places == 0 && s.value.cents%100 != 0) {
		c.ruleCode("installment_count", "the amount does not split into equal instalments", codeAmountInvalid)
	}
	if capture, given := obj.boolean("capture"); given {
		s.capture = capture
	}
	if d := obj.str("due_date"); d != "" {
		s.dueDate = d
		end, ok := parseDate(d)
		if !ok {
			c.rule("due_date", "want a date YYYY-MM-DD")
		} else {
			s.dueEnd = end
		}
	}
	if card := obj.sub("card"); card != nil {
		s.card = &cardIn{number: card.str("number"), name: card.str("holder_name"), month: card.str("expiration_month"),
			year: card.str("expiration_year"), cvv: card.str("cvv")}
		checkCard(c, s.card, now, [5]string{"card.number", "card.holder_name", "card.expiration_month", "card.expiration_year", "card.cvv"})
	} else if typ == typeCredit || typ == typeDebit {
		c.rule("card", "required for type_charge "+typ)
	}
	return s
}

// commitCharge creates the charge of a valid request under the fake's
// lock and answers it, or gives the answer a rule injects (answers.go).
func (f *Fake) commitCharge(r *fakeserver.Request, s *spec, now time.Time) fakeserver.Response {
	f.mu.Lock()
	defer f.mu.Unlock()
	w, resp := f.walletForCreateLocked(r.Credential, s)
	if resp != nil {
		return *resp
	}
	ans := f.answerFor(r, site{move: moveCreate, card: s.card != nil,
		credit3D: s.card != nil && !s.threeDS && s.typeCharge == typeCredit})
	if ans != nil && (ans.Code == AnswerTimeout && !ans.Executed || ans.Code == Answer3DSUnavailable || ans.Code == AnswerProcessingError) {
		return f.transientAnswer(r, ans, "")
	}
	c := &charge{
		UUID: f.e.NewUUID(), WalletUUID: w.UUID, MerchantID: w.MerchantUUID, TypeCharge: s.typeCharge, Currency: s.currency,
		InstallmentValue: s.value, InstallmentCount: s.count, Amount: s.value.mul(s.count), DueDate: s.dueDate,
		Description: s.description, TransactionRef: f.e.NewID("txn_"), WebhookURL: s.webhookURL, RedirectURL: s.redirectURL,
		origin: origin(r.HTTP), pixDedicated: s.pixDedicated, Message: []ChargeMessage{}, CreatedAt: now, UpdatedAt: now,
		IdempotencyKey: r.Key, client: r.Credential, capture: s.capture,
	}
	if s.sub != nil {
		c.sub = s.sub
		c.sub.UUID = f.e.NewUUID()
		c.sub.NextChargeDate = nextCharge(now, s.sub.Cycle).Format(time.DateOnly)
	}
	switch {
	case c.TypeCharge == typePix:
		c.Status = StatusIssued
		c.ExpiresAt = dueOr(s.dueEnd, now.Add(PixLifetime))
		c.pix = newPixPayload(c)
	case c.TypeCharge == typeBoleto:
		c.Status = StatusIssued
		c.ExpiresAt = dueOr(s.dueEnd, now.Add(BoletoLifetime))
		c.Barcode = boletoBarcode(c)
	case s.card == nil:
		c.Status = StatusIssued // paid later on A55's page or SDK
	default:
		c.CardBrand = cardBrand(s.card.number)
		c.outcome = testCardOutcome(s.card.number, r.Key, c.UUID)
		switch o := c.outcome; {
		case s.threeDS:
			c.Status, c.threeDS = StatusPending, true
			c.ExpiresAt = now.Add(ThreeDSTimeout)
		case ans != nil && ans.Code == Answer3DSRequired:
			// In status error with the code; its challenge waits as a
			// 3DS charge's does, unless the rule gives none.
			c.Status, c.required3DS = StatusError, true
			c.Message = []ChargeMessage{{Code: Answer3DSRequired, Source: "3ds", Description: "3DS authentication is required"}}
			if !ans.NoChallenge {
				c.threeDS = true
				c.ExpiresAt = now.Add(ThreeDSTimeout)
			}
		case ans != nil && ans.Code == AnswerTimeout:
			// Sent to the acquirer, whose answer comes later (After,
			// Hold) or at once.
			c.Status, c.acquirerThen = StatusPending, thenEvent(ans.Then)
			if ans.After > 0 {
				c.ExpiresAt = now.Add(ans.After)
			} else if !ans.Hold {
				_, _ = f.applyLocked(c, c.acquirerThen, TriggerOptions{}, now) // a pending charge takes it
			}
		case o.code != "":
			c.Status = o.status
			c.Message = []ChargeMessage{{Code: o.code, Source: "acquirer", Description: o.desc}}
			f.addChargeLocked(c)
			f.hooks.enqueue(c, event{})
			return f.chargeError(http.StatusBadRequest, c, o.code, "acquirer", o.desc)
		default:
			confirmLocked(c)
		}
	}
	f.addChargeLocked(c)
	f.timeLocked(c)
	f.hooks.enqueue(c, event{})
	op := fakeserver.Operation{Provider: Provider, Kind: "charge.create", IdempotencyKey: r.Key, ID: c.UUID,
		Credential: r.Credential, Amount: c.Amount.text(c.places()), Status: c.Status}
	if ans != nil {
		op.Code = ans.Code
	}
	f.e.Record(op)
	if ans == nil {
		return f.chargeAnswer(c)
	}
	id := c.UUID
	if ans.OmitChargeUUID {
		id = ""
	}
	if ans.Code == Answer3DSRequired {
		return f.codeAnswer(ans, id, f.challengeURL(c), "3ds", "")
	}
	return f.codeAnswer(ans, id, "", "acquirer", "")
}

// challengeURL is c's url_3ds, "" when no challenge is offered.
func (f *Fake) challengeURL(c *charge) string {
	if !c.threeDS {
		return ""
	}
	return c.origin + threeDSPage + c.UUID
}

// thenEvent is the acquirer's late answer an AnswerRule's Then names.
func thenEvent(then string) Event {
	switch then {
	case StatusDeclined:
		return EventAcquirerDeclined
	case StatusError:
		return EventAcquirerFailed
	}
	return EventAcquirerConfirmed
}

// dueOr is due, or def when no due date was given.
func dueOr(due, def time.Time) time.Time {
	if due.IsZero() {
		return def
	}
	return due
}

// nextCharge is a subscription's next charge date after now.
func nextCharge(now time.Time, cycle string) time.Time {
	switch cycle {
	case "weekly":
		return now.AddDate(0, 0, 7)
	case "biweekly":
		return now.AddDate(0, 0, 14)
	case "quarterly":
		return now.AddDate(0, 3, 0)
	case "semiannually":
		return now.AddDate(0, 6, 0)
	case "yearly":
		return now.AddDate(1, 0, 0)
	}
	return now.AddDate(0, 1, 0)
}

// origin is the fake's own URL as r reached it: the pages url_3ds and
// charge_payment_url name are served there.
func origin(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// chargeError answers a failed or refused charge in the charge-level
// shape: {"charge_uuid","status","message":[{code,source,description}]}.
func (f *Fake) chargeError(status int, c *charge, code, source, desc string) fakeserver.Response {
	st := StatusError
	if c.Status == StatusDeclined {
		st = StatusDeclined
	}
	return fakeserver.JSON(status, map[string]any{
		"charge_uuid": c.UUID,
		"status":      st,
		"message":     []ChargeMessage{{Code: code, Source: source, Description: desc}},
	})
}

// findLocked returns the client's charge and nil, or nil and the answer:
// 404 for an unknown charge (or one in another wallet), 403 when the
// wallet is another client's. walletUUID "" matches any wallet.
func (f *Fake) findLocked(client, chargeUUID, walletUUID string) (*charge, *fakeserver.Response) {
	if walletUUID != "" {
		if w, ok := f.wallets[walletUUID]; ok && w.client != client {
			resp := f.generalError(http.StatusForbidden, codeForbidden, "the wallet belongs to another client",
				[]Detail{{Field: "wallet_uuid", Reason: "not a wallet of this client"}})
			return nil, &resp
		}
	}
	c, ok := f.charges[chargeUUID]
	if !ok || c.client != client || (walletUUID != "" && walletUUID != c.WalletUUID) {
		resp := f.generalError(http.StatusNotFound, codeNotFound, "charge not found",
			[]Detail{{Field: "charge_uuid", Reason: "no such charge in this wallet"}})
		return nil, &resp
	}
	return c, nil
}

// getCharge serves both forms of Get: ?charge_uuid=&wallet_uuid= (both
// required) and /charge/{charge_uuid}/.
func (f *Fake) getCharge(r *fakeserver.Request, chargeUUID, walletUUID string, pathForm bool) fakeserver.Response {
	if !pathForm {
		var c checks
		c.unknownParams(r.HTTP.URL.Query(), getParams)
		if chargeUUID == "" {
			c.rule("charge_uuid", "required")
		}
		if walletUUID == "" {
			c.rule("wallet_uuid", "required")
		}
		if !c.ok() {
			return c.answer(f)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	c, resp := f.findLocked(r.Credential, chargeUUID, walletUUID)
	if resp != nil {
		return *resp
	}
	return f.chargeAnswer(c)
}
