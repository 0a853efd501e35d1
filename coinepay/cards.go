package coinepay

import (
	"github.com/payonce/payonce/redact"

	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/redactprint"
)

// CardsService issues, funds and reads cards. Get it from Client.Cards.
type CardsService struct {
	client *Client
}

// Card is a card as the OpenAPI describes it. Fields the client does not
// model are kept, undecoded, in Raw.
type Card struct {
	CardID    string         `json:"card_id"`
	HeaderID  string         `json:"header_id,omitempty"`
	PackageID string         `json:"package_id,omitempty"`
	Status    string         `json:"status,omitempty"` // e.g. "active"
	Currency  string         `json:"currency,omitempty"`
	Balance   payonce.Amount `json:"balance"` // the card's own balance
	// CreatedAt is when the card was issued (zero when the server sent no
	// RFC 3339 time).
	CreatedAt time.Time `json:"-"`
	// IdempotencyKey is the key of the apply that issued the card. Only
	// the payonce fake reports it (an extension: Coinepay documents no
	// such field); it is empty from Coinepay.
	IdempotencyKey string `json:"idempotency_key,omitempty"`
	// Raw is the card object exactly as the server sent it (printed redacted).
	Raw redact.RawJSON `json:"-"`
}

// UnmarshalJSON decodes a card and keeps the raw object in Raw. A
// created_at that is not an RFC 3339 time is left to Raw.
func (c *Card) UnmarshalJSON(b []byte) error {
	var w cardWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*c = w.card(b)
	return nil
}

// CardResult is a card read by Info, with the metadata of the call in
// Meta (res.Meta.RequestID, res.Meta.Attempts).
type CardResult struct {
	Card
	// Meta describes the call: attempts, status, request ID, headers.
	Meta payonce.Meta
}

// ApplyResult is the card Apply issued, what it cost, and the metadata of
// the call in Meta: the idempotency key sent (res.Meta.Key), whether the
// answer was a replay of a stored one (res.Meta.Replayed,
// X-Idempotent-Replay: true; the card is the one the first attempt
// issued), the attempts and the request ID.
type ApplyResult struct {
	Card
	Fee            payonce.Amount // the package fee charged to the API key's balance
	AccountBalance payonce.Amount // the API key's balance after the fee
	// Meta describes the call: key, replay, attempts, status, request ID.
	Meta payonce.Meta
}

// ApplyRequest is the body of card/apply.
type ApplyRequest struct {
	HeaderID  string `json:"header_id"`  // the card header (BIN range) to issue under
	PackageID string `json:"package_id"` // the fee package; its fee is charged to the balance
}

// Validate reports a nil request or a field the server would refuse, as a
// *payonce.ValidationError wrapping payonce.ErrInvalidRequest.
func (r *ApplyRequest) Validate() error {
	if r == nil {
		return errNilRequest
	}
	if err := requireID("header_id", r.HeaderID); err != nil {
		return err
	}
	return requireID("package_id", r.PackageID)
}

// RechargeRequest is the body of card/recharge.
type RechargeRequest struct {
	CardID string         `json:"card_id"`
	Amount payonce.Amount `json:"amount"` // sent as a decimal string, "100.00"
}

// Validate reports a nil request or a field the server would refuse: an
// empty card ID (payonce.ErrInvalidRequest) or an amount that is not above
// zero (payonce.ErrInvalidAmount).
func (r *RechargeRequest) Validate() error {
	if r == nil {
		return errNilRequest
	}
	if err := requireID("card_id", r.CardID); err != nil {
		return err
	}
	if r.Amount.Minor() <= 0 {
		return &payonce.ValidationError{Field: "amount", Reason: "must be greater than 0.00", Err: payonce.ErrInvalidAmount}
	}
	return nil
}

// Recharge is the outcome of card/recharge.
type Recharge struct {
	RechargeID     string         `json:"recharge_id,omitempty"`
	CardID         string         `json:"card_id"`
	Amount         payonce.Amount `json:"amount"`
	CardBalance    payonce.Amount `json:"card_balance"`    // the card's balance after the recharge
	AccountBalance payonce.Amount `json:"account_balance"` // the API key's balance after the recharge
	// Raw is the data object exactly as the server sent it (printed redacted).
	Raw redact.RawJSON `json:"-"`
}

// UnmarshalJSON decodes a recharge and keeps the raw object in Raw.
func (r *Recharge) UnmarshalJSON(b []byte) error {
	type plain Recharge
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*r = Recharge(p)
	r.Raw = append(redact.RawJSON(nil), b...)
	return nil
}

// RechargeResult is a recharge with the metadata of its call in Meta
// (res.Meta.Key, res.Meta.Replayed).
type RechargeResult struct {
	Recharge
	// Meta describes the call: key, replay, attempts, status, request ID.
	Meta payonce.Meta
}

// Apply issues a card and charges its package fee to the API key's
// balance. It is a business operation: one Idempotency-Key (from
// payonce.WithKey, else a new UUID v4) is sent on every attempt, so however often the request is retried
// at most one card is issued. An answer replayed from the server's store
// has Meta.Replayed set. A nil req is payonce.ErrInvalidRequest, refused
// before anything is sent.
//
// A job queue that may run the same job again in a new process passes
// payonce.WithKey(k), k from payonce.NewKey(job.CreatedAt, "openapi:apply",
// taskID): the key is aged from the job, so a redelivery past the 24 h
// window is payonce.ErrKeyExpired rather than a second card. On failure
// payonce.KeyOf(err) carries the key and its age to resume the same
// operation with.
func (s *CardsService) Apply(ctx context.Context, req *ApplyRequest, opts ...payonce.CallOption) (*ApplyResult, error) {
	var out applyData
	meta, err := s.client.core.Do(ctx, &payonce.Request{
		Operation: "cards.apply",
		Method:    http.MethodPost,
		Path:      PathCardApply,
		Route:     PathCardApply,
		Body:      req,
		Keyed:     true,
		Validate:  req.Validate,
		Summary:   req.summary(),
	}, &out, opts...)
	if err != nil {
		return nil, err
	}
	return &ApplyResult{Card: out.Card, Fee: out.Cost.Fee, AccountBalance: out.Cost.AccountBalance, Meta: meta}, nil
}

// applyCost is the part of card/apply's data that is not the card.
type applyCost struct {
	Fee            payonce.Amount `json:"fee"`
	AccountBalance payonce.Amount `json:"account_balance"`
}

// applyData is card/apply's data: the card, Raw the whole data object,
// and its cost.
type applyData struct {
	Card
	Cost applyCost
}

// UnmarshalJSON decodes the data once, as the card and its cost.
func (d *applyData) UnmarshalJSON(b []byte) error {
	var w applyWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	d.Card, d.Cost = w.card(b), w.applyCost
	return nil
}

// Recharge moves req.Amount from the API key's balance onto a card. Like
// Apply it is a business operation with one key for all attempts: two
// recharges of the same amount are two operations only with two keys.
// ErrInsufficientBalance is not stored by the server: after a
// top-up the same key and body succeed.
func (s *CardsService) Recharge(ctx context.Context, req *RechargeRequest, opts ...payonce.CallOption) (*RechargeResult, error) {
	var rc Recharge
	meta, err := s.client.core.Do(ctx, &payonce.Request{
		Operation: "cards.recharge",
		Method:    http.MethodPost,
		Path:      PathCardRecharge,
		Route:     PathCardRecharge,
		Body:      req,
		Keyed:     true,
		Validate:  req.Validate,
	}, &rc, opts...)
	if err != nil {
		return nil, err
	}
	return &RechargeResult{Recharge: rc, Meta: meta}, nil
}

// Info reads one card. It sends no Idempotency-Key (reads need none).
func (s *CardsService) Info(ctx context.Context, cardID string, opts ...payonce.CallOption) (*CardResult, error) {
	var card Card
	meta, err := s.client.core.Do(ctx, &payonce.Request{
		Operation: "cards.info",
		Method:    http.MethodGet,
		Path:      PathCardInfo,
		Route:     PathCardInfo,
		Query:     url.Values{"card_id": {cardID}},
		Validate:  func() error { return requireID("card_id", cardID) },
	}, &card, opts...)
	if err != nil {
		return nil, err
	}
	return &CardResult{Card: card, Meta: meta}, nil
}

// errNilRequest refuses a nil request before anything is sent.
var errNilRequest = &payonce.ValidationError{Reason: "nil request", Err: payonce.ErrInvalidRequest}

func requireID(field, v string) error {
	if strings.TrimSpace(v) == "" {
		return &payonce.ValidationError{Field: field, Reason: "required", Err: payonce.ErrInvalidRequest}
	}
	return nil
}

// Printed results. Each result type prints as fmt prints a struct (%v,
// %+v, %#v) with every text the server sent redacted
// (redact.String): an ID, a status or a currency a server filled
// with card data, a token or a query string never reaches a printed line.
// %q quotes the %v form; any other verb prints it. The fields keep what
// the server sent. LogValue is the slog form: the fields by their JSON
// names, texts redacted, and the Meta. A type that embeds another has its
// own methods, so that a printed CardResult still shows its Meta.

type (
	cardFields           Card
	cardResultFields     CardResult
	applyResultFields    ApplyResult
	rechargeFields       Recharge
	rechargeResultFields RechargeResult
	cardPageFields       CardPage
)

// Format prints the card, texts redacted.
func (c Card) Format(f fmt.State, verb rune) {
	redactprint.Format(f, verb, cardFields(c), "coinepay.Card")
}

// LogValue is the slog form of the card, texts redacted.
func (c Card) LogValue() slog.Value { return redactprint.LogValue(cardFields(c)) }

// Format prints the result, texts redacted.
func (r CardResult) Format(f fmt.State, verb rune) {
	redactprint.Format(f, verb, cardResultFields(r), "coinepay.CardResult")
}

// LogValue is the slog form of the result, texts redacted.
func (r CardResult) LogValue() slog.Value { return redactprint.LogValue(cardResultFields(r)) }

// Format prints the result, texts redacted.
func (r ApplyResult) Format(f fmt.State, verb rune) {
	redactprint.Format(f, verb, applyResultFields(r), "coinepay.ApplyResult")
}

// LogValue is the slog form of the result, texts redacted.
func (r ApplyResult) LogValue() slog.Value { return redactprint.LogValue(applyResultFields(r)) }

// Format prints the recharge, texts redacted.
func (r Recharge) Format(f fmt.State, verb rune) {
	redactprint.Format(f, verb, rechargeFields(r), "coinepay.Recharge")
}

// LogValue is the slog form of the recharge, texts redacted.
func (r Recharge) LogValue() slog.Value { return redactprint.LogValue(rechargeFields(r)) }

// Format prints the result, texts redacted.
func (r RechargeResult) Format(f fmt.State, verb rune) {
	redactprint.Format(f, verb, rechargeResultFields(r), "coinepay.RechargeResult")
}

// LogValue is the slog form of the result, texts redacted.
func (r RechargeResult) LogValue() slog.Value { return redactprint.LogValue(rechargeResultFields(r)) }

// Format prints the page, texts redacted.
func (p CardPage) Format(f fmt.State, verb rune) {
	redactprint.Format(f, verb, cardPageFields(p), "coinepay.CardPage")
}

// LogValue is the slog form of the page, texts redacted.
func (p CardPage) LogValue() slog.Value { return redactprint.LogValue(cardPageFields(p)) }
