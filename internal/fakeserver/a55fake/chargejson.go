package a55fake

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/fakeserver"
)

// chargeAnswer answers c as JSON: the bytes encoding/json writes for it,
// written by appendJSON without reflection, without the Marshaler calls
// of its amounts and times and without compacting their output again.
func chargeAnswer(c *charge) fakeserver.Response {
	b, ok := c.appendJSON(make([]byte, 0, c.jsonSizeHint()))
	if !ok {
		return fakeserver.JSON(http.StatusOK, c)
	}
	return fakeserver.Response{Status: http.StatusOK, Body: b}
}

// jsonSizeHint is about the size of c's JSON, so that the answer the
// store keeps is allocated once and not much larger than it is.
func (c *charge) jsonSizeHint() int {
	n := 480 + len(c.Payer) + len(c.Description) + len(c.DueDate) + len(c.WebhookURL) + len(c.IdempotencyKey)
	if k := c.Card; k != nil {
		n += len(k.Last4) + len(k.HolderName) + len(k.ExpirationMonth) + len(k.ExpirationYear)
	}
	for _, m := range c.Message {
		n += 48 + len(m.Code) + len(m.Source) + len(m.Description)
	}
	return n
}

// appendJSON appends what json.Marshal(c) writes; ok is false for a
// charge it cannot write so (a time json.Marshal refuses), which the
// caller hands to json.Marshal.
func (c *charge) appendJSON(b []byte) (_ []byte, ok bool) {
	b = appendField(b, '{', "charge_uuid", c.UUID)
	b = appendField(b, ',', "wallet_uuid", c.WalletUUID)
	b = appendField(b, ',', "status", c.Status)
	b = appendAmountField(b, "amount", c.Amount)
	b = appendAmountField(b, "captured_amount", c.CapturedAmount)
	b = appendAmountField(b, "refunded_amount", c.RefundedAmount)
	b = appendField(b, ',', "currency", c.Currency)
	b = appendField(b, ',', "type_charge", c.TypeCharge)
	b = append(b, `,"capture":`...)
	b = strconv.AppendBool(b, c.Capture)
	if c.Description != "" {
		b = appendField(b, ',', "description", c.Description)
	}
	if c.DueDate != "" {
		b = appendField(b, ',', "due_date", c.DueDate)
	}
	if c.InstallmentCount != 0 {
		b = append(b, `,"installment_count":`...)
		b = strconv.AppendInt(b, int64(c.InstallmentCount), 10)
	}
	if c.WebhookURL != "" {
		b = appendField(b, ',', "webhook_url", c.WebhookURL)
	}
	if k := c.Card; k != nil {
		b = append(b, `,"card":`...)
		b = appendField(b, '{', "last4", k.Last4)
		if k.HolderName != "" {
			b = appendField(b, ',', "holder_name", k.HolderName)
		}
		if k.ExpirationMonth != "" {
			b = appendField(b, ',', "expiration_month", k.ExpirationMonth)
		}
		if k.ExpirationYear != "" {
			b = appendField(b, ',', "expiration_year", k.ExpirationYear)
		}
		b = append(b, '}')
	}
	if len(c.Payer) > 0 {
		b = append(b, `,"payer":`...)
		if b, ok = appendCompactHTML(b, c.Payer); !ok {
			return b, false
		}
	}
	b = append(b, `,"message":`...)
	if c.Message == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, m := range c.Message {
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
	if b, ok = appendTimeField(b, "created_at", c.CreatedAt); !ok {
		return b, false
	}
	if b, ok = appendTimeField(b, "updated_at", c.UpdatedAt); !ok {
		return b, false
	}
	if c.IdempotencyKey != "" {
		b = appendField(b, ',', "idempotency_key", c.IdempotencyKey)
	}
	return append(b, '}'), true
}

// appendField appends sep, the name (plain ASCII) and the string v.
func appendField(b []byte, sep byte, name, v string) []byte {
	b = append(b, sep, '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return appendString(b, v)
}

func appendAmountField(b []byte, name string, a payonce.Amount) []byte {
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':', '"')
	return append(appendAmount(b, a), '"')
}

// appendAmount appends a.String() ("100.00").
func appendAmount(b []byte, a payonce.Amount) []byte {
	m := a.Minor()
	if m < 0 {
		return append(b, a.String()...)
	}
	b = strconv.AppendInt(b, m/100, 10)
	return append(b, '.', byte('0'+m%100/10), byte('0'+m%10))
}

// appendTimeField appends the name and t as time.Time.MarshalJSON writes
// it; ok is false for a time it refuses.
func appendTimeField(b []byte, name string, t time.Time) (_ []byte, ok bool) {
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':', '"')
	b, err := t.AppendText(b)
	if err != nil {
		return b, false
	}
	return append(b, '"'), true
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

// appendCompactHTML appends the JSON value raw as encoding/json writes a
// json.RawMessage: white space outside strings removed, <, >, & and
// U+2028, U+2029 escaped. raw comes from json.Unmarshal, so it is one
// valid JSON value; ok is false (and the caller falls back to
// encoding/json) if it is not.
func appendCompactHTML(b, raw []byte) (_ []byte, ok bool) {
	if !json.Valid(raw) {
		return b, false
	}
	const hex = "0123456789abcdef"
	inString, escaped := false, false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case c == '<' || c == '>' || c == '&':
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			escaped = false
			continue
		case c == 0xE2 && i+2 < len(raw) && raw[i+1] == 0x80 && raw[i+2]&^1 == 0xA8:
			b = append(b, '\\', 'u', '2', '0', '2', hex[raw[i+2]&0xF])
			i += 2
			escaped = false
			continue
		}
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case inString && c == '"':
			inString = false
		case inString:
		case c == '"':
			inString = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			continue
		}
		b = append(b, c)
	}
	return b, true
}

// amountString is a.String() without fmt.
func amountString(a payonce.Amount) string {
	var buf [24]byte
	return string(appendAmount(buf[:0], a))
}
