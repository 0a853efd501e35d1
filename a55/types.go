package a55

import (
	"github.com/payonce/payonce/redact"

	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strconv"
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

// takesCard reports whether a charge of type t may carry card fields:
// cards, and the wallets' token flow (a decrypted Apple or Google Pay
// token is a card).
func (t TypeCharge) takesCard() bool {
	return t == TypeCreditCard || t == TypeDebitCard || t == TypeApplePay || t == TypeGooglePay
}

// maxInstallments is the most instalments a charge of type t takes: 12
// for credit cards and the wallets, 1 for debit cards (no instalments),
// PIX and boleto (always 1).
func (t TypeCharge) maxInstallments() int {
	switch t {
	case TypeCreditCard, TypeApplePay, TypeGooglePay:
		return 12
	}
	return 1
}

// Payer is the person who pays a charge: A55's payer_name, payer_email,
// payer_tax_id, payer_cell_phone and payer_address, all required.
type Payer struct {
	Name  string `json:"name"`  // payer_name: full name
	Email string `json:"email"` // payer_email
	// TaxID is payer_tax_id: a CPF or CNPJ in Brazil (digits, or
	// formatted as 123.456.789-09), an RFC in Mexico, a RUT in Chile, a
	// CUIT in Argentina.
	TaxID string `json:"tax_id"`
	// CellPhone is payer_cell_phone, with the country code:
	// "+5511999999999".
	CellPhone string  `json:"cell_phone"`
	Address   Address `json:"address"` // payer_address
}

// Address is a payer's billing address (payer_address): Street, City,
// State and PostalCode are required.
type Address struct {
	Street       string `json:"street"`
	Number       string `json:"address_number,omitempty"`
	Complement   string `json:"complement,omitempty"`
	Neighborhood string `json:"neighborhood,omitempty"`
	City         string `json:"city"`
	State        string `json:"state"`       // e.g. "SP"
	PostalCode   string `json:"postal_code"` // e.g. "01310-100"
	Country      string `json:"country,omitempty"`
}

// Item is one line of a charge (items[]): Name and a Quantity of at least
// 1 are required. The amounts are in the charge's currency; a zero one is
// not sent.
type Item struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Quantity    int            `json:"quantity"`
	TotalAmount payonce.Amount `json:"total_amount,omitzero"`
	UnitAmount  payonce.Amount `json:"unit_amount,omitzero"`
	SKU         string         `json:"sku,omitempty"`
	Code        string         `json:"code,omitempty"`
}

// Cycle is how often a subscription charges again.
type Cycle string

// The cycles of A55's create-subscription page.
const (
	CycleWeekly       Cycle = "weekly"
	CycleBiweekly     Cycle = "biweekly"
	CycleMonthly      Cycle = "monthly"
	CycleQuarterly    Cycle = "quarterly"
	CycleSemiannually Cycle = "semiannually"
	CycleYearly       Cycle = "yearly"
)

func (c Cycle) valid() bool {
	switch c {
	case CycleWeekly, CycleBiweekly, CycleMonthly, CycleQuarterly, CycleSemiannually, CycleYearly:
		return true
	}
	return false
}

// Subscription makes a card charge the first of a subscription
// (subscription): Cycle is required, EndDate (YYYY-MM-DD) is optional ("":
// until canceled). Only credit_card and debit_card charges take one.
type Subscription struct {
	Cycle   Cycle  `json:"cycle"`
	EndDate string `json:"end_date,omitempty"`
}

// DeviceInfo is the payer's browser as 3DS sees it (device_info), for a
// charge with ThreeDSAuthentication: collected in the browser (A55's JS
// SDK) and passed on. A debit card charge with card fields needs it.
type DeviceInfo struct {
	IPAddress                    string `json:"ip_address,omitempty"`
	UserAgent                    string `json:"user_agent,omitempty"`
	HTTPAcceptContent            string `json:"http_accept_content,omitempty"`
	HTTPAcceptBrowserValue       string `json:"http_accept_browser_value,omitempty"`
	HTTPBrowserLanguage          string `json:"http_browser_language,omitempty"`
	HTTPBrowserJavaEnabled       *bool  `json:"http_browser_java_enabled,omitempty"`
	HTTPBrowserJavaScriptEnabled *bool  `json:"http_browser_javascript_enabled,omitempty"`
	HTTPBrowserColorDepth        string `json:"http_browser_color_depth,omitempty"`
	HTTPBrowserScreenHeight      string `json:"http_browser_screen_height,omitempty"`
	HTTPBrowserScreenWidth       string `json:"http_browser_screen_width,omitempty"`
	HTTPBrowserTimeDifference    string `json:"http_browser_time_difference,omitempty"`
	// SessionID is the sessionId of A55Pay.authentication() (the 3DS
	// device data collection).
	SessionID string `json:"session_id,omitempty"`
}

// TokenData is what a decrypted Apple Pay or Google Pay token adds to
// its card fields (applepay, googlepay): ECI and CAVV, both required,
// and the card's Type. CAVV is a cryptogram: every printed form and the
// JSON form mask it; only the request's wire form carries it.
type TokenData struct {
	ECI  string     `json:"eci"`
	CAVV string     `json:"cavv"`
	Type TypeCharge `json:"type,omitempty"` // credit_card or debit_card
}

// String masks the CAVV.
func (d TokenData) String() string {
	return "a55.TokenData{ECI: " + d.ECI + ", CAVV: [REDACTED], Type: " + string(d.Type) + "}"
}

// Format masks the CAVV under every verb.
func (d TokenData) Format(f fmt.State, verb rune) {
	s := d.String()
	if verb == 'q' {
		s = strconv.Quote(s)
	}
	_, _ = io.WriteString(f, s)
}

// LogValue masks the CAVV in slog records.
func (d TokenData) LogValue() slog.Value {
	return slog.GroupValue(slog.String("eci", d.ECI), slog.String("cavv", "[REDACTED]"), slog.String("type", string(d.Type)))
}

// MarshalJSON is the masked form: the CAVV is "[REDACTED]".
func (d TokenData) MarshalJSON() ([]byte, error) {
	type plain TokenData
	p := plain(d)
	if p.CAVV != "" {
		p.CAVV = "[REDACTED]"
	}
	return json.Marshal(p)
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

// Charge is an A55 charge as the API answers it: the fields A55's
// reference documents, read in every documented spelling (url_3ds or
// action_url; both spellings of pix_payload). Amounts arrive as JSON
// numbers or decimal strings and are read exactly, never through a float;
// an amount with a non-zero digit past the second decimal is a malformed
// answer. Fields the SDK does not model are kept: Raw gives the whole
// answer, card data masked and secrets cut.
type Charge struct {
	UUID       string     `json:"charge_uuid"`
	WalletUUID string     `json:"wallet_uuid,omitempty"`
	MerchantID string     `json:"merchant_id,omitempty"`
	Status     Status     `json:"status"`
	Messages   Messages   `json:"message,omitempty"`
	TypeCharge TypeCharge `json:"type_charge,omitempty"`

	Currency payonce.Currency `json:"currency,omitempty"`
	// LocalCurrency and USDCurrency are the charge's amount in its local
	// currency and in US dollars, as A55 reports them.
	LocalCurrency payonce.Amount `json:"local_currency,omitzero"`
	USDCurrency   payonce.Amount `json:"usd_currency,omitzero"`
	// Amount is the charge's amount where the answer reports one.
	Amount payonce.Amount `json:"amount,omitzero"`
	// AmountRemaining is what a refund may still take back (zero when
	// not reported).
	AmountRemaining  payonce.Amount `json:"amount_remaining,omitzero"`
	InstallmentValue payonce.Amount `json:"installment_value,omitzero"`
	InstallmentCount int            `json:"installment_count,omitempty"`
	DueDate          string         `json:"due_date,omitempty"`
	Description      string         `json:"description,omitempty"`
	// TransactionReference is the acquirer's reference of the charge.
	TransactionReference string `json:"transaction_reference,omitempty"`

	// URL3DS is where the payer completes a 3DS challenge, with status
	// pending (url_3ds, also spelled action_url): the final status
	// arrives by webhook.
	URL3DS string `json:"url_3ds,omitempty"`
	// ChargePaymentURL is A55's hosted payment page of the charge.
	ChargePaymentURL string `json:"charge_payment_url,omitempty"`
	// Pix is a PIX charge's QR code, copy-and-paste code and expiry.
	Pix *PixPayload `json:"pix_payload,omitempty"`
	// BoletoURL is a boleto's PDF and Barcode its digitable line.
	BoletoURL string `json:"boleto_url,omitempty"`
	Barcode   string `json:"barcode,omitempty"`
	// Subscription is the subscription the charge started, if any.
	Subscription *ChargeSubscription `json:"subscription,omitempty"`

	// CreatedAt and UpdatedAt are the answer's RFC 3339 timestamps; one
	// in another form is left zero (Raw keeps its text), never failing
	// the answer.
	CreatedAt time.Time `json:"created_at,omitzero"`
	UpdatedAt time.Time `json:"updated_at,omitzero"`
	// IdempotencyKey is the key of the request that created the charge.
	// Only the payonce fake reports it (an extension: A55 documents no
	// such field); it is empty from A55.
	IdempotencyKey string `json:"idempotency_key,omitempty"`

	// Meta describes the call that returned the charge.
	Meta ResponseMeta `json:"-"`

	// raw is the answer the charge was read from, for Raw; a pointer,
	// which every printed form shows as an address.
	raw *rawAnswer
}

// PixPayload is how a payer pays a PIX charge (pix_payload). A55's pages
// spell its fields two ways; both are read.
type PixPayload struct {
	// QRCode is the QR code as a base64 PNG (qr_code, or qr_code_base64):
	// <img src="data:image/png;base64,{QRCode}">.
	QRCode string `json:"qr_code,omitempty"`
	// Payload is the EMV "copia e cola" text (payload, or copy_paste).
	Payload string `json:"payload,omitempty"`
	// ExpirationDate is when the QR code expires, as A55 writes it, ISO
	// 8601 (expiration_date, or expiration): Expiry parses it.
	ExpirationDate string `json:"expiration_date,omitempty"`
}

// Expiry parses ExpirationDate: RFC 3339, or a date alone (the end of
// that day is not assumed: its midnight, UTC). ok is false when it is
// empty or in another form.
func (p *PixPayload) Expiry() (t time.Time, ok bool) {
	if p == nil || p.ExpirationDate == "" {
		return time.Time{}, false
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", time.DateOnly} {
		if t, err := time.Parse(layout, p.ExpirationDate); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// ChargeSubscription is the subscription a charge started
// (subscription in the answer).
type ChargeSubscription struct {
	UUID           string `json:"subscription_uuid,omitempty"`
	Cycle          Cycle  `json:"cycle,omitempty"`
	Status         string `json:"status,omitempty"` // "active"
	NextChargeDate string `json:"next_charge_date,omitempty"`
	EndDate        string `json:"end_date,omitempty"` // "" when it runs until canceled
}

// ChallengeURL is URL3DS when it is an absolute http(s) URL of at most
// 4096 bytes: where to send the payer of a pending charge for its 3DS
// challenge. ok is false for none, and for anything else a server put
// there (a javascript: URL is never given to be redirected to).
func (c *Charge) ChallengeURL() (string, bool) {
	if c == nil || !validChallenge(c.URL3DS) {
		return "", false
	}
	return c.URL3DS, true
}

// Total is what the charge charges in all: InstallmentValue times
// InstallmentCount (a count of 0, not reported, counts as 1) where the
// answer reports the instalment's value, else Amount. It is exact; an
// error means the answer's numbers do not multiply within the SDK's
// bounds.
func (c *Charge) Total() (payonce.Amount, error) {
	if c.InstallmentValue.IsZero() {
		return c.Amount, nil
	}
	return totalOf(c.InstallmentValue, max(c.InstallmentCount, 1))
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
