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
// once (retried at 0, 1 min, 5 min, 30 min, 2 h, 6 h and 24 h), so the same
// event can arrive more than once: deduplicate on Key (for example a
// unique index in the table that records them) and answer 2xx to a
// duplicate without acting on it again. A WebhookReplayGuard also tells a
// delivery replayed inside the signature's window.
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
	Event       string         `json:"event,omitempty"`
	Raw         redact.RawJSON `json:"-"` // the whole verified body; printed redacted

	// delivery identifies the signed delivery (its timestamp and
	// signature) for WebhookReplayGuard; set by Parse, never printed.
	delivery webhookDelivery
}

// Key is the event's identity for deduplication: its charge and status
// (a documented status in A55's spelling, whatever case it came in). A
// redelivery of one status change has the same Key.
func (e *WebhookEvent) Key() string {
	s := e.Status.canonical()
	if s == "" {
		s = e.Status
	}
	return e.ChargeUUID + "/" + string(s)
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
