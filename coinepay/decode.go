package coinepay

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/jsonmember"
	"github.com/payonce/payonce/redact"
)

// Decoding a success answer once. Codec.DecodeSuccess first tries
// decodeOnce, which reads the envelope and its data in one
// json.Unmarshal, into wire structs that have no UnmarshalJSON of their
// own (each nested UnmarshalJSON makes encoding/json scan its bytes twice
// more). It gives up, leaving the answer to the envelope-then-data path,
// on anything unusual: a decoding error, a body that is not an object, a
// data member given twice. Both paths give the same result: the last
// member of a name wins, as encoding/json decides.

// envelopeCode is the envelope's code: a JSON number or a numeric string.
type envelopeCode int

// UnmarshalJSON reads the code as Envelope.UnmarshalJSON does.
func (c *envelopeCode) UnmarshalJSON(b []byte) error {
	n, err := parseEnvelopeCode(b)
	*c = envelopeCode(n)
	return err
}

// parseEnvelopeCode reads a code given as a JSON number or a numeric
// string; null or nothing is 0.
func parseEnvelopeCode(raw []byte) (int, error) {
	c := bytes.Trim(bytes.TrimSpace(raw), `"`)
	if len(c) == 0 || string(c) == "null" {
		return 0, nil
	}
	n, err := strconv.Atoi(string(c))
	if err != nil {
		return 0, errors.New("envelope: code is not a number")
	}
	return n, nil
}

// envelopeMessage is the envelope's message: kept when a JSON string,
// empty otherwise.
type envelopeMessage string

// UnmarshalJSON reads the message as Envelope.UnmarshalJSON does.
func (m *envelopeMessage) UnmarshalJSON(b []byte) error {
	*m = ""
	if len(b) > 0 && b[0] == '"' {
		var s string
		_ = json.Unmarshal(b, &s)
		*m = envelopeMessage(s)
	}
	return nil
}

// wireEnvelope is an Envelope whose data decodes into *T in the same pass.
type wireEnvelope[T any] struct {
	Code       envelopeCode    `json:"code"`
	Message    envelopeMessage `json:"message"`
	MessageKey string          `json:"message_key"`
	Data       *T              `json:"data"`
	RequestID  string          `json:"request_id"`
}

// wireTime is a card's created_at: an RFC 3339 time, zero when it is
// anything else.
type wireTime time.Time

// UnmarshalJSON reads the time as time.Parse(time.RFC3339Nano) reads the
// JSON string, without an allocation in the usual case; it never fails.
func (t *wireTime) UnmarshalJSON(b []byte) error {
	var v time.Time
	if v.UnmarshalJSON(b) != nil { // strict RFC 3339: what time.Parse also reads alike
		var s string
		if json.Unmarshal(b, &s) == nil {
			v, _ = time.Parse(time.RFC3339Nano, s)
		} else {
			v = time.Time{}
		}
	}
	*t = wireTime(v)
	return nil
}

// cardPlain is Card without its methods.
type cardPlain Card

// cardWire is a card's wire form.
type cardWire struct {
	cardPlain
	CreatedAt wireTime `json:"created_at"`
}

// card returns the card, raw its object as sent (copied: body may be
// reused once the call returns).
func (w *cardWire) card(raw []byte) Card {
	c := Card(w.cardPlain)
	c.CreatedAt = time.Time(w.CreatedAt)
	c.Raw = append(redact.RawJSON(nil), raw...)
	return c
}

// applyWire is card/apply's data: the card and its cost.
type applyWire struct {
	cardWire
	applyCost
}

// rechargePlain is Recharge without its methods.
type rechargePlain Recharge

// decodeOnce decodes a success envelope and its data into out, which is
// a *applyData, a *Card or a *Recharge, in one pass. done is false when it
// left body to the envelope-then-data path: another out, or an unusual
// body (see above).
func decodeOnce(body []byte, out any) (done bool, err error) {
	switch v := out.(type) {
	case *applyData:
		var w applyWire
		raw, code, ok := decodeWire(body, &w)
		if !ok || code != nil {
			return ok, code
		}
		if raw != nil {
			v.Card, v.Cost = w.card(raw), w.applyCost
		}
	case *Card:
		var w cardWire
		raw, code, ok := decodeWire(body, &w)
		if !ok || code != nil {
			return ok, code
		}
		if raw != nil {
			*v = w.card(raw)
		}
	case *Recharge:
		var w rechargePlain
		raw, code, ok := decodeWire(body, &w)
		if !ok || code != nil {
			return ok, code
		}
		if raw != nil {
			*v = Recharge(w)
			v.Raw = append(redact.RawJSON(nil), raw...)
		}
	default:
		return false, nil
	}
	return true, requireCardID(out)
}

// decodeWire decodes body's envelope, and its data into w. raw is the
// data's bytes, nil when data is null or absent; apiErr is the envelope's
// failure when its code is not 2xx; ok is false when body is unusual.
func decodeWire[T any](body []byte, w *T) (raw []byte, apiErr error, ok bool) {
	env := wireEnvelope[T]{Data: w}
	if json.Unmarshal(body, &env) != nil {
		return nil, nil, false
	}
	raw, n, isObject := jsonmember.Last(body, "data")
	if !isObject || n > 1 {
		return nil, nil, false
	}
	if e := envelopeFailure(int(env.Code), env.MessageKey, string(env.Message), env.RequestID); e != nil {
		return nil, e, true
	}
	if env.Data == nil || string(raw) == "null" {
		raw = nil
	}
	return raw, nil, true
}

// envelopeFailure is the *payonce.APIError of an envelope whose code is
// set and not 2xx, nil for any other.
func envelopeFailure(code int, messageKey, message, requestID string) error {
	if code == 0 || (code >= 200 && code <= 299) {
		return nil
	}
	e := &payonce.APIError{Code: messageKey, Message: message, RequestID: requestID}
	e.Kind = kindForMessageKey(messageKey)
	if e.Kind == nil {
		e.Kind = payonce.KindForStatus(code)
	}
	return e
}
