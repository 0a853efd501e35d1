package a55

import (
	"github.com/payonce/payonce/redact"

	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/redactprint"
)

// Webhook headers of A55's signed webhook form (https://docs.a55.tech,
// Webhooks): X-Webhook-Signature is the lowercase hex
// HMAC-SHA256(secret, timestamp + "." + raw body) and X-Webhook-Timestamp
// the Unix time in seconds when it was signed.
const (
	HeaderWebhookSignature = "X-Webhook-Signature"
	HeaderWebhookTimestamp = "X-Webhook-Timestamp"
)

// WebhookTolerance is how far a webhook's timestamp may be from the
// receiver's clock, either way.
const WebhookTolerance = 5 * time.Minute

// MaxWebhookBody is the largest webhook body WebhookVerifier.Parse reads.
const MaxWebhookBody = 1 << 20

// Webhook verification errors; VerifyWebhook's errors wrap one of them.
var (
	// ErrWebhookSignature: the signature header is missing or wrong.
	ErrWebhookSignature = errors.New("a55: webhook signature invalid")
	// ErrWebhookTimestamp: the timestamp header is missing, unreadable or
	// outside the tolerance (a replayed or delayed delivery).
	ErrWebhookTimestamp = errors.New("a55: webhook timestamp outside tolerance")
)

// WebhookEvent is a charge notification. A55 delivers webhooks at least
// once, out of order, with no event ID: Key is the event's identity, the
// one a WebhookReceiver records in its payonce.Inbox, and ChargeState
// orders events of one charge (docs/a55.md, "Webhooks": what a55 relies
// on and why).
type WebhookEvent struct {
	ChargeUUID string `json:"charge_uuid"`
	WalletUUID string `json:"wallet_uuid,omitempty"`
	// Description is the charge's description, the order reference the
	// merchant gave Charges.Create, read when a delivery has it: neither
	// payload A55's charge-webhook page documents does, nor the payonce
	// fake's, so map by the charge's webhook URL too (docs/a55.md).
	Description string         `json:"description,omitempty"`
	Status      Status         `json:"status"`
	Amount      payonce.Amount `json:"amount,omitzero"`
	// TransactionReference is the acquirer's (or the client's) reference
	// of the transaction, when the delivery has it.
	TransactionReference string `json:"transaction_reference,omitempty"`
	// RefundAmount is what the refund this event reports returned (or,
	// in status refund_error, failed to return); zero when it reports
	// none. A partial refund leaves the charge in its status (confirmed,
	// paid) and is told by it.
	RefundAmount payonce.Amount `json:"refund_amount,omitzero"`
	// UpdatedAt is when the charge's status last changed, when the
	// delivery says so in a form a55 reads (RFC 3339); zero otherwise.
	UpdatedAt time.Time      `json:"-"`
	Event     string         `json:"event,omitempty"`
	Raw       redact.RawJSON `json:"-"` // the whole verified body; printed redacted

	// updatedAt is updated_at as sent, trimmed: Key uses it as sent
	// when it is no time a55 reads.
	updatedAt string
	// delivery identifies the signed delivery (its timestamp and
	// signature) for WebhookReplayGuard; set by Parse, never printed.
	delivery webhookDelivery
}

// UnmarshalJSON decodes a webhook body: the fields above, updated_at
// whatever its form (UpdatedAt stays zero when a55 cannot read it).
func (e *WebhookEvent) UnmarshalJSON(b []byte) error {
	type plain WebhookEvent
	var v struct {
		*plain
		UpdatedAt json.RawMessage `json:"updated_at"`
	}
	v.plain = (*plain)(e)
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	e.UpdatedAt, e.updatedAt = time.Time{}, ""
	var s string
	if len(v.UpdatedAt) == 0 || string(v.UpdatedAt) == "null" {
		return nil
	}
	if json.Unmarshal(v.UpdatedAt, &s) != nil {
		s = string(v.UpdatedAt) // a number or another form: kept as sent
	}
	e.updatedAt = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339Nano, e.updatedAt); err == nil {
		e.UpdatedAt = t
	}
	return nil
}

// Key is the event's identity, the same for every delivery of one event
// and different for two events (docs/a55.md, "Event identity"): the
// charge and its status (in A55's spelling whatever the case it came in),
// and, for an event that reports a refund, the refunded amount and when
// the status last changed, so that a second partial refund is its own
// event:
//
//	fe5e…5804/confirmed
//	fe5e…5804/confirmed/refund/10.00/2030-01-02T03:04:05Z
func (e *WebhookEvent) Key() string {
	s := e.Status.canonical()
	if s == "" {
		s = Status(strings.TrimSpace(string(e.Status)))
	}
	k := e.ChargeUUID + "/" + string(s)
	if e.RefundAmount.IsZero() {
		return k
	}
	k += "/refund/" + e.RefundAmount.String()
	switch {
	case !e.UpdatedAt.IsZero():
		k += "/" + e.UpdatedAt.UTC().Format(time.RFC3339Nano)
	case e.updatedAt != "":
		k += "/" + redact.Cut(e.updatedAt, maxKeyTime) // an inbox's event ID holds 255 bytes
	}
	return k
}

// maxKeyTime bounds the updated_at Key carries as sent.
const maxKeyTime = 64

// State is what the event says of its charge, for ChargeState.After.
func (e *WebhookEvent) State() ChargeState {
	return ChargeState{Status: e.Status, UpdatedAt: e.UpdatedAt}
}

// WebhookVerifier checks A55 webhook signatures. Safe for concurrent use.
type WebhookVerifier struct {
	secret    func() []byte // a closure: fmt prints a func as an address under every verb
	tolerance time.Duration
	now       func() time.Time
}

// NewWebhookVerifier returns a verifier for secret with WebhookTolerance,
// reading the time from now (time.Now when nil).
func NewWebhookVerifier(secret string, now func() time.Time) (*WebhookVerifier, error) {
	if secret == "" {
		return nil, fmt.Errorf("%w: a55: empty webhook secret", payonce.ErrInvalidConfig)
	}
	if now == nil {
		now = time.Now
	}
	key := []byte(secret)
	return &WebhookVerifier{secret: func() []byte { return key }, tolerance: WebhookTolerance, now: now}, nil
}

// String hides the secret.
func (v *WebhookVerifier) String() string { return "a55.WebhookVerifier{secret: [REDACTED]}" }

// GoString hides the secret.
func (v *WebhookVerifier) GoString() string { return v.String() }

// Verify checks the signature headers of a webhook against its raw body,
// comparing in constant time. It returns nil or an error wrapping
// ErrWebhookSignature or ErrWebhookTimestamp.
func (v *WebhookVerifier) Verify(header http.Header, body []byte) error {
	ts := strings.TrimSpace(header.Get(HeaderWebhookTimestamp))
	sig := strings.TrimSpace(header.Get(HeaderWebhookSignature))
	if sig == "" {
		return fmt.Errorf("%w: missing %s", ErrWebhookSignature, HeaderWebhookSignature)
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: missing or unreadable %s", ErrWebhookTimestamp, HeaderWebhookTimestamp)
	}
	// Check the signature first: an unsigned request learns nothing about
	// the receiver's clock.
	want := webhookMAC(v.secret(), ts, body)
	got, err := hex.DecodeString(strings.ToLower(sig))
	if err != nil || !hmac.Equal(want, got) {
		return ErrWebhookSignature
	}
	if d := v.now().Sub(time.Unix(sec, 0)); d > v.tolerance || d < -v.tolerance {
		return fmt.Errorf("%w: signed %s away from now", ErrWebhookTimestamp, d.Round(time.Second))
	}
	return nil
}

// Parse reads r's body (at most MaxWebhookBody bytes), verifies it and
// decodes the event. Unknown fields are ignored; Raw keeps the whole body.
func (v *WebhookVerifier) Parse(r *http.Request) (*WebhookEvent, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxWebhookBody+1))
	if err != nil {
		return nil, fmt.Errorf("a55: read webhook: %w", err)
	}
	if len(body) > MaxWebhookBody {
		return nil, fmt.Errorf("a55: webhook body over %d bytes", MaxWebhookBody)
	}
	if err := v.Verify(r.Header, body); err != nil {
		return nil, err
	}
	ev := &WebhookEvent{Raw: body, delivery: deliveryOf(r.Header)}
	if err := json.Unmarshal(body, ev); err != nil {
		// A decoder's error quotes the value it could not read.
		return nil, errors.New("a55: decode webhook: " + redact.String(err.Error()))
	}
	return ev, nil
}

// VerifyWebhook checks one webhook with WebhookTolerance at now.
func VerifyWebhook(secret string, header http.Header, body []byte, now time.Time) error {
	v, err := NewWebhookVerifier(secret, func() time.Time { return now })
	if err != nil {
		return err
	}
	return v.Verify(header, body)
}

// SignWebhook returns the two signature headers A55 would send with body
// signed at ts. It is meant for tests of webhook receivers.
func SignWebhook(secret string, ts time.Time, body []byte) http.Header {
	t := strconv.FormatInt(ts.Unix(), 10)
	h := http.Header{}
	h.Set(HeaderWebhookTimestamp, t)
	h.Set(HeaderWebhookSignature, hex.EncodeToString(webhookMAC([]byte(secret), t, body)))
	return h
}

// NewSignedWebhookRequest builds a POST to url carrying body signed at ts,
// as A55 would deliver it. It is meant for tests of webhook receivers.
func NewSignedWebhookRequest(url, secret string, ts time.Time, body []byte) (*http.Request, error) {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(string(body)))
	if err != nil {
		return nil, err
	}
	for k, vs := range SignWebhook(secret, ts, body) {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", "application/json")
	return req, nil
}

func webhookMAC(secret []byte, ts string, body []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// webhookEventFields is WebhookEvent without its printing methods.
type webhookEventFields WebhookEvent

// Format prints the event as Charge.Format prints a charge: every text of
// the body redacted, under every verb.
// The delivery's signature is left out.
func (e WebhookEvent) Format(f fmt.State, verb rune) {
	e.delivery = webhookDelivery{}
	redactprint.Format(f, verb, webhookEventFields(e), "a55.WebhookEvent")
}

// LogValue is the slog form, texts redacted, the signature left out.
func (e WebhookEvent) LogValue() slog.Value {
	e.delivery = webhookDelivery{}
	return redactprint.LogValue(webhookEventFields(e))
}
