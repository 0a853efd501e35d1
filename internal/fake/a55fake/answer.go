package a55fake

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/payonce/payonce/internal/fake/fakeserver"
)

// chargeView is a charge as the fake answers it: the charge fields of
// A55's reference (create-charge, PIX, boleto, 3DS, subscription,
// refund pages), nothing else but the fake's idempotency_key extension.
// Its JSON tags are the one list of the answer's names; appendJSON
// writes the same bytes without reflection.
type chargeView struct {
	UUID             string           `json:"charge_uuid"`
	WalletUUID       string           `json:"wallet_uuid"`
	MerchantID       string           `json:"merchant_id"`
	Status           string           `json:"status"`
	Message          messages         `json:"message"`
	TypeCharge       string           `json:"type_charge"`
	Currency         string           `json:"currency"`
	LocalCurrency    money            `json:"local_currency"`
	Amount           money            `json:"amount"`
	AmountRemaining  money            `json:"amount_remaining"`
	InstallmentValue money            `json:"installment_value"`
	InstallmentCount int              `json:"installment_count"`
	DueDate          string           `json:"due_date,omitempty"`
	Description      string           `json:"description,omitempty"`
	TransactionRef   string           `json:"transaction_reference"`
	URL3DS           string           `json:"url_3ds,omitempty"`
	PaymentURL       string           `json:"charge_payment_url,omitempty"`
	Pix              *pixView         `json:"pix_payload,omitempty"`
	BoletoURL        string           `json:"boleto_url,omitempty"`
	Barcode          string           `json:"barcode,omitempty"`
	Subscription     *subscriptionOut `json:"subscription,omitempty"`
	CreatedAt        string           `json:"created_at"`
	UpdatedAt        string           `json:"updated_at"`
	IdempotencyKey   string           `json:"idempotency_key,omitempty"`
}

// pixView is pix_payload in either documented spelling: the
// payment-methods/pix page's (qr_code, payload, expiration_date) for
// charges made on the generic endpoint, the create-pix-charge page's
// (qr_code_base64, copy_paste, expiration) for charges made on /pix/.
type pixView struct {
	QRCode         string `json:"qr_code,omitempty"`
	Payload        string `json:"payload,omitempty"`
	ExpirationDate string `json:"expiration_date,omitempty"`
	QRCodeBase64   string `json:"qr_code_base64,omitempty"`
	CopyPaste      string `json:"copy_paste,omitempty"`
	Expiration     string `json:"expiration,omitempty"`
}

// subscriptionOut is a charge's subscription; end_date is null when it
// runs until canceled.
type subscriptionOut struct {
	UUID           string  `json:"subscription_uuid"`
	Cycle          string  `json:"cycle"`
	Status         string  `json:"status"`
	NextChargeDate string  `json:"next_charge_date"`
	EndDate        *string `json:"end_date"`
}

// messages is a charge's message: the list of its codes, or the cancel
// page's empty object on a successful cancel.
type messages struct {
	list   []ChargeMessage
	object bool
}

// MarshalJSON writes the list, or {}.
func (m messages) MarshalJSON() ([]byte, error) {
	if m.object {
		return []byte("{}"), nil
	}
	if m.list == nil {
		return []byte("[]"), nil
	}
	return json.Marshal(m.list)
}

// Pages the fake serves for a charge, under its admin prefix.
const (
	pagePrefix    = fakeserver.AdminPrefix + "a55/"
	threeDSPage   = pagePrefix + "3ds/" // + charge_uuid: the 3DS challenge
	payerPagePath = pagePrefix + "pay/" // + charge_uuid: pay a PIX or a boleto
)

// keyEcho is what a charge's answer says of the key that created it:
// the fake's idempotency_key extension (A55 documents no such field). It
// is the one place the echo is decided.
func (f *Fake) keyEcho(c *charge) string { return c.IdempotencyKey }

// view returns the charge as the fake answers it.
func (f *Fake) view(c *charge) chargeView {
	p := c.places()
	v := chargeView{
		UUID: c.UUID, WalletUUID: c.WalletUUID, MerchantID: c.MerchantID, Status: c.Status,
		Message: messages{list: c.Message, object: c.messageObject}, TypeCharge: c.TypeCharge, Currency: c.Currency,
		LocalCurrency: money{c.Amount, p}, Amount: money{c.Amount, p}, AmountRemaining: money{c.remaining(), p},
		InstallmentValue: money{c.InstallmentValue, p}, InstallmentCount: c.InstallmentCount,
		DueDate: c.DueDate, Description: c.Description, TransactionRef: c.TransactionRef,
		CreatedAt: c.CreatedAt.Format(time.RFC3339Nano), UpdatedAt: c.UpdatedAt.Format(time.RFC3339Nano),
		IdempotencyKey: f.keyEcho(c),
	}
	v.URL3DS = f.challengeURL(c)
	if px := c.pix; px != nil {
		v.PaymentURL = c.origin + payerPagePath + c.UUID
		exp := c.ExpiresAt.Format(time.RFC3339)
		if c.pixDedicated {
			v.Pix = &pixView{QRCodeBase64: px.qrBase64, CopyPaste: px.copyPaste, Expiration: exp}
		} else {
			v.Pix = &pixView{QRCode: px.qrBase64, Payload: px.copyPaste, ExpirationDate: exp}
		}
	}
	if c.TypeCharge == typeBoleto {
		v.BoletoURL = c.origin + payerPagePath + c.UUID
		v.Barcode = c.Barcode
	}
	if s := c.sub; s != nil {
		v.Subscription = &subscriptionOut{UUID: s.UUID, Cycle: s.Cycle, Status: s.Status, NextChargeDate: s.NextChargeDate}
		if s.EndDate != "" {
			end := s.EndDate
			v.Subscription.EndDate = &end
		}
	}
	return v
}

// chargeAnswer answers c as JSON, 200.
func (f *Fake) chargeAnswer(c *charge) fakeserver.Response {
	v := f.view(c)
	return fakeserver.Response{Status: http.StatusOK, Body: v.appendJSON(make([]byte, 0, 640+len(v.Description)+v.pixLen()))}
}

func (v *chargeView) pixLen() int {
	if v.Pix == nil {
		return 0
	}
	return len(v.Pix.QRCode) + len(v.Pix.QRCodeBase64) + len(v.Pix.Payload) + len(v.Pix.CopyPaste)
}

// appendJSON appends what json.Marshal(v) writes.
func (v *chargeView) appendJSON(b []byte) []byte {
	b = appendField(b, '{', "charge_uuid", v.UUID)
	b = appendField(b, ',', "wallet_uuid", v.WalletUUID)
	b = appendField(b, ',', "merchant_id", v.MerchantID)
	b = appendField(b, ',', "status", v.Status)
	b = append(b, `,"message":`...)
	switch {
	case v.Message.object:
		b = append(b, "{}"...)
	case len(v.Message.list) == 0:
		b = append(b, "[]"...)
	default:
		b = append(b, '[')
		for i, m := range v.Message.list {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendField(b, '{', "code", m.Code)
			b = appendField(b, ',', "source", m.Source)
			b = appendField(b, ',', "description", m.Description)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = appendField(b, ',', "type_charge", v.TypeCharge)
	b = appendField(b, ',', "currency", v.Currency)
	b = appendMoney(b, "local_currency", v.LocalCurrency)
	b = appendMoney(b, "amount", v.Amount)
	b = appendMoney(b, "amount_remaining", v.AmountRemaining)
	b = appendMoney(b, "installment_value", v.InstallmentValue)
	b = append(b, `,"installment_count":`...)
	b = strconv.AppendInt(b, int64(v.InstallmentCount), 10)
	b = appendOptional(b, "due_date", v.DueDate)
	b = appendOptional(b, "description", v.Description)
	b = appendField(b, ',', "transaction_reference", v.TransactionRef)
	b = appendOptional(b, "url_3ds", v.URL3DS)
	b = appendOptional(b, "charge_payment_url", v.PaymentURL)
	if p := v.Pix; p != nil {
		b = append(b, `,"pix_payload":`...)
		sep := byte('{')
		for _, kv := range [...][2]string{{"qr_code", p.QRCode}, {"payload", p.Payload}, {"expiration_date", p.ExpirationDate},
			{"qr_code_base64", p.QRCodeBase64}, {"copy_paste", p.CopyPaste}, {"expiration", p.Expiration}} {
			if kv[1] != "" {
				b = appendField(b, sep, kv[0], kv[1])
				sep = ','
			}
		}
		if sep == '{' {
			b = append(b, '{')
		}
		b = append(b, '}')
	}
	b = appendOptional(b, "boleto_url", v.BoletoURL)
	b = appendOptional(b, "barcode", v.Barcode)
	if s := v.Subscription; s != nil {
		b = append(b, `,"subscription":`...)
		b = appendField(b, '{', "subscription_uuid", s.UUID)
		b = appendField(b, ',', "cycle", s.Cycle)
		b = appendField(b, ',', "status", s.Status)
		b = appendField(b, ',', "next_charge_date", s.NextChargeDate)
		if s.EndDate == nil {
			b = append(b, `,"end_date":null`...)
		} else {
			b = appendField(b, ',', "end_date", *s.EndDate)
		}
		b = append(b, '}')
	}
	b = appendField(b, ',', "created_at", v.CreatedAt)
	b = appendField(b, ',', "updated_at", v.UpdatedAt)
	b = appendOptional(b, "idempotency_key", v.IdempotencyKey)
	return append(b, '}')
}

// appendOptional appends a string member unless it is empty (omitempty).
func appendOptional(b []byte, name, v string) []byte {
	if v == "" {
		return b
	}
	return appendField(b, ',', name, v)
}

// appendField appends sep, the name (plain ASCII) and the string v.
func appendField(b []byte, sep byte, name, v string) []byte {
	b = append(b, sep, '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return appendString(b, v)
}

// appendMoney appends a member holding an amount as a JSON number.
func appendMoney(b []byte, name string, m money) []byte {
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return m.d.appendText(b, m.places)
}

// htmlSafe reports whether encoding/json writes the ASCII byte c of a
// string as it is (it escapes controls, quote, backslash and <, >, &).
func htmlSafe(c byte) bool {
	return c >= 0x20 && c < utf8.RuneSelf && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
}

// appendString appends s as encoding/json writes a string. A string of
// bytes it writes as they are (every ID, code and amount) is copied; any
// other goes through json.Marshal.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if !htmlSafe(s[i]) {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
