package a55

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/luhn"
	"github.com/payonce/payonce/internal/redactprint"
)

// ChargesService creates, reads, captures, refunds and cancels charges
// (https://docs.a55.tech/docs/api-reference/charge/create-charge). Every
// POST is one business operation with one Idempotency-Key, resolved once
// and sent on every attempt: the journal's (payonce.WithReference, with
// payonce.WithJournal), else payonce.WithKey, else a new UUID v4. Resume
// an operation that failed with a resumable error (payonce.IsResumable)
// with the same reference, or with payonce.WithKey(payonce.KeyOf(err)),
// now or, the key stored by its text form, later in any process: the key
// and its age come back, so the 24 h guard holds.
type ChargesService struct{ c *Client }

// ChargeCreateRequest is a charge as A55's create-charge reference takes
// it: one flat body for every payment method (type_charge). Printed,
// logged or marshalled with encoding/json it masks the card
// (MarshalJSON); the client sends its wire form (MarshalWire). Every
// required field is checked before any byte is sent; a refusal is a
// *payonce.ValidationError naming the field by its wire name.
type ChargeCreateRequest struct {
	// WalletUUID (wallet_uuid) is the wallet that receives the funds and
	// MerchantID (merchant_id) its merchant; empty, the client's Account
	// gives them (WithAccount). Both are required.
	WalletUUID string
	MerchantID string

	// TypeCharge is the payment method: TypeCreditCard, TypeDebitCard,
	// TypePix, TypeBoleto, TypeApplePay or TypeGooglePay.
	TypeCharge TypeCharge
	// Currency is one of BRL, MXN, CLP, COP, PEN, ARS, USD; PIX and
	// boleto take BRL only.
	Currency payonce.Currency
	// InstallmentValue is the amount of ONE instalment (installment_value,
	// a JSON number in the currency's decimals: 100.50 BRL, 100 CLP; a
	// fraction in CLP or COP is refused, never rounded), and
	// InstallmentCount how many (1 pays in full; credit cards and the
	// wallets take up to 12, debit cards, PIX and boleto exactly 1). Total
	// is their product; SplitTotal splits a total exactly or refuses.
	InstallmentValue payonce.Amount
	InstallmentCount int
	// DueDate is the charge's due date, YYYY-MM-DD (a boleto's expiry).
	DueDate string
	// Description is shown to the payer. A description per order also
	// lets a settle lookup tell two orders apart (docs/a55.md).
	Description string
	// Payer is who pays: name, e-mail, tax ID, cell phone and billing
	// address, all required.
	Payer Payer

	// Items are the charge's lines (optional).
	Items []Item
	// Capture false asks for a pre-authorisation (a card's funds held),
	// captured later with Charges.Capture; nil (the default) captures at
	// once. Debit cards, PIX and boleto cannot be pre-authorised.
	Capture *bool
	// WebhookURL overrides the dashboard's webhook URL for this charge;
	// RedirectURL is where the payer returns after A55's pages (3DS,
	// hosted payment). Both absolute https (http only to a loopback
	// host).
	WebhookURL  string
	RedirectURL string
	// Subscription makes a card charge the first of a subscription.
	Subscription *Subscription

	// Card is the card, sent in A55's card_number, card_name,
	// card_expiry_month, card_expiry_year and card_cvv. A card charge
	// without one is created issued, for the payer to pay on A55's page
	// or SDK (ChargePaymentURL). With one, the number must be 12 to 19
	// digits, and pass the Luhn check outside the Sandbox environment
	// (A55's test cards fail it), the month two digits, the year four,
	// not expired by the client's clock, the CVV 3 or 4 digits.
	Card *payonce.Card
	// ThreeDSAuthentication asks for 3DS (threeds_authentication), for
	// credit and debit cards only, with DeviceInfo (device_info), which
	// 3DS always needs; both are required for a debit card: the
	// answer is then pending with Charge.URL3DS until the payer completes
	// the challenge, and the final status arrives by webhook.
	ThreeDSAuthentication bool
	DeviceInfo            *DeviceInfo
	// ApplePay and GooglePay carry a decrypted wallet token's ECI and
	// CAVV, with the token's card in Card (TypeApplePay, TypeGooglePay);
	// without them and without a card the charge is created issued, for
	// A55's SDK to pay.
	ApplePay  *TokenData
	GooglePay *TokenData
}

// Total is what the request charges in all: InstallmentValue times
// InstallmentCount, exact. An error names a count below 1 or a total past
// the SDK's bound.
func (r *ChargeCreateRequest) Total() (payonce.Amount, error) {
	return totalOf(r.InstallmentValue, r.InstallmentCount)
}

// Bounds of the texts a request carries, in bytes.
const (
	maxText = 512
	maxURL  = 2048
)

// checkText checks a text field: present when required (white space
// alone is not: A55 refuses it as missing), valid UTF-8, no control
// characters, at most limit bytes.
func checkText(field, v string, required bool, limit int) error {
	switch {
	case v == "" && required:
		return invalid(field, "required")
	case required && strings.TrimSpace(v) == "":
		return invalid(field, "required: white space alone is empty")
	case len(v) > limit:
		return invalid(field, "longer than "+strconv.Itoa(limit)+" bytes")
	}
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c >= utf8.RuneSelf:
			if rest := v[i:]; !utf8.ValidString(rest) || strings.IndexFunc(rest, unicode.IsControl) >= 0 {
				return invalid(field, "must be printable UTF-8")
			}
			return nil
		case c < 0x20 || c == 0x7f:
			return invalid(field, "must be printable UTF-8")
		}
	}
	return nil
}

// checkEmail checks an e-mail address: one '@' between a local part and
// a domain, no whitespace.
func checkEmail(field, v string) error {
	if err := checkText(field, v, true, 254); err != nil {
		return err
	}
	local, domain, ok := strings.Cut(v, "@")
	if !ok || local == "" || domain == "" || strings.Contains(domain, "@") || strings.IndexFunc(v, unicode.IsSpace) >= 0 {
		return invalid(field, "want an e-mail address (one @, no spaces)")
	}
	return nil
}

// checkPhone checks a cell phone number: an optional leading '+', then 8
// to 15 digits, with spaces, '-', '(' or ')' between them.
func checkPhone(field, v string) error {
	if err := checkText(field, v, true, 32); err != nil {
		return err
	}
	digits := 0
	for i, c := range v {
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c == '+' && i == 0, c == ' ', c == '-', c == '(', c == ')':
		default:
			return invalid(field, "want a phone number with its country code, like +5511999999999")
		}
	}
	if digits < 8 || digits > 15 {
		return invalid(field, "want 8 to 15 digits with the country code, like +5511999999999")
	}
	return nil
}

// checkToken checks a text that holds no whitespace (a tax ID).
func checkToken(field, v string, limit int) error {
	if err := checkText(field, v, true, limit); err != nil {
		return err
	}
	if strings.IndexFunc(v, unicode.IsSpace) >= 0 {
		return invalid(field, "must hold no spaces")
	}
	return nil
}

// checkDate checks a YYYY-MM-DD date that exists.
func checkDate(field, v string, required bool) error {
	if v == "" && !required {
		return nil
	}
	if v == "" {
		return invalid(field, "required")
	}
	if !isDate(v) {
		return invalid(field, "want a date as YYYY-MM-DD")
	}
	return nil
}

// isDate reports whether v is a date that exists, written YYYY-MM-DD.
func isDate(v string) bool {
	if len(v) != 10 || v[4] != '-' || v[7] != '-' || !allDigits(v[:4]) || !allDigits(v[5:7]) || !allDigits(v[8:]) {
		return false
	}
	year, _ := strconv.Atoi(v[:4])
	month, _ := strconv.Atoi(v[5:7])
	day, _ := strconv.Atoi(v[8:])
	if month < 1 || month > 12 || day < 1 {
		return false
	}
	// The day after the month's last is the first of the next month.
	return day <= time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// checkURL checks a URL A55 sends the payer or its webhooks to: absolute
// https, or http to a loopback host or on a client that reaches its API
// over plain http (checkWebhookURL's rule).
func checkURL(field, v, baseURL string) error {
	if v == "" {
		return nil
	}
	if err := checkText(field, v, false, maxURL); err != nil {
		return err
	}
	err := checkWebhookURL(v, baseURL)
	var ve *payonce.ValidationError
	if errors.As(err, &ve) {
		ve.Field = field
	}
	return err
}

// cardInvalid is the refusal of a card field: ErrInvalidCard.
func cardInvalid(field, reason string) error {
	return &payonce.ValidationError{Field: field, Reason: reason, Err: payonce.ErrInvalidCard}
}

// validate checks the request as c will send it, with wallet and
// merchant resolved against the client's Account: every required field
// present, every value in A55's rules. The card's expiry is checked
// against the client's clock (payoncetest.ClientClock in tests), its
// number by Luhn only where c.luhn says.
func (r *ChargeCreateRequest) validate(c *Client, wallet, merchant string) error {
	if r == nil {
		return errNilRequest
	}
	switch {
	case r.TypeCharge == "":
		return invalid("type_charge", "required")
	case !r.TypeCharge.valid():
		return invalid("type_charge", "want one of "+typeChargeList)
	case r.Currency == "":
		return invalid("currency", "required")
	}
	dec, ok := decimalsOf(r.Currency)
	switch {
	case !ok:
		return invalid("currency", "want "+chargeCurrencyList)
	case (r.TypeCharge == TypePix || r.TypeCharge == TypeBoleto) && r.Currency != payonce.BRL:
		return invalid("currency", string(r.TypeCharge)+" takes BRL only")
	}
	if err := checkID("wallet_uuid", wallet, false); err != nil {
		return err
	}
	if err := checkID("merchant_id", merchant, false); err != nil {
		return err
	}
	p := &r.Payer
	if err := checkText("payer_name", p.Name, true, maxText); err != nil {
		return err
	}
	if err := checkEmail("payer_email", p.Email); err != nil {
		return err
	}
	if err := checkToken("payer_tax_id", p.TaxID, 32); err != nil {
		return err
	}
	if err := checkPhone("payer_cell_phone", p.CellPhone); err != nil {
		return err
	}
	if err := checkAmount("installment_value", r.InstallmentValue, r.Currency, dec, false); err != nil {
		return err
	}
	switch n, most := r.InstallmentCount, r.TypeCharge.maxInstallments(); {
	case n < 1:
		return invalid("installment_count", "required: at least 1 (1 pays in full)")
	case n > most && most == 1:
		return invalid("installment_count", string(r.TypeCharge)+" takes exactly 1")
	case n > most:
		return invalid("installment_count", "at most "+strconv.Itoa(most)+" for "+string(r.TypeCharge))
	}
	if _, err := r.Total(); err != nil {
		return err
	}
	if err := checkDate("due_date", r.DueDate, true); err != nil {
		return err
	}
	if err := checkText("description", r.Description, true, maxText); err != nil {
		return err
	}
	if err := p.Address.validate(); err != nil {
		return err
	}
	for i := range r.Items {
		if err := r.Items[i].validate(i, r.Currency, dec); err != nil {
			return err
		}
	}
	if r.Capture != nil && !*r.Capture && (r.TypeCharge == TypeDebitCard || r.TypeCharge == TypePix || r.TypeCharge == TypeBoleto) {
		return invalid("capture", string(r.TypeCharge)+" cannot be pre-authorised (capture false)")
	}
	if err := checkURL("webhook_url", r.WebhookURL, c.view.BaseURL); err != nil {
		return err
	}
	if err := checkURL("redirect_url", r.RedirectURL, c.view.BaseURL); err != nil {
		return err
	}
	if s := r.Subscription; s != nil {
		switch {
		case r.TypeCharge != TypeCreditCard && r.TypeCharge != TypeDebitCard:
			return invalid("subscription", "only credit_card and debit_card charges start a subscription")
		case s.Cycle == "":
			return invalid("subscription.cycle", "required")
		case !s.Cycle.valid():
			return invalid("subscription.cycle", "want weekly, biweekly, monthly, quarterly, semiannually or yearly")
		}
		if err := checkDate("subscription.end_date", s.EndDate, false); err != nil {
			return err
		}
	}
	return r.validateCard(c)
}

// validateCard checks the card fields, 3DS and the wallets' token data.
func (r *ChargeCreateRequest) validateCard(c *Client) error {
	t := r.TypeCharge
	if !t.takesCard() {
		switch {
		case r.Card != nil:
			return cardInvalid("card_number", "card fields are taken by credit_card, debit_card, applepay and googlepay charges only")
		case r.DeviceInfo != nil:
			return invalid("device_info", "3DS is for card charges only")
		}
	}
	if r.ThreeDSAuthentication && t != TypeCreditCard && t != TypeDebitCard {
		return invalid("threeds_authentication", "3DS is for credit_card and debit_card charges only")
	}
	for _, tok := range []struct {
		field string
		t     TypeCharge
		d     *TokenData
	}{{"applepay", TypeApplePay, r.ApplePay}, {"googlepay", TypeGooglePay, r.GooglePay}} {
		switch {
		case tok.d == nil && t == tok.t && r.Card != nil:
			return cardInvalid(tok.field, "required with card fields: the decrypted token's eci and cavv")
		case tok.d == nil:
			continue
		case t != tok.t:
			return invalid(tok.field, "only with type_charge "+string(tok.t))
		case r.Card == nil:
			return cardInvalid("card_number", "required with "+tok.field+": the decrypted token's card")
		}
		if err := tok.d.validate(tok.field); err != nil {
			return err
		}
	}
	if r.Card != nil {
		if err := validateCard(r.Card, c.view.Now(), c.luhn); err != nil {
			return err
		}
		if t == TypeDebitCard && !r.ThreeDSAuthentication {
			return invalid("threeds_authentication", "a debit card charge needs 3DS: set it true, with device_info")
		}
	}
	if r.ThreeDSAuthentication && r.DeviceInfo == nil {
		return invalid("device_info", "required with threeds_authentication")
	}
	if d := r.DeviceInfo; d != nil {
		for _, f := range []struct{ name, v string }{
			{"device_info.ip_address", d.IPAddress}, {"device_info.user_agent", d.UserAgent},
			{"device_info.http_accept_content", d.HTTPAcceptContent}, {"device_info.http_accept_browser_value", d.HTTPAcceptBrowserValue},
			{"device_info.http_browser_language", d.HTTPBrowserLanguage}, {"device_info.http_browser_color_depth", d.HTTPBrowserColorDepth},
			{"device_info.http_browser_screen_height", d.HTTPBrowserScreenHeight}, {"device_info.http_browser_screen_width", d.HTTPBrowserScreenWidth},
			{"device_info.http_browser_time_difference", d.HTTPBrowserTimeDifference}, {"device_info.session_id", d.SessionID},
		} {
			if err := checkText(f.name, f.v, false, maxText); err != nil {
				return err
			}
		}
	}
	return nil
}

// validateCard checks a card's fields by their wire names: a number of
// 12 to 19 digits (passing Luhn when checkLuhn), a holder name, a two-digit
// month, a four-digit year not past at now, a CVV of 3 or 4 digits. The
// error never holds the number or the CVV.
func validateCard(card *payonce.Card, now time.Time, checkLuhn bool) error {
	n := string(card.Number)
	if len(n) < 12 || len(n) > 19 || !allDigits(n) {
		return cardInvalid("card_number", "want 12 to 19 digits")
	}
	if checkLuhn && !luhn.Valid(n) {
		return cardInvalid("card_number", "fails the Luhn check")
	}
	if strings.TrimSpace(card.HolderName) == "" {
		return cardInvalid("card_name", "required")
	}
	if err := checkText("card_name", card.HolderName, true, maxText); err != nil {
		return cardInvalid("card_name", "must be printable UTF-8 of at most 512 bytes")
	}
	m := card.ExpirationMonth
	month, _ := strconv.Atoi(m)
	if len(m) != 2 || !allDigits(m) || month < 1 || month > 12 {
		return cardInvalid("card_expiry_month", "want two digits, 01 to 12")
	}
	y := card.ExpirationYear
	if len(y) != 4 || !allDigits(y) {
		return cardInvalid("card_expiry_year", "want a four-digit year")
	}
	year, _ := strconv.Atoi(y)
	// A card is valid through the last day of its expiry month.
	if !now.Before(time.Date(year, time.Month(month)+1, 1, 0, 0, 0, 0, time.UTC)) {
		return cardInvalid("card_expiry_year", "card has expired")
	}
	if cvv := string(card.CVV); len(cvv) < 3 || len(cvv) > 4 || !allDigits(cvv) {
		return cardInvalid("card_cvv", "must be 3 or 4 digits")
	}
	return nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// validate checks the address's required fields and its texts.
func (a *Address) validate() error {
	for _, f := range []struct {
		name     string
		v        string
		required bool
	}{
		{"payer_address.street", a.Street, true}, {"payer_address.address_number", a.Number, false},
		{"payer_address.complement", a.Complement, false}, {"payer_address.neighborhood", a.Neighborhood, false},
		{"payer_address.city", a.City, true}, {"payer_address.state", a.State, true},
		{"payer_address.postal_code", a.PostalCode, true}, {"payer_address.country", a.Country, false},
	} {
		if err := checkText(f.name, f.v, f.required, maxText); err != nil {
			return err
		}
	}
	return nil
}

// validate checks item i of a charge in currency c (dec decimals).
func (it *Item) validate(i int, c payonce.Currency, dec int) error {
	at := "items[" + strconv.Itoa(i) + "]."
	if err := checkText(at+"name", it.Name, true, maxText); err != nil {
		return err
	}
	if it.Quantity < 1 {
		return invalid(at+"quantity", "required: at least 1")
	}
	for _, f := range []struct{ name, v string }{{"description", it.Description}, {"sku", it.SKU}, {"code", it.Code}} {
		if err := checkText(at+f.name, f.v, false, maxText); err != nil {
			return err
		}
	}
	if err := checkAmount(at+"total_amount", it.TotalAmount, c, dec, true); err != nil {
		return err
	}
	return checkAmount(at+"unit_amount", it.UnitAmount, c, dec, true)
}

// validate checks a wallet token's data under field (applepay,
// googlepay).
func (d *TokenData) validate(field string) error {
	if err := checkToken(field+".eci", d.ECI, 8); err != nil {
		return err
	}
	if d.CAVV == "" {
		return cardInvalid(field+".cavv", "required")
	}
	if err := checkToken(field+".cavv", d.CAVV, 128); err != nil {
		return cardInvalid(field+".cavv", "must be printable, without spaces, at most 128 bytes")
	}
	if d.Type != "" && d.Type != TypeCreditCard && d.Type != TypeDebitCard {
		return invalid(field+".type", "want credit_card or debit_card")
	}
	return nil
}

// String describes the request with the card masked.
func (r ChargeCreateRequest) String() string {
	s := fmt.Sprintf("a55.ChargeCreateRequest{%s %s x%d %s", r.InstallmentValue, r.Currency, r.InstallmentCount, r.TypeCharge)
	if r.Card != nil {
		s += " " + fmt.Sprint(*r.Card)
	}
	if r.WalletUUID != "" {
		s += " wallet " + r.WalletUUID
	}
	return s + "}"
}

// chargeCreateRequestFields is ChargeCreateRequest without its printing
// methods.
type chargeCreateRequestFields ChargeCreateRequest

// Format prints the request as String does under every verb but %#v,
// which spells out its fields with the card and the wallets' CAVV masked
// and every text redacted (redact.String): a webhook URL's query string,
// which may carry the merchant's own secret, is cut.
func (r ChargeCreateRequest) Format(f fmt.State, verb rune) {
	switch {
	case verb == 'v' && f.Flag('#'):
		redactprint.Format(f, verb, chargeCreateRequestFields(r), "a55.ChargeCreateRequest")
	case verb == 'q':
		_, _ = io.WriteString(f, strconv.Quote(r.String()))
	default:
		_, _ = io.WriteString(f, r.String())
	}
}

// LogValue is the slog form: amount, count, currency, type, wallet and
// the card's last four digits, never the number, CVV or payer.
func (r ChargeCreateRequest) LogValue() slog.Value {
	attrs := []slog.Attr{
		slog.String("installment_value", r.InstallmentValue.String()),
		slog.Int("installment_count", r.InstallmentCount),
		slog.String("currency", string(r.Currency)),
		slog.String("type_charge", string(r.TypeCharge)),
	}
	if r.WalletUUID != "" {
		attrs = append(attrs, slog.String("wallet_uuid", r.WalletUUID))
	}
	if r.Card != nil {
		attrs = append(attrs, slog.Group("card",
			slog.String("last4", r.Card.Number.Last4()),
			slog.String("exp", r.Card.ExpirationMonth+"/"+r.Card.ExpirationYear)))
	}
	return slog.GroupValue(attrs...)
}

// Bool returns a pointer to v, for ChargeCreateRequest.Capture and
// DeviceInfo's flags.
func Bool(v bool) *bool { return &v }

// CaptureRequest captures a pre-authorised charge: POST
// /api/v1/bank/wallet/charge/capture/ with charge_uuid, wallet_uuid and an
// optional amount. A zero Amount captures the whole pre-authorised
// amount; a smaller one captures part of it and releases the rest.
type CaptureRequest struct {
	ChargeUUID string `json:"charge_uuid"`
	// WalletUUID owns the charge; empty, the client's Account's.
	WalletUUID string         `json:"wallet_uuid,omitempty"`
	Amount     payonce.Amount `json:"amount,omitzero"`
	// Currency, not sent, is the charge's: when set, Amount is written in
	// its decimals and a fraction in CLP or COP is refused; when not, the
	// shortest exact number (10.5, 10) is sent.
	Currency payonce.Currency `json:"currency,omitempty"`
}

// RefundRequest refunds a captured charge: POST
// /api/v1/bank/wallet/charge/{charge_uuid}/refund/{wallet_uuid}/, both
// UUIDs in the path only. A zero Amount refunds the whole remaining
// amount; a smaller one refunds part of it (at most AmountRemaining).
type RefundRequest struct {
	ChargeUUID string `json:"charge_uuid"`
	// WalletUUID owns the charge; empty, the client's Account's.
	WalletUUID string         `json:"wallet_uuid,omitempty"`
	Amount     payonce.Amount `json:"amount,omitzero"`
	// Currency, not sent: as CaptureRequest.Currency.
	Currency payonce.Currency `json:"currency,omitempty"`
	// Reason is for reconciliation and reporting.
	Reason string `json:"reason,omitempty"`
}

// CancelRequest cancels a charge not yet captured or settled: POST
// /api/v1/bank/wallet/charge/{charge_uuid}/cancel/{wallet_uuid}/, both
// UUIDs in the path only.
type CancelRequest struct {
	ChargeUUID string `json:"charge_uuid"`
	// WalletUUID owns the charge; empty, the client's Account's.
	WalletUUID string `json:"wallet_uuid,omitempty"`
	// Reason is for reconciliation.
	Reason string `json:"reason,omitempty"`
}

// moveBody is the body of a capture, refund or cancel: the optional
// amount (in dec decimals when known, else shortest exact) and reason,
// and for a capture the identifiers.
type moveBody struct {
	chargeUUID, walletUUID string // capture only: in the body
	amount                 payonce.Amount
	dec                    int
	decKnown               bool
	reason                 string
}

// MarshalWire writes the body: {} when it carries nothing.
func (m *moveBody) MarshalWire() ([]byte, error) {
	b := make([]byte, 0, 128)
	b = append(b, '{')
	sep := func() {
		if len(b) > 1 {
			b = append(b, ',')
		}
	}
	if m.chargeUUID != "" {
		b = append(b, `"charge_uuid":`...)
		b = appendString(b, m.chargeUUID)
		b = append(b, `,"wallet_uuid":`...)
		b = appendString(b, m.walletUUID)
	}
	if !m.amount.IsZero() {
		sep()
		b = append(b, `"amount":`...)
		if m.decKnown {
			b = appendNumber(b, m.amount, m.dec)
		} else {
			b = appendExact(b, m.amount)
		}
	}
	if m.reason != "" {
		sep()
		b = append(b, `"reason":`...)
		b = appendString(b, m.reason)
	}
	return append(b, '}'), nil
}

// moveAmount checks an optional amount of a capture or refund in currency
// c ("": unknown) and returns the body's number form.
func moveAmount(a payonce.Amount, c payonce.Currency) (dec int, known bool, err error) {
	if c == "" {
		return 2, false, checkAmount("amount", a, c, 2, true) // any currency's decimals: written exact
	}
	if dec, known = decimalsOf(c); !known {
		return 0, false, invalid("currency", "want "+chargeCurrencyList)
	}
	return dec, known, checkAmount("amount", a, c, dec, true)
}

// Create creates a charge: POST /api/v1/bank/wallet/charge/ with the
// reference's flat body (MarshalWire), PIX and boleto included
// (type_charge pix or boleto). The request is checked before any byte is
// sent (validate: every required field, amounts in the currency's
// decimals, the card). A declined card or a failed charge is a
// *ChargeError (errors.Is ErrCardDeclined or ErrChargeFailed) that still
// gives the charge. A pending answer with URL3DS is a success: the payer
// completes the 3DS challenge there and the final status arrives by
// webhook.
//
// An attempt whose answer was lost (a transport failure, a 5xx without
// A55's code) may have made the charge, and A55 keeps no answer but a
// 2xx under the key: before sending again, Create looks the charge up in
// the wallet's list (lostCreate) and sends again only when none can be
// the create's. A charge found to be the create's (its key, or, with a
// journal, the one match no other entry holds or could have made)
// settles the create as a TIMEOUT's does; a lookup that cannot tell, a
// match without the key on a call without a journal included, is
// payonce.ErrOutcomeUnknown naming the candidates (docs/a55.md).
func (s *ChargesService) Create(ctx context.Context, req *ChargeCreateRequest, opts ...payonce.CallOption) (*Charge, error) {
	c := s.c
	body := &chargeBody{r: req}
	var summary any
	if req != nil {
		body.wallet, body.merchant = c.walletOr(req.WalletUUID), c.merchantOr(req.MerchantID)
		summary = (*journalSummary)(body)
	}
	ch := new(Charge)
	lost := &lostCreate{s: s, req: req, wallet: body.wallet, merchant: body.merchant}
	meta, err := c.do(ctx, &payonce.Request{
		Operation: "charges.create", Method: http.MethodPost, Path: PathCharges, Route: PathCharges,
		Body: body, Keyed: true, Validate: func() error { return req.validate(c, body.wallet, body.merchant) },
		Summary:      summary,
		EarlierForms: func() []payonce.EarlierForm { return guideCreateForms(req, body.wallet) },
		BeforeResend: lost.beforeResend,
	}, (*createdCharge)(ch), opts)
	if err != nil {
		if lost.refused {
			return nil, legacyError(err) // its text says why the lookup could not tell
		}
		got, err := s.lookUpUnknown(ctx, req, meta, err, lost.found)
		if err != nil {
			return nil, legacyError(err)
		}
		return got, nil
	}
	ch.Meta = meta
	return ch, nil
}

// chargePath is the path of one charge under PathCharges, its UUID
// escaped: /api/v1/bank/wallet/charge/{charge_uuid}/ and what follows it.
func chargePath(chargeUUID string, rest ...string) string {
	p := PathCharges + url.PathEscape(chargeUUID) + "/"
	for _, r := range rest {
		p += url.PathEscape(r) + "/"
	}
	return p
}

// Get reads a charge: GET /api/v1/bank/wallet/charge/?charge_uuid=..&wallet_uuid=..
// (the get-charge page's form; walletUUID "" takes the client's
// Account's: A55 requires it). A GET carries no key and is retried
// freely.
func (s *ChargesService) Get(ctx context.Context, chargeUUID, walletUUID string, opts ...payonce.CallOption) (*Charge, error) {
	wallet := s.c.walletOr(walletUUID)
	q := url.Values{"charge_uuid": {chargeUUID}, "wallet_uuid": {wallet}}
	return s.read(ctx, &payonce.Request{
		Operation: "charges.get", Method: http.MethodGet, Path: PathCharges, Route: PathCharges, Query: q,
		Validate: func() error {
			if err := checkRequiredID("charge_uuid", chargeUUID, false); err != nil {
				return err
			}
			return checkID("wallet_uuid", wallet, false)
		},
	}, opts)
}

// Fetch reads a charge by its UUID alone: GET
// /api/v1/bank/wallet/charge/{charge_uuid}/, the form A55's webhook page
// uses to fetch the charge a webhook names ("the webhook is the trigger,
// the API is the source of truth"). Get is the get-charge page's form.
func (s *ChargesService) Fetch(ctx context.Context, chargeUUID string, opts ...payonce.CallOption) (*Charge, error) {
	return s.read(ctx, &payonce.Request{
		Operation: "charges.fetch", Method: http.MethodGet, Path: chargePath(chargeUUID), Route: PathChargeByUUID,
		Validate: func() error { return checkRequiredID("charge_uuid", chargeUUID, true) },
	}, opts)
}

func (s *ChargesService) read(ctx context.Context, req *payonce.Request, opts []payonce.CallOption) (*Charge, error) {
	ch := new(Charge)
	meta, err := s.c.do(ctx, req, ch, opts)
	if err != nil {
		return nil, err
	}
	ch.Meta = meta
	return ch, nil
}

// Capture captures a pre-authorised charge (created with Capture false):
// POST /api/v1/bank/wallet/charge/capture/ with charge_uuid, wallet_uuid
// and the optional amount in the body. Capturing a charge already
// captured or canceled is ErrInvalidState.
func (s *ChargesService) Capture(ctx context.Context, req *CaptureRequest, opts ...payonce.CallOption) (*Charge, error) {
	if req == nil {
		return s.post(ctx, "charges.capture", PathChargeCapture, PathChargeCapture, nil, func() error { return errNilRequest }, nil, opts)
	}
	body := &moveBody{chargeUUID: req.ChargeUUID, walletUUID: s.c.walletOr(req.WalletUUID), amount: req.Amount}
	return s.post(ctx, "charges.capture", PathChargeCapture, PathChargeCapture, body, func() error {
		if err := checkRequiredID("charge_uuid", body.chargeUUID, false); err != nil {
			return err
		}
		if err := checkID("wallet_uuid", body.walletUUID, false); err != nil {
			return err
		}
		var err error
		body.dec, body.decKnown, err = moveAmount(req.Amount, req.Currency)
		return err
	}, func() []payonce.EarlierForm {
		return guideMoveForms(PathChargeCapture, req.ChargeUUID, body.walletUUID, req.Amount, "")
	}, opts)
}

// Refund refunds a captured charge, wholly or in part: POST
// /api/v1/bank/wallet/charge/{charge_uuid}/refund/{wallet_uuid}/ with
// {"amount": n, "reason": ".."} ({} refunds what remains). Refunding more
// than remains, or a charge not captured, is ErrInvalidState.
func (s *ChargesService) Refund(ctx context.Context, req *RefundRequest, opts ...payonce.CallOption) (*Charge, error) {
	if req == nil {
		return s.post(ctx, "charges.refund", PathChargeRefund, PathChargeRefund, nil, func() error { return errNilRequest }, nil, opts)
	}
	wallet := s.c.walletOr(req.WalletUUID)
	body := &moveBody{amount: req.Amount, reason: req.Reason}
	return s.post(ctx, "charges.refund", chargePath(req.ChargeUUID, "refund", wallet), PathChargeRefund, body, func() error {
		if err := checkPathIDs(req.ChargeUUID, wallet); err != nil {
			return err
		}
		if err := checkText("reason", req.Reason, false, maxText); err != nil {
			return err
		}
		var err error
		body.dec, body.decKnown, err = moveAmount(req.Amount, req.Currency)
		return err
	}, func() []payonce.EarlierForm {
		return guideMoveForms(guideRefundPath, req.ChargeUUID, wallet, req.Amount, req.Reason)
	}, opts)
}

// Cancel cancels a charge not yet captured or settled: POST
// /api/v1/bank/wallet/charge/{charge_uuid}/cancel/{wallet_uuid}/ with
// {"reason": ".."} or {}; the answer's status is StatusCanceled.
// Canceling a settled or canceled charge is ErrInvalidState.
func (s *ChargesService) Cancel(ctx context.Context, req *CancelRequest, opts ...payonce.CallOption) (*Charge, error) {
	if req == nil {
		return s.post(ctx, "charges.cancel", PathChargeCancel, PathChargeCancel, nil, func() error { return errNilRequest }, nil, opts)
	}
	wallet := s.c.walletOr(req.WalletUUID)
	return s.post(ctx, "charges.cancel", chargePath(req.ChargeUUID, "cancel", wallet), PathChargeCancel, &moveBody{reason: req.Reason}, func() error {
		if err := checkPathIDs(req.ChargeUUID, wallet); err != nil {
			return err
		}
		return checkText("reason", req.Reason, false, maxText)
	}, func() []payonce.EarlierForm {
		return guideMoveForms(guideCancelPath, req.ChargeUUID, wallet, payonce.Amount{}, req.Reason)
	}, opts)
}

// checkPathIDs checks the charge and wallet UUIDs of a refund or cancel
// path.
func checkPathIDs(chargeUUID, walletUUID string) error {
	if err := checkRequiredID("charge_uuid", chargeUUID, true); err != nil {
		return err
	}
	return checkID("wallet_uuid", walletUUID, true)
}

var errNilRequest = &payonce.ValidationError{Reason: "nil request", Err: payonce.ErrInvalidRequest}

// post runs a capture, refund or cancel; earlier are the forms an
// earlier payonce version sent it in (the guide's).
func (s *ChargesService) post(ctx context.Context, op, path, route string, body any, validate func() error, earlier func() []payonce.EarlierForm, opts []payonce.CallOption) (*Charge, error) {
	ch := new(Charge)
	meta, err := s.c.do(ctx, &payonce.Request{
		Operation: op, Method: http.MethodPost, Path: path, Route: route, Body: body, Keyed: true, Validate: validate,
		EarlierForms: earlier,
	}, ch, opts)
	if err != nil {
		return nil, legacyError(err)
	}
	ch.Meta = meta
	return ch, nil
}

// ChargeError is the error of a charge that exists but failed: the card
// was declined (errors.Is ErrCardDeclined) or processing failed
// (ErrChargeFailed). Charge is the charge as the answer described
// it (at least its UUID, status and messages); Err is the
// *payonce.APIError, so payonce.KeyOf and errors.Is
// work on a *ChargeError as on any other error of the client.
type ChargeError struct {
	Charge *Charge
	Err    *payonce.APIError
}

// Error implements error; it never holds the card number or CVV.
func (e *ChargeError) Error() string { return e.Err.Error() }

// Unwrap returns the *payonce.APIError.
func (e *ChargeError) Unwrap() error { return e.Err }

// ChargeFromError returns the charge of a *ChargeError in err's chain.
func ChargeFromError(err error) (*Charge, bool) {
	var ce *ChargeError
	if errors.As(err, &ce) && ce.Charge != nil {
		return ce.Charge, true
	}
	return nil, false
}
