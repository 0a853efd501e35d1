package a55

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/corekit"
	"github.com/payonce/payonce/redact"
)

// Codec decodes A55's answers for the payonce core. It reads both error
// shapes A55 documents (https://docs.a55.tech, Errors):
//
//	general:      {"error":{"code":"..","message":"..","details":[{"field":"..","reason":".."}]},"request_id":"req_.."}
//	charge-level: {"charge_uuid":"..","status":"error","message":[{"code":"..","source":"..","description":".."}]}
//
// A55's code table (codeRules; docs/a55.md, "Codes") names the kind of
// each code. The codes that ask for an action (3DS_REQUIRED,
// 3DS_UNAVAILABLE, PROCESSING_ERROR, TIMEOUT, DUPLICATE_REQUEST) decide in
// either shape and at any status; otherwise a 409 in the charge-level
// shape is an illegal move (ErrInvalidState), a 409 in the general shape,
// or with no body, a key reused with another payload
// (payonce.ErrIdempotencyConflict). A created charge in a failed status
// (error or declined, in any case), whether answered 2xx or 4xx, is
// ErrCardDeclined or ErrChargeFailed, and the charge stays reachable
// through *ChargeError. Unknown fields are ignored.
type Codec struct{}

// DecodeSuccess implements payonce.Codec. It decodes body into out and
// reports a newly created charge in a failed status (error or declined,
// in any case) as an *payonce.APIError.
func (Codec) DecodeSuccess(status int, _ http.Header, body []byte, out any) error {
	if out == nil {
		return nil
	}
	if len(bytes.TrimSpace(body)) > 0 && !decodeChargeOnce(body, out) {
		if err := json.Unmarshal(body, out); err != nil {
			return err
		}
	}
	// A charge or wallet answer that names none (an empty body, {}, a
	// proxy's page) is never a success with an empty Charge or Wallet.
	switch v := out.(type) {
	case *createdCharge:
		if v.UUID == "" {
			return errNoChargeUUID
		}
	case *Charge:
		if v.UUID == "" {
			return errNoChargeUUID
		}
	case *Wallet:
		if v.UUID == "" {
			return errNoWalletUUID
		}
	case *queriedWallet:
		if v.UUID == "" {
			return errNoWalletUUID
		}
	}
	cc, ok := out.(*createdCharge)
	if !ok || !cc.Status.Failed() {
		return nil
	}
	// A created charge in a failed status: its first code names the
	// failure. A code that asks for an action keeps its kind (a challenge,
	// an outcome to look up); one that asks for a retry does not, since
	// the answer is a charge A55 stored under the key, in status error.
	ch := (*Charge)(cc)
	e := &payonce.APIError{}
	fillFromMessages(e, ch.Messages)
	switch k := actionKind(e.Code); k {
	case ErrThreeDSRequired, payonce.ErrOutcomeUnknown:
		e.Kind = k
	default:
		e.Kind = chargeFailureKind(status, e.Code, ch.Status)
	}
	e.Err = &chargeFailure{charge: ch, url3DS: challengeOf(body)}
	return e
}

var errNoChargeUUID = errors.New("charge answer without charge_uuid")

// decodeChargeOnce decodes a charge answer in one pass (decodeCharge) when
// out is a *Charge or *createdCharge; false leaves body to json.Unmarshal.
func decodeChargeOnce(body []byte, out any) bool {
	switch v := out.(type) {
	case *createdCharge:
		return decodeCharge(body, (*Charge)(v))
	case *Charge:
		return decodeCharge(body, v)
	}
	return false
}

// DecodeError implements payonce.Codec: it reads the answer's shape, then
// A55's code table (codeKind) names the kind the shape left open; the
// core's status table decides for a code A55 does not document. A
// declined or failed charge, a 3DS challenge and an outcome to look up
// keep the charge the answer names (*ChargeError) and its url_3ds
// (ChallengeURL).
func (Codec) DecodeError(status int, _ http.Header, body []byte, e *payonce.APIError) {
	ch, url := decodeErrorBody(status, body, e)
	if e.Kind == nil {
		e.Kind = codeKind(e.Code)
	}
	if e.Err != nil {
		return
	}
	switch {
	case ch != nil && (e.Kind == ErrThreeDSRequired || e.Kind == payonce.ErrOutcomeUnknown):
		e.Err = &chargeFailure{charge: ch, url3DS: url}
	case url != "" && e.Kind == ErrThreeDSRequired:
		e.Err = challenge(url)
	}
}

// Advise implements the core's retry advice (corekit.Advice): what A55's
// code table says of the answer's code (a retry under the key after
// PROCESSING_ERROR, a least wait of 60 s after 3DS_UNAVAILABLE, none at
// all after TIMEOUT or DUPLICATE_REQUEST); the status decides for any
// other code.
func (Codec) Advise(e *payonce.APIError) corekit.Advice { return ruleOf(e.Code).advice }

// decodeErrorBody reads an error answer of either shape into e and
// returns the charge it names (nil when it names none) and its 3DS
// challenge URL.
func decodeErrorBody(status int, body []byte, e *payonce.APIError) (*Charge, string) {
	var v struct {
		RequestID  string          `json:"request_id"`
		ChargeUUID string          `json:"charge_uuid"`
		Status     Status          `json:"status"`
		Message    json.RawMessage `json:"message"`
		Error      json.RawMessage `json:"error"`
	}
	if len(bytes.TrimSpace(body)) == 0 || json.Unmarshal(body, &v) != nil {
		return nil, "" // the status table decides
	}
	var named *Charge
	if v.ChargeUUID != "" {
		named = chargeOf(body, Charge{UUID: v.ChargeUUID, Status: v.Status})
	}
	url := challengeOf(body)
	if general := bytes.HasPrefix(bytes.TrimSpace(v.Error), []byte("{")); general || (v.ChargeUUID == "" && v.Status == "") {
		// The general shape {"error":{"code","message","details"}} is the
		// core codec's; the code table, then the status table decide the
		// kind. A charge_uuid beside it is kept.
		var details []payonce.ErrorDetail
		if rid, code, msg, ok := corekit.ReadErrorShape(body, &details); ok {
			e.Code, e.Message, e.Details = code, msg, details
			if rid != "" {
				e.RequestID = rid
			}
		}
		if k := actionKind(e.Code); k != nil {
			e.Kind = k
		}
		return named, url
	}
	if v.RequestID != "" {
		e.RequestID = v.RequestID
	}
	var msgs Messages
	_ = json.Unmarshal(v.Message, &msgs)
	fillFromMessages(e, msgs)
	switch action := actionKind(e.Code); {
	case action != nil:
		e.Kind = action
	case status == http.StatusConflict:
		e.Kind = ErrInvalidState
	case status == http.StatusUnauthorized || status == http.StatusForbidden ||
		status == http.StatusNotFound || status == http.StatusTooManyRequests || status >= 500:
		// the code or status table decides
	default:
		e.Kind = chargeCodeKind(e.Code)
		if e.Kind == ErrCardDeclined || e.Kind == ErrChargeFailed ||
			(e.Kind == nil && v.Status.Failed()) {
			e.Kind = chargeFailureKind(status, e.Code, v.Status)
			ch := named
			if ch == nil {
				ch = chargeOf(body, Charge{Status: v.Status, Messages: msgs})
			}
			e.Err = &chargeFailure{charge: ch, url3DS: url}
		}
	}
	return named, url
}

// chargeOf decodes the charge an error answer describes, or gives
// fallback when the answer does not decode as one.
func chargeOf(body []byte, fallback Charge) *Charge {
	var ch Charge
	if json.Unmarshal(body, &ch) != nil {
		return &fallback
	}
	return &ch
}

// chargeFailureKind is the kind of a failed charge: its first code's
// when that is a decline or a failure (chargeCodeKind), else
// ErrCardDeclined for status declined (in any case) or HTTP 402, and
// ErrChargeFailed for anything else.
func chargeFailureKind(status int, code string, st Status) error {
	if k := chargeCodeKind(code); k == ErrCardDeclined || k == ErrChargeFailed {
		return k
	}
	if st.Is(StatusDeclined) || status == http.StatusPaymentRequired {
		return ErrCardDeclined
	}
	return ErrChargeFailed
}

// fillFromMessages puts a charge-level message list into e: the first code,
// the joined descriptions, and every message as a detail.
func fillFromMessages(e *payonce.APIError, msgs Messages) {
	if len(msgs) == 0 {
		return
	}
	if codes := msgs.Codes(); len(codes) > 0 {
		e.Code = codes[0]
	}
	e.Message = msgs.String()
	for _, m := range msgs {
		e.Details = append(e.Details, payonce.ErrorDetail{Field: m.Source, Reason: m.Description, Code: m.Code})
	}
}

// createdCharge is the answer of Charges.Create: only there is a charge
// with status "error" a failure (Charges.Get reads such a charge fine).
type createdCharge Charge

// chargeFailure carries the charge of a failed charge answer (or of a 3DS
// challenge, or of an outcome to look up) inside the *payonce.APIError
// (as its Err) until the service wraps it in a *ChargeError; url3DS is
// the answer's challenge URL, "" for none.
type chargeFailure struct {
	charge *Charge
	url3DS string
}

func (c *chargeFailure) Error() string {
	// The charge's ID and status are the server's text: a chain walked
	// with errors.Unwrap prints this error on its own.
	return redact.String(fmt.Sprintf("charge %s status %s", c.charge.UUID, strings.TrimSpace(string(c.charge.Status))))
}

var _ interface {
	DecodeSuccess(status int, header http.Header, body []byte, out any) error
	DecodeError(status int, header http.Header, body []byte, e *payonce.APIError)
	Advise(e *payonce.APIError) corekit.Advice
} = Codec{}

// finalKinds are the A55 failures final for an idempotency key (see
// docs/journal.md, "Which failures are final"): a refusal of this
// body or this key by the rules (validation, a path or resource that does
// not exist, an illegal move of the charge, a key the rules refuse), a
// charge A55 decided (declined, or ended in status error: the charge
// exists and ChargeFromError reaches it) and a 3DS challenge the same
// body would be answered again. Anything else may still execute under the
// key, since A55 keeps only 2xx answers; an outcome to look up
// (payonce.ErrOutcomeUnknown) is never final.
var finalKinds = []error{
	payonce.ErrInvalidRequest, payonce.ErrNotFound, ErrInvalidState,
	ErrCardDeclined, ErrChargeFailed, ErrThreeDSRequired,
	payonce.ErrKeyRequired, payonce.ErrKeyTooShort, payonce.ErrKeyTooLong, payonce.ErrKeyInvalidChars,
}

// provider is what the core must know of A55 (payonce.Provider): its name,
// key rules, codec, own error kinds and the kinds final for a key. The
// client adds the credential's scope identity and legacy scopes.
func provider() payonce.Provider {
	return payonce.Provider{
		Name:       "a55",
		KeyRules:   keyRules(),
		Codec:      Codec{},
		Kinds:      []error{ErrCardDeclined, ErrChargeFailed, ErrThreeDSRequired, ErrInvalidState},
		FinalKinds: finalKinds,
	}
}
