package a55

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/redact"
)

// chargeBody is what Charges.Create sends: the request, with the merchant
// and wallet the client's Account gives when the request names none.
type chargeBody struct {
	r                *ChargeCreateRequest
	wallet, merchant string
}

// MarshalWire writes the request in A55's reference form.
func (b *chargeBody) MarshalWire() ([]byte, error) {
	return b.r.appendWire(make([]byte, 0, wireSizeHint), b.wallet, b.merchant, false), nil
}

// wireSizeHint is the capacity a request's wire form starts with: a card
// charge with its payer and address fits.
const wireSizeHint = 896

// MarshalWire gives the bytes A55 receives, card number, CVV and CAVV
// included: the create-charge reference's flat body (wallet_uuid,
// merchant_id, payer_*, installment_value as a JSON number in the
// currency's decimals, …, card_* fields), with the request's own
// WalletUUID and MerchantID (Charges.Create fills in the client's Account
// where they are empty). The client sends a request only in this form;
// json.Marshal gives the masked form (MarshalJSON).
func (r *ChargeCreateRequest) MarshalWire() ([]byte, error) {
	if r == nil {
		return []byte("null"), nil
	}
	return r.appendWire(make([]byte, 0, wireSizeHint), r.WalletUUID, r.MerchantID, false), nil
}

// MarshalJSON is the form a merchant's logs, job payloads and stores see:
// the wire form with the card masked (card_number as "************1111",
// no card_cvv, the wallets' cavv "[REDACTED]") and the description and
// URLs redacted (redact.String: a webhook URL's query string is cut). It
// cannot be sent: the client sends MarshalWire's form.
func (r ChargeCreateRequest) MarshalJSON() ([]byte, error) {
	return r.appendWire(make([]byte, 0, wireSizeHint), r.WalletUUID, r.MerchantID, true), nil
}

// appendWire appends the request's flat body, in the create-charge
// page's order, to b: whole (the wire form) or masked (MarshalJSON).
// Required fields are always written; optional ones when set.
func (r *ChargeCreateRequest) appendWire(b []byte, wallet, merchant string, masked bool) []byte {
	text := func(s string) string { return s }
	if masked {
		text = redact.String
	}
	dec, known := decimalsOf(r.Currency)
	amount := func(b []byte, a payonce.Amount) []byte {
		if known {
			return appendNumber(b, a, dec)
		}
		return appendExact(b, a)
	}
	b = append(b, `{"wallet_uuid":`...)
	b = appendString(b, wallet)
	b = append(b, `,"merchant_id":`...)
	b = appendString(b, merchant)
	b = append(b, `,"payer_name":`...)
	b = appendString(b, r.Payer.Name)
	b = append(b, `,"payer_email":`...)
	b = appendString(b, r.Payer.Email)
	b = append(b, `,"payer_tax_id":`...)
	b = appendString(b, r.Payer.TaxID)
	b = append(b, `,"payer_cell_phone":`...)
	b = appendString(b, r.Payer.CellPhone)
	b = append(b, `,"installment_value":`...)
	b = amount(b, r.InstallmentValue)
	b = append(b, `,"installment_count":`...)
	b = strconv.AppendInt(b, int64(r.InstallmentCount), 10)
	b = append(b, `,"currency":`...)
	b = appendString(b, string(r.Currency))
	b = append(b, `,"due_date":`...)
	b = appendString(b, r.DueDate)
	b = append(b, `,"description":`...)
	b = appendString(b, text(r.Description))
	b = append(b, `,"type_charge":`...)
	b = appendString(b, string(r.TypeCharge))
	b = append(b, `,"payer_address":`...)
	b = r.Payer.Address.appendWire(b)
	if len(r.Items) > 0 {
		b = append(b, `,"items":[`...)
		for i := range r.Items {
			if i > 0 {
				b = append(b, ',')
			}
			b = r.Items[i].appendWire(b, amount)
		}
		b = append(b, ']')
	}
	if r.Capture != nil {
		b = append(b, `,"capture":`...)
		b = strconv.AppendBool(b, *r.Capture)
	}
	b = appendOptional(b, `,"webhook_url":`, text(r.WebhookURL))
	b = appendOptional(b, `,"redirect_url":`, text(r.RedirectURL))
	if s := r.Subscription; s != nil {
		b = append(b, `,"subscription":{"cycle":`...)
		b = appendString(b, string(s.Cycle))
		b = appendOptional(b, `,"end_date":`, s.EndDate)
		b = append(b, '}')
	}
	if c := r.Card; c != nil {
		b = append(b, `,"card_number":`...)
		if masked {
			b = appendString(b, string(maskedNumber(c.Number)))
		} else {
			b = appendString(b, string(c.Number))
		}
		b = append(b, `,"card_name":`...)
		b = appendString(b, c.HolderName)
		b = append(b, `,"card_expiry_month":`...)
		b = appendString(b, c.ExpirationMonth)
		b = append(b, `,"card_expiry_year":`...)
		b = appendString(b, c.ExpirationYear)
		if !masked {
			b = append(b, `,"card_cvv":`...)
			b = appendString(b, string(c.CVV))
		}
	}
	if r.ThreeDSAuthentication {
		b = append(b, `,"threeds_authentication":true`...)
	}
	if d := r.DeviceInfo; d != nil {
		b = append(b, `,"device_info":`...)
		b = d.appendWire(b)
	}
	if t := r.ApplePay; t != nil {
		b = append(b, `,"applepay":`...)
		b = t.appendWire(b, masked)
	}
	if t := r.GooglePay; t != nil {
		b = append(b, `,"googlepay":`...)
		b = t.appendWire(b, masked)
	}
	return append(b, '}')
}

// appendWire appends the address: the required fields always, the others
// when set.
func (a *Address) appendWire(b []byte) []byte {
	b = append(b, `{"street":`...)
	b = appendString(b, a.Street)
	b = appendOptional(b, `,"address_number":`, a.Number)
	b = appendOptional(b, `,"complement":`, a.Complement)
	b = appendOptional(b, `,"neighborhood":`, a.Neighborhood)
	b = append(b, `,"city":`...)
	b = appendString(b, a.City)
	b = append(b, `,"state":`...)
	b = appendString(b, a.State)
	b = append(b, `,"postal_code":`...)
	b = appendString(b, a.PostalCode)
	b = appendOptional(b, `,"country":`, a.Country)
	return append(b, '}')
}

// appendWire appends the item, its amounts written by amount.
func (it *Item) appendWire(b []byte, amount func([]byte, payonce.Amount) []byte) []byte {
	b = append(b, `{"name":`...)
	b = appendString(b, it.Name)
	b = appendOptional(b, `,"description":`, it.Description)
	b = append(b, `,"quantity":`...)
	b = strconv.AppendInt(b, int64(it.Quantity), 10)
	if !it.TotalAmount.IsZero() {
		b = append(b, `,"total_amount":`...)
		b = amount(b, it.TotalAmount)
	}
	if !it.UnitAmount.IsZero() {
		b = append(b, `,"unit_amount":`...)
		b = amount(b, it.UnitAmount)
	}
	b = appendOptional(b, `,"sku":`, it.SKU)
	b = appendOptional(b, `,"code":`, it.Code)
	return append(b, '}')
}

// appendWire appends the device information, the fields set.
func (d *DeviceInfo) appendWire(b []byte) []byte {
	n := len(b)
	b = append(b, '{')
	field := func(name, v string) {
		if v == "" {
			return
		}
		if len(b) > n+1 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, name...)
		b = append(b, `":`...)
		b = appendString(b, v)
	}
	flag := func(name string, v *bool) {
		if v == nil {
			return
		}
		if len(b) > n+1 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, name...)
		b = append(b, `":`...)
		b = strconv.AppendBool(b, *v)
	}
	field("ip_address", d.IPAddress)
	field("user_agent", d.UserAgent)
	field("http_accept_content", d.HTTPAcceptContent)
	field("http_accept_browser_value", d.HTTPAcceptBrowserValue)
	field("http_browser_language", d.HTTPBrowserLanguage)
	flag("http_browser_java_enabled", d.HTTPBrowserJavaEnabled)
	flag("http_browser_javascript_enabled", d.HTTPBrowserJavaScriptEnabled)
	field("http_browser_color_depth", d.HTTPBrowserColorDepth)
	field("http_browser_screen_height", d.HTTPBrowserScreenHeight)
	field("http_browser_screen_width", d.HTTPBrowserScreenWidth)
	field("http_browser_time_difference", d.HTTPBrowserTimeDifference)
	field("session_id", d.SessionID)
	return append(b, '}')
}

// appendWire appends the token data, the CAVV masked when masked.
func (d *TokenData) appendWire(b []byte, masked bool) []byte {
	b = append(b, `{"eci":`...)
	b = appendString(b, d.ECI)
	b = append(b, `,"cavv":`...)
	if masked && d.CAVV != "" {
		b = appendString(b, "[REDACTED]")
	} else {
		b = appendString(b, d.CAVV)
	}
	b = appendOptional(b, `,"type":`, string(d.Type))
	return append(b, '}')
}

// appendOptional appends the member key (`,"name":`) and s when s is set.
func appendOptional(b []byte, key, s string) []byte {
	if s == "" {
		return b
	}
	return appendString(append(b, key...), s)
}

// appendString appends s as encoding/json writes a string, byte for byte:
// HTML characters, control characters, U+2028 and U+2029 escaped,
// invalid UTF-8 written as U+FFFD.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// chargeCreateJSON is the flat form ChargeCreateRequest.UnmarshalJSON
// reads: the wire form's names.
type chargeCreateJSON struct {
	WalletUUID            string           `json:"wallet_uuid"`
	MerchantID            string           `json:"merchant_id"`
	PayerName             string           `json:"payer_name"`
	PayerEmail            string           `json:"payer_email"`
	PayerTaxID            string           `json:"payer_tax_id"`
	PayerCellPhone        string           `json:"payer_cell_phone"`
	InstallmentValue      payonce.Amount   `json:"installment_value"`
	InstallmentCount      int              `json:"installment_count"`
	Currency              payonce.Currency `json:"currency"`
	DueDate               string           `json:"due_date"`
	Description           string           `json:"description"`
	TypeCharge            TypeCharge       `json:"type_charge"`
	PayerAddress          Address          `json:"payer_address"`
	Items                 []Item           `json:"items"`
	Capture               *bool            `json:"capture"`
	WebhookURL            string           `json:"webhook_url"`
	RedirectURL           string           `json:"redirect_url"`
	Subscription          *Subscription    `json:"subscription"`
	CardNumber            *string          `json:"card_number"`
	CardName              string           `json:"card_name"`
	CardExpiryMonth       string           `json:"card_expiry_month"`
	CardExpiryYear        string           `json:"card_expiry_year"`
	CardCVV               string           `json:"card_cvv"`
	ThreeDSAuthentication bool             `json:"threeds_authentication"`
	DeviceInfo            *DeviceInfo      `json:"device_info"`
	ApplePay              *TokenData       `json:"applepay"`
	GooglePay             *TokenData       `json:"googlepay"`
}

// UnmarshalJSON reads the flat form MarshalJSON and MarshalWire write. A
// masked form reads back with its masked card number and no CVV, which
// Charges.Create refuses: a card is never charged from a log line or a
// job payload.
func (r *ChargeCreateRequest) UnmarshalJSON(b []byte) error {
	var w chargeCreateJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*r = ChargeCreateRequest{
		WalletUUID: w.WalletUUID, MerchantID: w.MerchantID, TypeCharge: w.TypeCharge, Currency: w.Currency,
		InstallmentValue: w.InstallmentValue, InstallmentCount: w.InstallmentCount, DueDate: w.DueDate,
		Description: w.Description,
		Payer: Payer{Name: w.PayerName, Email: w.PayerEmail, TaxID: w.PayerTaxID, CellPhone: w.PayerCellPhone,
			Address: w.PayerAddress},
		Items: w.Items, Capture: w.Capture, WebhookURL: w.WebhookURL, RedirectURL: w.RedirectURL,
		Subscription: w.Subscription, ThreeDSAuthentication: w.ThreeDSAuthentication, DeviceInfo: w.DeviceInfo,
		ApplePay: w.ApplePay, GooglePay: w.GooglePay,
	}
	if w.CardNumber != nil {
		r.Card = &payonce.Card{Number: payonce.CardNumber(*w.CardNumber), HolderName: w.CardName,
			ExpirationMonth: w.CardExpiryMonth, ExpirationYear: w.CardExpiryYear, CVV: payonce.CVV(w.CardCVV)}
	}
	return nil
}
