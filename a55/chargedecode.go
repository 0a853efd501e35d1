package a55

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/redact"
)

// chargeWire is a charge answer's wire form: Charge's fields and the
// spellings A55's pages give some of them besides (action_url for
// url_3ds), so that encoding/json reads the answer in one pass.
type chargeWire struct {
	chargeFields
	ActionURL string     `json:"action_url"`
	CreatedAt answerTime `json:"created_at"`
	UpdatedAt answerTime `json:"updated_at"`
}

// answerTime is a timestamp of an answer: RFC 3339, or zero when the
// string is in another form (no zone, a space for the T), which cannot be
// placed in time; the answer's Raw keeps the text. A timestamp never
// fails the answer it is in; another JSON type than a string or null
// does.
type answerTime time.Time

// UnmarshalJSON implements json.Unmarshaler.
func (t *answerTime) UnmarshalJSON(b []byte) error {
	return readAnswerTime(b, (*time.Time)(t))
}

// readAnswerTime reads the JSON value v into dst as answerTime does.
func readAnswerTime(v []byte, dst *time.Time) error {
	v = bytes.TrimSpace(v)
	switch {
	case bytes.Equal(v, []byte("null")):
		return nil
	case len(v) < 2 || v[0] != '"':
		return errors.New("timestamp is not a JSON string")
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return err
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t = time.Time{}
	}
	*dst = t
	return nil
}

// decodeCharge decodes a charge answer into ch, every documented
// spelling read, the answer kept for Charge.Raw: the usual answer by
// decodeChargeFast, any other by encoding/json in one pass. done is
// false, and ch untouched, when the body does not decode as a charge
// (left to json.Unmarshal, whose error the caller returns).
func decodeCharge(body []byte, ch *Charge) (done bool) {
	if decodeChargeFast(body, ch) {
		return true
	}
	return decodeChargeSlow(body, ch) == nil
}

// decodeChargeSlow is decodeCharge by encoding/json alone.
func decodeChargeSlow(body []byte, ch *Charge) error {
	var w chargeWire
	if err := json.Unmarshal(body, &w); err != nil {
		return err
	}
	w.fold(ch, body)
	return nil
}

// fold sets ch from w, the aliases read into their fields, and keeps
// body for Raw.
func (w *chargeWire) fold(ch *Charge, body []byte) {
	*ch = Charge(w.chargeFields)
	ch.CreatedAt, ch.UpdatedAt = time.Time(w.CreatedAt), time.Time(w.UpdatedAt)
	if ch.URL3DS == "" {
		ch.URL3DS = w.ActionURL
	}
	ch.raw = &rawAnswer{body: bytes.Clone(bytes.TrimSpace(body))}
}

// UnmarshalJSON reads a charge in every spelling A55 documents
// (url_3ds or action_url, and PixPayload's) and keeps the answer for
// Raw.
func (c *Charge) UnmarshalJSON(b []byte) error {
	if decodeChargeFast(b, c) {
		return nil
	}
	return decodeChargeSlow(b, c)
}

// chargeKeys are the members decodeChargeFast reads; a member that
// differs from one only in letter case is left to encoding/json, which
// reads it into the field.
var chargeKeys = []string{"charge_uuid", "wallet_uuid", "merchant_id", "status", "message", "type_charge", "currency",
	"local_currency", "usd_currency", "amount", "amount_remaining", "installment_value", "installment_count", "due_date",
	"description", "transaction_reference", "url_3ds", "action_url", "charge_payment_url", "pix_payload", "boleto_url",
	"barcode", "subscription", "created_at", "updated_at", "idempotency_key"}

// decodeChargeFast reads a charge answer as decodeChargeSlow does, byte
// for byte the same Charge, without encoding/json's reflection: one pass
// over an object whose member names are plain, and whose strings hold no
// escapes. Anything else (an escape, a member only letter case sets apart
// from a field's, a subscription, a malformed document) returns false
// with ch untouched, for encoding/json to read or refuse.
func decodeChargeFast(body []byte, ch *Charge) bool {
	s := jsonScan{b: body}
	if !s.byte('{') {
		return false
	}
	var w Charge
	var action string
	if !s.byte('}') {
		for {
			key, ok := s.plainString()
			if !ok || !s.byte(':') {
				return false
			}
			v, ok := s.value(0)
			if !ok || !w.setField(key, v, &action) {
				return false
			}
			if s.byte('}') {
				break
			}
			if !s.byte(',') {
				return false
			}
		}
	}
	if !s.end() {
		return false
	}
	if w.URL3DS == "" {
		w.URL3DS = action
	}
	w.raw = &rawAnswer{body: bytes.Clone(bytes.TrimSpace(body))}
	*ch = w
	return true
}

// setField reads member key's value v into c as encoding/json would (an
// Unmarshaler is given the value, null included; null leaves a plain
// field as it is); false when it leaves v to encoding/json.
func (c *Charge) setField(key, v []byte, action *string) bool {
	str := func(dst *string) bool {
		switch {
		case v[0] == 'n':
			return true
		case v[0] != '"':
			return false
		}
		*dst = string(v[1 : len(v)-1])
		return true
	}
	switch string(key) {
	case "charge_uuid":
		return str(&c.UUID)
	case "wallet_uuid":
		return str(&c.WalletUUID)
	case "merchant_id":
		return str(&c.MerchantID)
	case "status":
		return str((*string)(&c.Status))
	case "message":
		return c.Messages.UnmarshalJSON(v) == nil
	case "type_charge":
		return str((*string)(&c.TypeCharge))
	case "currency":
		return str((*string)(&c.Currency))
	case "local_currency":
		return c.LocalCurrency.UnmarshalJSON(v) == nil
	case "usd_currency":
		return c.USDCurrency.UnmarshalJSON(v) == nil
	case "amount":
		return c.Amount.UnmarshalJSON(v) == nil
	case "amount_remaining":
		return c.AmountRemaining.UnmarshalJSON(v) == nil
	case "installment_value":
		return c.InstallmentValue.UnmarshalJSON(v) == nil
	case "installment_count":
		if v[0] == 'n' {
			return true
		}
		n, ok := plainInt(v)
		if ok {
			c.InstallmentCount = n
		}
		return ok
	case "due_date":
		return str(&c.DueDate)
	case "description":
		return str(&c.Description)
	case "transaction_reference":
		return str(&c.TransactionReference)
	case "url_3ds":
		return str(&c.URL3DS)
	case "action_url":
		return str(action)
	case "charge_payment_url":
		return str(&c.ChargePaymentURL)
	case "pix_payload":
		if v[0] == 'n' {
			c.Pix = nil
			return true
		}
		if c.Pix == nil {
			c.Pix = new(PixPayload)
		}
		return c.Pix.UnmarshalJSON(v) == nil
	case "boleto_url":
		return str(&c.BoletoURL)
	case "barcode":
		return str(&c.Barcode)
	case "subscription":
		if v[0] == 'n' {
			c.Subscription = nil
			return true
		}
		return false // rare: encoding/json merges it as it does a struct
	case "created_at":
		return readAnswerTime(v, &c.CreatedAt) == nil
	case "updated_at":
		return readAnswerTime(v, &c.UpdatedAt) == nil
	case "idempotency_key":
		return str(&c.IdempotencyKey)
	}
	for _, b := range key {
		if b >= 0x80 {
			return false // encoding/json folds Unicode letters too
		}
	}
	for _, k := range chargeKeys {
		if foldsTo(key, k) {
			return false
		}
	}
	return true // a field the SDK does not model: kept in Raw
}

// plainInt reads a JSON integer that fits an int, as encoding/json reads
// it into one.
func plainInt(v []byte) (int, bool) {
	n, err := strconv.ParseInt(string(v), 10, strconv.IntSize)
	return int(n), err == nil
}

// UnmarshalJSON reads both spellings of A55's pages: qr_code or
// qr_code_base64, payload or copy_paste, expiration_date or expiration
// (the first of each pair wins when both are given).
func (p *PixPayload) UnmarshalJSON(b []byte) error {
	var w struct {
		QRCode         string `json:"qr_code"`
		QRCodeBase64   string `json:"qr_code_base64"`
		Payload        string `json:"payload"`
		CopyPaste      string `json:"copy_paste"`
		ExpirationDate string `json:"expiration_date"`
		Expiration     string `json:"expiration"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*p = PixPayload{QRCode: or(w.QRCode, w.QRCodeBase64), Payload: or(w.Payload, w.CopyPaste),
		ExpirationDate: or(w.ExpirationDate, w.Expiration)}
	return nil
}

// or is a, else b.
func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// rawAnswer is the answer a charge was read from.
type rawAnswer struct{ body []byte }

// Raw returns the answer the charge was read from, with every field the
// SDK models and every one it does not, but card data masked wherever a
// field's name says it is card data (card_number, number, pan: the last
// four digits; card_cvv, cvv, cvc, cavv: "[REDACTED]"), Luhn or not,
// identifiers kept as sent, and secrets, tokens and card numbers
// elsewhere cut as the journal cuts them (redact.JSONWith and
// Codec.AnswerFields). It is nil for a charge not read from an answer. Read it
// with json.Unmarshal for the fields the SDK does not model.
func (c *Charge) Raw() redact.RawJSON {
	if c == nil || c.raw == nil || len(bytes.TrimSpace(c.raw.body)) == 0 {
		return nil
	}
	return redact.RawJSON(redact.JSONWith(maskCardFields(c.raw.body), Codec{}.AnswerFields()))
}

// maskCardFields masks, at any depth, the values of fields whose name
// says they hold card data; a body that is not JSON is returned as it is
// (redact.JSON stores it as redacted text).
func maskCardFields(body []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return body
	}
	out, err := json.Marshal(maskValue(v))
	if err != nil {
		return body
	}
	return out
}

func maskValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			switch cardField(k) {
			case cardNumberField:
				x[k] = maskAnyNumber(e)
			case cardSecretField:
				if e != nil {
					x[k] = "[REDACTED]"
				}
			default:
				x[k] = maskValue(e)
			}
		}
	case []any:
		for i, e := range x {
			x[i] = maskValue(e)
		}
	}
	return v
}

// The kinds of card data a field's name says it holds.
const (
	notCardField = iota
	cardNumberField
	cardSecretField
)

// cardField names the card data a field holds by its name, without
// regard to case, '_' or '-'.
func cardField(k string) int {
	switch strings.NewReplacer("_", "", "-", "").Replace(strings.ToLower(k)) {
	case "cardnumber", "number", "pan":
		return cardNumberField
	case "cardcvv", "cvv", "cvc", "cvv2", "cavv", "securitycode":
		return cardSecretField
	}
	return notCardField
}

// maskAnyNumber masks a card number field's value: text and numbers keep
// their last four digits ("************1111"); anything else is null.
func maskAnyNumber(v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		if x == "" {
			return x
		}
		return string(maskedNumber(payonce.CardNumber(x)))
	case json.Number:
		return string(maskedNumber(payonce.CardNumber(x.String())))
	}
	return nil
}

// maskedNumber is n as payonce.CardNumber prints it: "************1111",
// "****" with fewer than four digits.
func maskedNumber(n payonce.CardNumber) payonce.CardNumber {
	if l4 := n.Last4(); l4 != "" {
		return "************" + payonce.CardNumber(l4)
	}
	return "****"
}
