package a55

import (
	"github.com/payonce/payonce/redact"

	"encoding/json"

	"github.com/payonce/payonce"
)

// chargeCreateWire is the wire form of a ChargeCreateRequest: the same
// fields, names and order, with the card whole (payonce.Card.MarshalWire).
type chargeCreateWire struct {
	Amount     payonce.Amount   `json:"amount"`
	Currency   payonce.Currency `json:"currency"`
	TypeCharge TypeCharge       `json:"type_charge"`
	Card       json.RawMessage  `json:"card,omitempty"`
	Payer      *Payer           `json:"payer,omitempty"`

	WalletUUID       string `json:"wallet_uuid,omitempty"`
	Description      string `json:"description,omitempty"`
	DueDate          string `json:"due_date,omitempty"`
	InstallmentCount int    `json:"installment_count,omitempty"`
	Capture          *bool  `json:"capture,omitempty"`
	WebhookURL       string `json:"webhook_url,omitempty"`
}

// MarshalWire implements payonce.WireMarshaler: the bytes A55 receives,
// card number and CVV included. The client sends a request only in this
// form; json.Marshal gives the masked form (MarshalJSON).
func (r *ChargeCreateRequest) MarshalWire() ([]byte, error) {
	if r == nil {
		return []byte("null"), nil
	}
	w := chargeCreateWire{
		Amount: r.Amount, Currency: r.Currency, TypeCharge: r.TypeCharge, Payer: r.Payer,
		WalletUUID: r.WalletUUID, Description: r.Description, DueDate: r.DueDate,
		InstallmentCount: r.InstallmentCount, Capture: r.Capture, WebhookURL: r.WebhookURL,
	}
	if r.Card != nil {
		card, err := r.Card.MarshalWire()
		if err != nil {
			return nil, err
		}
		w.Card = card
	}
	return json.Marshal(w)
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
