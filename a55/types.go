package a55

import (
	"github.com/payonce/payonce/redact"

	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/redactprint"
)

// TypeCharge is a charge's payment method, the type_charge field.
type TypeCharge string

// Payment methods A55 documents.
const (
	TypeCreditCard TypeCharge = "credit_card"
	TypeDebitCard  TypeCharge = "debit_card"
	TypePix        TypeCharge = "pix"
	TypeBoleto     TypeCharge = "boleto"
	TypeApplePay   TypeCharge = "applepay"
	TypeGooglePay  TypeCharge = "googlepay"
)

// typeChargeList names the documented payment methods, in A55's order.
const typeChargeList = "credit_card, pix, boleto, applepay, googlepay, debit_card"

// valid reports whether t is one of the payment methods A55 documents; the
// client refuses any other before sending.
func (t TypeCharge) valid() bool {
	switch t {
	case TypeCreditCard, TypePix, TypeBoleto, TypeApplePay, TypeGooglePay, TypeDebitCard:
		return true
	}
	return false
}

// needsCard reports whether a charge of type t carries a card.
func (t TypeCharge) needsCard() bool { return t == TypeCreditCard || t == TypeDebitCard }

// Payer is the person who pays a charge.
type Payer struct {
	Name         string `json:"name"`
	Email        string `json:"email,omitempty"`
	Document     string `json:"document,omitempty"`      // e.g. a CPF number
	DocumentType string `json:"document_type,omitempty"` // e.g. "CPF"
}

// Message is one entry of the message list A55 puts in charge answers and
// in its charge-level error shape.
type Message struct {
	Code        string `json:"code,omitempty"`
	Source      string `json:"source,omitempty"`
	Description string `json:"description,omitempty"`
}

// Messages is a charge's message list. It also reads a plain string, which
// becomes one Message with only a Description.
type Messages []Message

// UnmarshalJSON reads a list of messages, one message object or a string,
// and passes every text through redact.String: no card number,
// CVV, secret or token a server echoes survives in a Message.
func (m *Messages) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0 || bytes.Equal(b, []byte("null")):
		*m = nil
	case bytes.Equal(b, []byte("[]")): // the usual answer: as json.Unmarshal reads it, without decoding
		*m = Messages{}
	case b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*m = Messages{{Description: s}}
	case b[0] == '{':
		var one Message
		if err := json.Unmarshal(b, &one); err != nil {
			return err
		}
		*m = Messages{one}
	default:
		var list []Message
		if err := json.Unmarshal(b, &list); err != nil {
			return err
		}
		*m = list
	}
	for i := range *m { // what a server echoes here reaches errors and logs
		x := &(*m)[i]
		x.Code, x.Source, x.Description = redact.String(x.Code), redact.String(x.Source), redact.String(x.Description)
	}
	return nil
}

// Codes returns the message codes, in order.
func (m Messages) Codes() []string {
	out := make([]string, 0, len(m))
	for _, x := range m {
		if x.Code != "" {
			out = append(out, x.Code)
		}
	}
	return out
}

// String joins the descriptions.
func (m Messages) String() string {
	parts := make([]string, 0, len(m))
	for _, x := range m {
		switch {
		case x.Description != "":
			parts = append(parts, x.Description)
		case x.Code != "":
			parts = append(parts, x.Code)
		}
	}
	return strings.Join(parts, "; ")
}

// Charge is an A55 charge as the API answers it. Fields A55 adds later are
// ignored; amounts are decimal strings on the wire, never floats.
type Charge struct {
	UUID             string           `json:"charge_uuid"`
	WalletUUID       string           `json:"wallet_uuid,omitempty"`
	Status           Status           `json:"status"`
	Amount           payonce.Amount   `json:"amount"`
	Currency         payonce.Currency `json:"currency,omitempty"`
	TypeCharge       TypeCharge       `json:"type_charge,omitempty"`
	CapturedAmount   payonce.Amount   `json:"captured_amount,omitzero"`
	RefundedAmount   payonce.Amount   `json:"refunded_amount,omitzero"`
	Description      string           `json:"description,omitempty"`
	InstallmentCount int              `json:"installment_count,omitempty"`
	DueDate          string           `json:"due_date,omitempty"`
	Card             *CardSummary     `json:"card,omitempty"`
	Payer            *Payer           `json:"payer,omitempty"`
	Messages         Messages         `json:"message,omitempty"`
	CreatedAt        time.Time        `json:"created_at,omitzero"`
	UpdatedAt        time.Time        `json:"updated_at,omitzero"`
	// IdempotencyKey is the key of the request that created the charge.
	// Only the payonce fake reports it (an extension: A55 documents no
	// such field); it is empty from A55.
	IdempotencyKey string `json:"idempotency_key,omitempty"`

	// Meta describes the call that returned the charge.
	Meta ResponseMeta `json:"-"`
}

// CardSummary is what an answer says about the charge's card. Should a
// server ever echo a full number, Number masks it in every printed form.
type CardSummary struct {
	Number          payonce.CardNumber `json:"number,omitempty"`
	Last4           string             `json:"last4,omitempty"`
	Brand           string             `json:"brand,omitempty"`
	HolderName      string             `json:"holder_name,omitempty"`
	ExpirationMonth string             `json:"expiration_month,omitempty"`
	ExpirationYear  string             `json:"expiration_year,omitempty"`
}

// chargeFields is Charge without its printing methods.
type chargeFields Charge

// Format prints the charge as fmt prints a struct (%v, %+v, %#v), with
// every text the server sent redacted (redact.String): an ID, a
// status, a description or a payer a server filled with card data, a
// token or a query string never reaches a printed line. %q quotes the %v
// form; any other verb prints it. The fields keep what the server sent.
func (c Charge) Format(f fmt.State, verb rune) {
	redactprint.Format(f, verb, chargeFields(c), "a55.Charge")
}

// LogValue is the slog form: the charge's fields by their JSON names,
// texts redacted as Format redacts them, and its Meta.
func (c Charge) LogValue() slog.Value { return redactprint.LogValue(chargeFields(c)) }
