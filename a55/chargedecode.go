package a55

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/redact"
)

// chargeWire is a charge answer's wire form: Charge's fields and the
// spellings A55's pages give some of them besides (action_url for
// url_3ds), so that encoding/json reads the answer in one pass.
type chargeWire struct {
	chargeFields
	ActionURL string `json:"action_url"`
}

// decodeCharge decodes a charge answer into ch in one pass, every
// documented spelling read, the answer kept for Charge.Raw. done is
// false, and ch untouched, when the body does not decode as a charge
// (left to json.Unmarshal, whose error the caller returns).
func decodeCharge(body []byte, ch *Charge) (done bool) {
	var w chargeWire
	if json.Unmarshal(body, &w) != nil {
		return false
	}
	w.fold(ch, body)
	return true
}

// fold sets ch from w, the aliases read into their fields, and keeps
// body for Raw.
func (w *chargeWire) fold(ch *Charge, body []byte) {
	*ch = Charge(w.chargeFields)
	if ch.URL3DS == "" {
		ch.URL3DS = w.ActionURL
	}
	ch.raw = &rawAnswer{body: bytes.Clone(body)}
}

// UnmarshalJSON reads a charge in every spelling A55 documents
// (url_3ds or action_url, and PixPayload's) and keeps the answer for
// Raw.
func (c *Charge) UnmarshalJSON(b []byte) error {
	var w chargeWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	w.fold(c, b)
	return nil
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
// four digits; card_cvv, cvv, cvc, cavv: "[REDACTED]"), Luhn or not, and
// secrets, tokens and card numbers elsewhere cut as the journal cuts them
// (redact.JSON). It is nil for a charge not read from an answer. Read it
// with json.Unmarshal for the fields the SDK does not model.
func (c *Charge) Raw() redact.RawJSON {
	if c == nil || c.raw == nil || len(bytes.TrimSpace(c.raw.body)) == 0 {
		return nil
	}
	return redact.RawJSON(redact.JSON(maskCardFields(c.raw.body)))
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
