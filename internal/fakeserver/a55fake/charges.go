package a55fake

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/fakeserver"
)

// Sandbox test cards (A55 public reference).
const (
	CardConfirms  = "4111111111111111"
	CardDeclined  = "4000000000000002"
	CardProcError = "4000000000000069"
)

// Charge statuses used by the fake.
const (
	StatusConfirmed = "confirmed"
	StatusPending   = "pending"
	StatusIssued    = "issued"
	StatusCanceled  = "canceled"
	StatusError     = "error"
	StatusRefunded  = "refunded"
)

var typeCharges = map[string]bool{"credit_card": true, "debit_card": true, "pix": true, "boleto": true, "applepay": true, "googlepay": true}

type wallet struct {
	UUID      string    `json:"wallet_uuid"`
	Name      string    `json:"name,omitempty"`
	Status    string    `json:"status"`
	CreatedAt time.Time `json:"created_at"`
	client    string
}

// ChargeMessage is one entry of a charge's message list.
type ChargeMessage struct {
	Code        string `json:"code"`
	Source      string `json:"source"`
	Description string `json:"description"`
}

type cardView struct {
	Last4           string `json:"last4"`
	HolderName      string `json:"holder_name,omitempty"`
	ExpirationMonth string `json:"expiration_month,omitempty"`
	ExpirationYear  string `json:"expiration_year,omitempty"`
}

// charge is a charge and its JSON view. It holds the card's last four
// digits only, never the number or the CVV.
type charge struct {
	UUID             string          `json:"charge_uuid"`
	WalletUUID       string          `json:"wallet_uuid"`
	Status           string          `json:"status"`
	Amount           payonce.Amount  `json:"amount"`
	CapturedAmount   payonce.Amount  `json:"captured_amount"`
	RefundedAmount   payonce.Amount  `json:"refunded_amount"`
	Currency         string          `json:"currency"`
	TypeCharge       string          `json:"type_charge"`
	Capture          bool            `json:"capture"`
	Description      string          `json:"description,omitempty"`
	DueDate          string          `json:"due_date,omitempty"`
	InstallmentCount int             `json:"installment_count,omitempty"`
	WebhookURL       string          `json:"webhook_url,omitempty"`
	Card             *cardView       `json:"card,omitempty"`
	Payer            json.RawMessage `json:"payer,omitempty"`
	Message          []ChargeMessage `json:"message"`
	CreatedAt        time.Time       `json:"created_at"`
	UpdatedAt        time.Time       `json:"updated_at"`
	// IdempotencyKey is the key of the request that created the charge,
	// a fake-only extension that lets a merchant find the charge of a
	// lost answer (A55 documents no such field).
	IdempotencyKey string `json:"idempotency_key,omitempty"`
	client         string
	preauth        bool
	webhooks       int // deliveries recorded for the charge, for MaxWebhooksPerCharge
}

func (f *Fake) chargeError(status int, chargeUUID, code, source, desc string) fakeserver.Response {
	return fakeserver.JSON(status, map[string]any{
		"charge_uuid": chargeUUID,
		"status":      StatusError,
		"message":     []ChargeMessage{{Code: code, Source: source, Description: desc}},
	})
}

// decodeErr maps a body decoding error to the answer.
func (f *Fake) decodeErr(err error) fakeserver.Response {
	var syn *json.SyntaxError
	switch {
	case errors.Is(err, payonce.ErrInvalidAmount):
		return f.generalError(http.StatusBadRequest, "AMOUNT_INVALID", "invalid amount",
			[]Detail{{Field: "amount", Reason: "want a decimal string such as \"100.00\""}})
	case errors.As(err, &syn):
		return f.Problem(fakeserver.ProblemMalformedJSON, 0, "")
	}
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		return f.validation(typ.Field, "wrong type")
	}
	return f.Problem(fakeserver.ProblemMalformedJSON, 0, "")
}

func (f *Fake) createWallet(r *fakeserver.Request) fakeserver.Response {
	var in struct {
		Name string `json:"name"`
	}
	if err := r.Decode(&in, true); err != nil {
		return f.decodeErr(err)
	}
	w := &wallet{UUID: f.e.NewUUID(), Name: in.Name, Status: "active", CreatedAt: f.e.Clock().Now().UTC(), client: r.Credential}
	f.mu.Lock()
	f.addWalletLocked(w)
	f.mu.Unlock()
	f.e.Record(fakeserver.Operation{Provider: Provider, Kind: "wallet.create", IdempotencyKey: r.Key, ID: w.UUID, Credential: r.Credential})
	return fakeserver.JSON(http.StatusOK, w)
}

type chargeRequest struct {
	WalletUUID       string          `json:"wallet_uuid"`
	Amount           *payonce.Amount `json:"amount"`
	Currency         string          `json:"currency"`
	TypeCharge       string          `json:"type_charge"`
	Card             *cardRequest    `json:"card"`
	Payer            json.RawMessage `json:"payer"`
	Description      string          `json:"description"`
	DueDate          string          `json:"due_date"`
	InstallmentCount int             `json:"installment_count"`
	Capture          *bool           `json:"capture"`
	WebhookURL       string          `json:"webhook_url"`
}

type cardRequest struct {
	Number          string `json:"number"`
	HolderName      string `json:"holder_name"`
	ExpirationMonth string `json:"expiration_month"`
	ExpirationYear  string `json:"expiration_year"`
	CVV             string `json:"cvv"`
}

// cardProblem checks a card at now; it returns an A55 code or "".
func cardProblem(c *cardRequest, now time.Time) (code, desc string) {
	n := c.Number
	if len(n) < 12 || len(n) > 19 || !luhnValid(n) {
		return "INVALID_CARD", "card number is invalid"
	}
	month, err1 := strconv.Atoi(c.ExpirationMonth)
	year, err2 := strconv.Atoi(c.ExpirationYear)
	if err1 != nil || err2 != nil || month < 1 || month > 12 || len(c.ExpirationYear) != 4 {
		return "INVALID_CARD", "card expiry is invalid"
	}
	if !now.Before(time.Date(year, time.Month(month)+1, 1, 0, 0, 0, 0, time.UTC)) {
		return "EXPIRED_CARD", "card has expired"
	}
	if l := len(c.CVV); l < 3 || l > 4 {
		return "INVALID_CVC", "cvv must have 3 or 4 digits"
	}
	for i := 0; i < len(c.CVV); i++ {
		if c.CVV[i] < '0' || c.CVV[i] > '9' {
			return "INVALID_CVC", "cvv must have 3 or 4 digits"
		}
	}
	return "", ""
}

func last4(n string) string {
	if len(n) < 4 {
		return ""
	}
	return n[len(n)-4:]
}

func (f *Fake) createCharge(r *fakeserver.Request) fakeserver.Response {
	var in chargeRequest
	if err := r.Decode(&in, false); err != nil {
		return f.decodeErr(err)
	}
	switch {
	case in.Amount == nil || in.Amount.IsZero():
		return f.generalError(http.StatusBadRequest, "AMOUNT_INVALID", "invalid amount",
			[]Detail{{Field: "amount", Reason: "must be greater than 0.00"}})
	case in.Currency == "":
		return f.validation("currency", "required")
	case !currencyValid(in.Currency):
		return f.generalError(http.StatusBadRequest, "CURRENCY_NOT_SUPPORTED", "currency not supported",
			[]Detail{{Field: "currency", Reason: "want a three-letter ISO 4217 code"}})
	case !typeCharges[in.TypeCharge]:
		return f.validation("type_charge", "want one of credit_card, debit_card, pix, boleto, applepay, googlepay")
	case (in.TypeCharge == "credit_card" || in.TypeCharge == "debit_card") && in.Card == nil:
		return f.validation("card", "required for type_charge "+in.TypeCharge)
	case in.InstallmentCount < 0:
		return f.validation("installment_count", "must not be negative")
	}
	now := f.e.Clock().Now().UTC()
	capture := in.Capture == nil || *in.Capture
	c := &charge{
		UUID: f.e.NewUUID(), Amount: *in.Amount, Currency: in.Currency, TypeCharge: in.TypeCharge,
		Capture: capture, Description: in.Description, DueDate: in.DueDate, InstallmentCount: in.InstallmentCount,
		WebhookURL: in.WebhookURL, Payer: in.Payer, Message: []ChargeMessage{}, CreatedAt: now, UpdatedAt: now,
		IdempotencyKey: r.Key, client: r.Credential,
	}
	snap, resp := f.commitCharge(r, &in, c, now)
	if snap == nil {
		return resp
	}
	return chargeAnswer(snap)
}

// commitCharge stores the new charge c and records it, under the fake's
// lock. It returns a copy of the charge as committed, which the caller
// encodes once the lock is released (a capture or refund that runs
// meanwhile changes c, not the copy), or the answer of a charge refused.
func (f *Fake) commitCharge(r *fakeserver.Request, in *chargeRequest, c *charge, now time.Time) (*charge, fakeserver.Response) {
	capture := in.Capture == nil || *in.Capture
	f.mu.Lock()
	defer f.mu.Unlock()
	if in.WalletUUID != "" {
		w, ok := f.wallets[in.WalletUUID]
		if !ok || w.client != r.Credential {
			return nil, f.generalError(http.StatusNotFound, "NOT_FOUND", "wallet not found", []Detail{{Field: "wallet_uuid", Reason: "unknown wallet"}})
		}
		c.WalletUUID = w.UUID
	} else {
		c.WalletUUID = f.defaultWalletLocked(r.Credential, now)
	}
	if in.Card != nil {
		c.Card = &cardView{Last4: last4(in.Card.Number), HolderName: in.Card.HolderName,
			ExpirationMonth: in.Card.ExpirationMonth, ExpirationYear: in.Card.ExpirationYear}
		code, desc := cardProblem(in.Card, now)
		if code == "" {
			code, desc = testCardOutcome(in.Card.Number, r.Key, c.UUID)
		}
		if code != "" {
			c.Status = StatusError
			c.Message = []ChargeMessage{{Code: code, Source: "card", Description: desc}}
			f.addChargeLocked(c)
			f.hooks.enqueue(c)
			return nil, f.chargeError(http.StatusBadRequest, c.UUID, code, "card", desc)
		}
	}
	switch {
	case in.TypeCharge == "pix":
		c.Status = StatusPending
	case in.TypeCharge == "boleto":
		c.Status = StatusIssued
	case !capture:
		c.Status, c.preauth = StatusPending, true
	default:
		c.Status, c.CapturedAmount = StatusConfirmed, c.Amount
	}
	f.addChargeLocked(c)
	f.hooks.enqueue(c)
	f.e.Record(fakeserver.Operation{Provider: Provider, Kind: "charge.create", IdempotencyKey: r.Key, ID: c.UUID,
		Credential: r.Credential, Amount: amountString(c.Amount)})
	snap := *c
	return &snap, fakeserver.Response{}
}

func (f *Fake) defaultWalletLocked(client string, now time.Time) string {
	if id, ok := f.defaultWallet[client]; ok {
		return id
	}
	w := &wallet{UUID: f.e.NewUUID(), Name: "default", Status: "active", CreatedAt: now, client: client}
	f.wallets[w.UUID] = w
	f.defaultWallet[client] = w.UUID
	return w.UUID
}

// findLocked returns the client's charge, checking the wallet when given.
func (f *Fake) findLocked(client, chargeUUID, walletUUID string) *charge {
	c, ok := f.charges[chargeUUID]
	if !ok || c.client != client || (walletUUID != "" && walletUUID != c.WalletUUID) {
		return nil
	}
	return c
}

func (f *Fake) getCharge(r *fakeserver.Request, chargeUUID, walletUUID string) fakeserver.Response {
	if chargeUUID == "" {
		return f.validation("charge_uuid", "required")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.findLocked(r.Credential, chargeUUID, walletUUID)
	if c == nil {
		return f.generalError(http.StatusNotFound, "NOT_FOUND", "charge not found", nil)
	}
	return chargeAnswer(c)
}

type move int

const (
	moveCapture move = iota
	moveRefund
	moveCancel
)

type moveRequest struct {
	ChargeUUID string          `json:"charge_uuid"`
	WalletUUID string          `json:"wallet_uuid"`
	Amount     *payonce.Amount `json:"amount"`
	Reason     string          `json:"reason"`
}

// moveHandler serves capture, refund and cancel; pathCharge and
// pathWallet are set for the /charge/{charge_uuid}/refund/{wallet_uuid}/
// form and win over the body.
func (f *Fake) moveHandler(m move, pathCharge, pathWallet string) func(*fakeserver.Request) fakeserver.Response {
	return func(r *fakeserver.Request) fakeserver.Response {
		var in moveRequest
		if err := r.Decode(&in, pathCharge != ""); err != nil {
			return f.decodeErr(err)
		}
		if pathCharge != "" {
			in.ChargeUUID, in.WalletUUID = pathCharge, pathWallet
		}
		if in.ChargeUUID == "" {
			return f.validation("charge_uuid", "required")
		}
		if in.Amount != nil && in.Amount.IsZero() {
			return f.generalError(http.StatusBadRequest, "AMOUNT_INVALID", "invalid amount",
				[]Detail{{Field: "amount", Reason: "must be greater than 0.00"}})
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		c := f.findLocked(r.Credential, in.ChargeUUID, in.WalletUUID)
		if c == nil {
			return f.generalError(http.StatusNotFound, "NOT_FOUND", "charge not found", nil)
		}
		var kind string
		var amount payonce.Amount
		before := c.Status
		switch m {
		case moveCapture:
			kind = "charge.capture"
			switch {
			case c.Status == StatusCanceled:
				return f.chargeError(http.StatusConflict, c.UUID, "CHARGE_ALREADY_CANCELED", "charge", "the charge was canceled")
			case c.Status == StatusConfirmed || c.Status == StatusRefunded:
				return f.chargeError(http.StatusConflict, c.UUID, "CHARGE_ALREADY_PAID", "charge", "the charge was already captured")
			case !c.preauth || c.Status != StatusPending:
				return f.chargeError(http.StatusConflict, c.UUID, "CAPTURE_NOT_ALLOWED", "charge", "only a pre-authorised charge can be captured")
			}
			amount = c.Amount
			if in.Amount != nil {
				if in.Amount.Cmp(c.Amount) > 0 {
					return f.chargeError(http.StatusConflict, c.UUID, "CAPTURE_NOT_ALLOWED", "charge", "capture amount exceeds the authorised amount")
				}
				amount = *in.Amount
			}
			c.Status, c.CapturedAmount = StatusConfirmed, amount
		case moveRefund:
			kind = "charge.refund"
			remaining, _ := c.CapturedAmount.Sub(c.RefundedAmount)
			switch {
			case c.Status == StatusCanceled:
				return f.chargeError(http.StatusConflict, c.UUID, "CHARGE_ALREADY_CANCELED", "charge", "the charge was canceled")
			case c.Status != StatusConfirmed || remaining.IsZero():
				return f.chargeError(http.StatusConflict, c.UUID, "REFUND_NOT_ALLOWED", "charge", "only a captured charge with a remaining amount can be refunded")
			}
			amount = remaining
			if in.Amount != nil {
				if in.Amount.Cmp(remaining) > 0 {
					return f.chargeError(http.StatusConflict, c.UUID, "REFUND_EXCEEDS_AMOUNT", "charge",
						"refund amount exceeds the remaining "+remaining.String())
				}
				amount = *in.Amount
			}
			c.RefundedAmount = c.RefundedAmount.Add(amount)
			if c.RefundedAmount.Cmp(c.CapturedAmount) == 0 {
				c.Status = StatusRefunded
			}
		case moveCancel:
			kind = "charge.cancel"
			switch c.Status {
			case StatusCanceled:
				return f.chargeError(http.StatusConflict, c.UUID, "CHARGE_ALREADY_CANCELED", "charge", "the charge was already canceled")
			case StatusPending, StatusIssued:
			default:
				return f.chargeError(http.StatusConflict, c.UUID, "CANCEL_NOT_ALLOWED", "charge", "only a charge not yet captured or settled can be canceled")
			}
			c.Status, amount = StatusCanceled, c.Amount
		}
		c.UpdatedAt = f.e.Clock().Now().UTC()
		if c.Status != before {
			f.hooks.enqueue(c)
		}
		f.e.Record(fakeserver.Operation{Provider: Provider, Kind: kind, IdempotencyKey: r.Key, ID: c.UUID,
			Credential: r.Credential, Amount: amountString(amount)})
		return chargeAnswer(c)
	}
}
