package coinepay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/payonce/payonce"
)

// Envelope is the shape of every Coinepay OpenAPI answer, success and
// failure alike:
//
//	{"code": 200, "message": "ok", "message_key": "success", "data": {...}}
//	{"code": 409, "message": "Idempotency-Key 冲突", "message_key": "openapi_idempotency_key_conflict", "data": null}
//
// Code repeats the HTTP status; MessageKey is the stable machine-readable
// code; Message is human text, often Chinese, kept as sent.
type Envelope struct {
	Code       int             `json:"code"`
	Message    string          `json:"message"`
	MessageKey string          `json:"message_key"`
	Data       json.RawMessage `json:"data"`
	RequestID  string          `json:"request_id,omitempty"`
}

// UnmarshalJSON reads the envelope, accepting code as a JSON number or a
// numeric string.
func (e *Envelope) UnmarshalJSON(b []byte) error {
	var raw struct {
		Code       json.RawMessage `json:"code"`
		Message    json.RawMessage `json:"message"`
		MessageKey string          `json:"message_key"`
		Data       json.RawMessage `json:"data"`
		RequestID  string          `json:"request_id"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*e = Envelope{MessageKey: raw.MessageKey, Data: raw.Data, RequestID: raw.RequestID}
	n, err := parseEnvelopeCode(raw.Code)
	if err != nil {
		return err
	}
	e.Code = n
	var m envelopeMessage
	_ = m.UnmarshalJSON(raw.Message)
	e.Message = string(m)
	return nil
}

// Codec decodes the Coinepay envelope for the core client, which
// NewClient installs. Its methods may be called directly, for example to
// read an answer a journal entry holds (JournalEntry.Result) into a
// CardResult.
type Codec struct{}

// DecodeSuccess unwraps the data of a 2xx envelope into out. An envelope
// whose code is not 2xx is a failure despite the HTTP status and is
// returned as an *payonce.APIError (the core adds the key and attempts).
// A card or recharge answer is read once (decodeOnce).
func (Codec) DecodeSuccess(_ int, _ http.Header, body []byte, out any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		if out == nil {
			return nil
		}
		return errors.New("empty answer body")
	}
	if done, err := decodeOnce(body, out); done {
		return err
	}
	return decodeEnvelopeThenData(body, out)
}

// decodeEnvelopeThenData decodes body's envelope, then its data into out.
func decodeEnvelopeThenData(body []byte, out any) error {
	var env Envelope
	if err := json.Unmarshal(body, &env); err != nil {
		return fmt.Errorf("decode envelope: %w", err)
	}
	if e := envelopeFailure(env.Code, env.MessageKey, env.Message, env.RequestID); e != nil {
		return e
	}
	if out == nil {
		return nil
	}
	if len(env.Data) > 0 && string(env.Data) != "null" {
		if err := json.Unmarshal(env.Data, out); err != nil {
			return fmt.Errorf("decode data: %w", err)
		}
	}
	return requireCardID(out)
}

// requireCardID refuses a card or recharge answer that names no card (data
// null, {}, missing): never a success with an empty Card.
func requireCardID(out any) error {
	id := "-"
	switch v := out.(type) {
	case *applyData:
		id = v.CardID
	case *Card:
		id = v.CardID
	case *Recharge:
		id = v.CardID
	}
	if id == "" {
		return errors.New("answer data without card_id")
	}
	return nil
}

// DecodeError reads the message_key, message and request ID of an error
// envelope into e, and the message_key's kind (kindForMessageKey); the
// core falls back on the HTTP status for a key it does not know (e.Code
// still holds the raw key). A body that is not an
// envelope (a proxy's HTML page) leaves e to the status mapping.
func (Codec) DecodeError(_ int, _ http.Header, body []byte, e *payonce.APIError) {
	var env Envelope
	if json.Unmarshal(body, &env) != nil {
		return
	}
	e.Code = env.MessageKey
	e.Kind = kindForMessageKey(env.MessageKey)
	e.Message = env.Message
	if env.RequestID != "" {
		e.RequestID = env.RequestID
	}
}

var _ interface {
	DecodeSuccess(status int, header http.Header, body []byte, out any) error
	DecodeError(status int, header http.Header, body []byte, e *payonce.APIError)
} = Codec{}

// finalKinds are the Coinepay failures final for an idempotency key (see
// docs/journal.md, "Which failures are final"): a refusal of this
// body or this key by the rules (openapi_invalid_request,
// openapi_invalid_json, openapi_package_not_found, a 405 or 413, a card
// that does not exist, an openapi_idempotency_key_* rule). Coinepay keeps
// only 2xx answers, so everything else may still execute under the key:
// insufficient_balance after a top-up, a conflict or
// openapi_idempotency_answer_not_kept (the key ran), refused signatures or
// credentials, 429 and 5xx.
var finalKinds = []error{
	payonce.ErrInvalidRequest, payonce.ErrNotFound,
	payonce.ErrKeyRequired, payonce.ErrKeyTooLong, payonce.ErrKeyInvalidChars,
}

// provider is what the core must know of Coinepay (payonce.Provider): its name,
// key rules, codec, own error kinds and the kinds final for a key. The
// client adds the credential's scope identity and legacy scopes.
func provider() payonce.Provider {
	return payonce.Provider{
		Name:       ProviderName,
		KeyRules:   keyRules(),
		Codec:      Codec{},
		Kinds:      []error{ErrInsufficientBalance, ErrSignatureInvalid, ErrTimestampExpired, ErrNonceReplayed},
		FinalKinds: finalKinds,
	}
}
