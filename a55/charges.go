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

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/redactprint"
)

// ChargesService creates, reads, captures, refunds and cancels charges
// (https://docs.a55.tech, Charges). Every POST is one business operation
// with one Idempotency-Key, resolved once and sent on every attempt:
// payonce.WithKey, else a new UUID v4. Resume an operation that failed
// with a resumable error (payonce.IsResumable) with
// payonce.WithKey(payonce.KeyOf(err)), now or, the key stored by its text
// form, later in any process: the key and its age come back, so the 24 h
// guard holds.
type ChargesService struct{ c *Client }

// ChargeCreateRequest is the charge payload of the idempotency guide plus
// the optional fields of A55's public reference. Printed, logged or
// marshalled with encoding/json it masks the card (MarshalJSON); the
// client sends its wire form (MarshalWire).
type ChargeCreateRequest struct {
	Amount     payonce.Amount   `json:"amount"`
	Currency   payonce.Currency `json:"currency"`
	TypeCharge TypeCharge       `json:"type_charge"`
	Card       *payonce.Card    `json:"card,omitempty"`
	Payer      *Payer           `json:"payer,omitempty"`

	WalletUUID       string `json:"wallet_uuid,omitempty"`
	Description      string `json:"description,omitempty"`
	DueDate          string `json:"due_date,omitempty"` // YYYY-MM-DD, boleto and pix
	InstallmentCount int    `json:"installment_count,omitempty"`
	// Capture false asks for a pre-authorisation, captured later with
	// Charges.Capture; nil (the default) captures at once.
	Capture    *bool  `json:"capture,omitempty"`
	WebhookURL string `json:"webhook_url,omitempty"`
}

// validateCurrency checks that c is three upper-case letters, as ISO 4217
// codes are.
func validateCurrency(c payonce.Currency) error {
	if len(c) != 3 || strings.IndexFunc(string(c), func(r rune) bool { return r < 'A' || r > 'Z' }) >= 0 {
		return &payonce.ValidationError{Field: "currency", Reason: "want a three-letter ISO 4217 code", Err: payonce.ErrInvalidRequest}
	}
	return nil
}

// validate checks the request; the card's expiry is checked against now
// (the core client's clock, which payoncetest.ClientClock sets in tests), a webhook
// URL against the client's base URL, asked for only then.
func (r *ChargeCreateRequest) validate(now time.Time, baseURL string) error {
	if r == nil {
		return &payonce.ValidationError{Reason: "nil request", Err: payonce.ErrInvalidRequest}
	}
	if r.Amount.Minor() <= 0 {
		return &payonce.ValidationError{Field: "amount", Reason: "must be greater than 0.00", Err: payonce.ErrInvalidAmount}
	}
	if err := validateCurrency(r.Currency); err != nil {
		return err
	}
	if r.TypeCharge == "" {
		return &payonce.ValidationError{Field: "type_charge", Reason: "required", Err: payonce.ErrInvalidRequest}
	}
	if !r.TypeCharge.valid() {
		return &payonce.ValidationError{Field: "type_charge", Reason: "want one of " + typeChargeList, Err: payonce.ErrInvalidRequest}
	}
	if r.InstallmentCount < 0 {
		return &payonce.ValidationError{Field: "installment_count", Reason: "must not be negative", Err: payonce.ErrInvalidRequest}
	}
	if r.WebhookURL != "" {
		if err := checkWebhookURL(r.WebhookURL, baseURL); err != nil {
			return err
		}
	}
	if r.TypeCharge.needsCard() {
		if r.Card == nil {
			return &payonce.ValidationError{Field: "card", Reason: "required for type_charge " + string(r.TypeCharge), Err: payonce.ErrInvalidCard}
		}
		return r.Card.Validate(now)
	}
	return nil
}

// String describes the request with the card masked.
func (r ChargeCreateRequest) String() string {
	s := fmt.Sprintf("a55.ChargeCreateRequest{%s %s %s", r.Amount, r.Currency, r.TypeCharge)
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
// which spells out its fields with the card masked and every text
// redacted (redact.String): a webhook URL's query string, which
// may carry the merchant's own secret, is cut.
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

// LogValue is the slog form: amount, currency, type, wallet and the card's
// last four digits, never the number, CVV or payer.
func (r ChargeCreateRequest) LogValue() slog.Value {
	attrs := []slog.Attr{
		slog.String("amount", r.Amount.String()),
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

// Bool returns a pointer to v, for ChargeCreateRequest.Capture.
func Bool(v bool) *bool { return &v }

// chargeRef names a charge: its UUID and, optionally, its wallet's.
type chargeRef struct {
	ChargeUUID string `json:"charge_uuid"`
	WalletUUID string `json:"wallet_uuid,omitempty"`
}

func (r chargeRef) validate() error {
	if strings.TrimSpace(r.ChargeUUID) == "" {
		return &payonce.ValidationError{Field: "charge_uuid", Reason: "required", Err: payonce.ErrInvalidRequest}
	}
	return nil
}

// CaptureRequest is the body of a capture. A zero Amount captures the whole
// pre-authorised amount; a smaller one captures part of it.
type CaptureRequest struct {
	ChargeUUID string         `json:"charge_uuid"`
	WalletUUID string         `json:"wallet_uuid,omitempty"`
	Amount     payonce.Amount `json:"amount,omitzero"`
}

// RefundRequest is the body of a refund. A zero Amount refunds what remains;
// a smaller one refunds part of it (at most what remains).
type RefundRequest struct {
	ChargeUUID string         `json:"charge_uuid"`
	WalletUUID string         `json:"wallet_uuid,omitempty"`
	Amount     payonce.Amount `json:"amount,omitzero"`
	Reason     string         `json:"reason,omitempty"`
}

// CancelRequest is the body of a cancel; it works only before capture or
// settlement.
type CancelRequest struct {
	ChargeUUID string `json:"charge_uuid"`
	WalletUUID string `json:"wallet_uuid,omitempty"`
	Reason     string `json:"reason,omitempty"`
}

// Create creates a charge: POST /api/v1/bank/wallet/charge/. The request
// is checked before any byte is sent (amount above zero, currency, card
// number by Luhn, expiry against the client's clock (payoncetest.ClientClock in tests),
// CVV). A declined card or a failed charge is a
// *ChargeError (errors.Is ErrCardDeclined or
// ErrChargeFailed) that still gives the charge.
func (s *ChargesService) Create(ctx context.Context, req *ChargeCreateRequest, opts ...payonce.CallOption) (*Charge, error) {
	ch := new(Charge)
	meta, err := s.c.do(ctx, &payonce.Request{
		Operation: "charges.create", Method: http.MethodPost, Path: PathCharges, Route: PathCharges,
		Body: req, Keyed: true, Validate: func() error { return req.validate(s.c.view.Now(), s.c.view.BaseURL) },
		Summary: req.Summary(),
	}, (*createdCharge)(ch), opts)
	if err != nil {
		return s.lookUpUnknown(ctx, req, meta, err)
	}
	ch.Meta = meta
	return ch, nil
}

// Get reads a charge: GET /api/v1/bank/wallet/charge/?charge_uuid=..&wallet_uuid=..
// (walletUUID may be "", though A55 documents it as required). A GET
// carries no key and is retried freely; opts are the per-call options
// (a read takes the same shape as coinepay's Cards.Info).
func (s *ChargesService) Get(ctx context.Context, chargeUUID, walletUUID string, opts ...payonce.CallOption) (*Charge, error) {
	ref := chargeRef{ChargeUUID: chargeUUID, WalletUUID: walletUUID}
	q := url.Values{"charge_uuid": {chargeUUID}}
	if walletUUID != "" {
		q.Set("wallet_uuid", walletUUID)
	}
	ch := new(Charge)
	meta, err := s.c.do(ctx, &payonce.Request{
		Operation: "charges.get", Method: http.MethodGet, Path: PathCharges, Route: PathCharges, Query: q,
		Validate: ref.validate,
	}, ch, opts)
	if err != nil {
		return nil, err
	}
	ch.Meta = meta
	return ch, nil
}

// Capture captures a pre-authorised charge (created with Capture false):
// POST /api/v1/bank/wallet/charge/capture/. Capturing a charge already
// captured or canceled is ErrInvalidState.
func (s *ChargesService) Capture(ctx context.Context, req *CaptureRequest, opts ...payonce.CallOption) (*Charge, error) {
	return s.post(ctx, "charges.capture", PathChargeCapture, req, func() error {
		if req == nil {
			return errNilRequest
		}
		return chargeRef{ChargeUUID: req.ChargeUUID}.validate()
	}, opts)
}

// Refund refunds a captured charge, wholly or in part:
// POST /api/v1/bank/wallet/charge/refund/. Refunding more than remains, or
// a charge not captured, is ErrInvalidState.
func (s *ChargesService) Refund(ctx context.Context, req *RefundRequest, opts ...payonce.CallOption) (*Charge, error) {
	return s.post(ctx, "charges.refund", PathChargeRefund, req, func() error {
		if req == nil {
			return errNilRequest
		}
		return chargeRef{ChargeUUID: req.ChargeUUID}.validate()
	}, opts)
}

// Cancel cancels a charge not yet captured or settled:
// POST /api/v1/bank/wallet/charge/cancel/; the answer's status is
// StatusCanceled. Canceling a captured or canceled charge is
// ErrInvalidState.
func (s *ChargesService) Cancel(ctx context.Context, req *CancelRequest, opts ...payonce.CallOption) (*Charge, error) {
	return s.post(ctx, "charges.cancel", PathChargeCancel, req, func() error {
		if req == nil {
			return errNilRequest
		}
		return chargeRef{ChargeUUID: req.ChargeUUID}.validate()
	}, opts)
}

var errNilRequest = &payonce.ValidationError{Reason: "nil request", Err: payonce.ErrInvalidRequest}

func (s *ChargesService) post(ctx context.Context, op, path string, body any, validate func() error, opts []payonce.CallOption) (*Charge, error) {
	ch := new(Charge)
	meta, err := s.c.do(ctx, &payonce.Request{
		Operation: op, Method: http.MethodPost, Path: path, Route: path, Body: body, Keyed: true, Validate: validate,
	}, ch, opts)
	if err != nil {
		return nil, err
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
