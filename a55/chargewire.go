package a55

import (
	"github.com/payonce/payonce/redact"

	"encoding/json"

	"github.com/payonce/payonce"
)

// chargeCreateWire is the wire form of a ChargeCreateRequest: the same
// fields, names and order, with the card whole. It holds no value with a
// MarshalJSON and no json.RawMessage, so json.Marshal writes it in one
// pass: the amount as its text (what payonce.Amount.MarshalJSON writes),
// the card whole (wireCard).
type chargeCreateWire struct {
	Amount     string           `json:"amount"`
	Currency   payonce.Currency `json:"currency"`
	TypeCharge TypeCharge       `json:"type_charge"`
	Card       *wireCard        `json:"card,omitempty"`
	Payer      *Payer           `json:"payer,omitempty"`

	WalletUUID       string `json:"wallet_uuid,omitempty"`
	Description      string `json:"description,omitempty"`
	DueDate          string `json:"due_date,omitempty"`
	InstallmentCount int    `json:"installment_count,omitempty"`
	Capture          *bool  `json:"capture,omitempty"`
	WebhookURL       string `json:"webhook_url,omitempty"`
}

// wireCard is the card as A55 receives it: every field, the whole number
// and the CVV, with payonce.Card's JSON names.
type wireCard struct {
	Number          string `json:"number"`
	HolderName      string `json:"holder_name"`
	ExpirationMonth string `json:"expiration_month"`
	ExpirationYear  string `json:"expiration_year"`
	CVV             string `json:"cvv"`
}

// MarshalWire gives the bytes A55 receives (Client.Do sends them),
// card number and CVV included. The client sends a request only in this
// form; json.Marshal gives the masked form (MarshalJSON).
func (r *ChargeCreateRequest) MarshalWire() ([]byte, error) {
	if r == nil {
		return []byte("null"), nil
	}
	// One allocation for the wire form and its card.
	h := &struct {
		w    chargeCreateWire
		card wireCard
	}{w: chargeCreateWire{
		Amount: r.Amount.String(), Currency: r.Currency, TypeCharge: r.TypeCharge, Payer: r.Payer,
		WalletUUID: r.WalletUUID, Description: r.Description, DueDate: r.DueDate,
		InstallmentCount: r.InstallmentCount, Capture: r.Capture, WebhookURL: r.WebhookURL,
	}}
	if c := r.Card; c != nil {
		h.card = wireCard{Number: string(c.Number), HolderName: c.HolderName,
			ExpirationMonth: c.ExpirationMonth, ExpirationYear: c.ExpirationYear, CVV: string(c.CVV)}
		h.w.Card = &h.card
	}
	return json.Marshal(&h.w)
}

// MarshalJSON is the form a merchant's logs, job payloads and stores see:
// the card masked as payonce.Card.MarshalJSON masks it (last four digits,
// no CVV) and every text redacted (redact.String), so a webhook
// URL's query string is cut. It cannot be sent: the client sends
// MarshalWire's form.
func (r ChargeCreateRequest) MarshalJSON() ([]byte, error) {
	f := chargeCreateRequestFields(r)
	f.Description = redact.String(f.Description)
	f.WebhookURL = redact.String(f.WebhookURL)
	return json.Marshal(f)
}
