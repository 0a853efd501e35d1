package a55test

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/internal/fake/a55fake"
	"github.com/payonce/payonce/payoncetest"
)

// Webhooks from the fake. A charge created with a webhook_url gets a POST
// on every change (created, captured, canceled, refunded in part or in
// full, and each event of its life: Trigger, PayPix, Complete3DS, ...,
// or the fake clock's expiries), signed like A55's: X-Webhook-Timestamp (Unix seconds on the fake clock)
// and X-Webhook-Signature = hex(HMAC-SHA256(secret, timestamp + "." +
// body)), so a55.NewWebhookVerifier(...).Parse accepts it. Delivery is at
// least once: a 5xx answer, a timeout or a refused connection is retried
// after 1 min, 5 min, 30 min, 2 h, 6 h and 24 h on the fake clock (advance
// it and call DeliverDueWebhooks); a 2xx ends the delivery, any other
// answer fails it. Only loopback receivers (127.0.0.0/8, ::1, localhost)
// are called unless WithWebhookAnyHost is given, so the fake cannot be
// used to reach other hosts. The fake never delivers to itself: a
// webhook_url under any fake's admin API (/_fakepay/...) is blocked, and so
// is one on the fake's own listener (by address or as localhost) unless
// WithWebhookSelfDelivery is given; a delivery that comes back to it by
// another way is refused (403). One charge gets at most
// MaxWebhooksPerCharge deliveries, and at most 1,024 deliveries wait at
// once: later events are recorded as dropped, never attempted.

// WebhookState is where a webhook delivery stands.
type WebhookState string

// Webhook delivery states.
const (
	// WebhookPending waits for its next attempt (WebhookDelivery.NextAttempt).
	WebhookPending WebhookState = a55fake.WebhookPending
	// WebhookDelivered: the receiver answered 2xx.
	WebhookDelivered WebhookState = a55fake.WebhookDelivered
	// WebhookFailed: the receiver answered 4xx (or 3xx: redirects are not
	// followed), or all seven attempts failed.
	WebhookFailed WebhookState = a55fake.WebhookFailed
	// WebhookBlocked: the URL is not a loopback http(s) URL and
	// WithWebhookAnyHost was not given, or it is the fake itself (its
	// admin API, or its listener without WithWebhookSelfDelivery); it was
	// never contacted.
	WebhookBlocked WebhookState = a55fake.WebhookBlocked
	// WebhookDropped: the queue of waiting deliveries was full, or the
	// charge already had MaxWebhooksPerCharge deliveries; never attempted.
	WebhookDropped WebhookState = a55fake.WebhookDropped
)

// WebhookAttempt is one attempt of a delivery.
type WebhookAttempt struct {
	At         time.Time `json:"at"`                    // on the fake clock
	StatusCode int       `json:"status_code,omitempty"` // the receiver's answer, 0 when none
	Error      string    `json:"error,omitempty"`       // "timeout", "connection refused", "connection failed", "blocked"
}

// WebhookDelivery is one charge event and its delivery to the charge's
// webhook_url.
type WebhookDelivery struct {
	ID          string           `json:"id"`
	ChargeUUID  string           `json:"charge_uuid"`
	Status      string           `json:"status"` // the charge status the event reports
	URL         string           `json:"url"`    // scheme, host and path: never the query or user info
	State       WebhookState     `json:"state"`
	Attempts    []WebhookAttempt `json:"attempts"`
	NextAttempt time.Time        `json:"next_attempt,omitzero"` // when pending, on the fake clock
	Body        json.RawMessage  `json:"body"`                  // the signed JSON body, the same on every attempt
}

// String prints the delivery with %v and %+v field by field, its body as
// text rather than a list of byte values.
func (d WebhookDelivery) String() string {
	return fmt.Sprintf("{ID:%s ChargeUUID:%s Status:%s URL:%s State:%s Attempts:%+v NextAttempt:%s Body:%s}",
		d.ID, d.ChargeUUID, d.Status, d.URL, d.State, d.Attempts, d.NextAttempt.Format(time.RFC3339Nano), d.Body)
}

func webhookDeliveries(in []a55fake.WebhookDelivery) []WebhookDelivery {
	out := make([]WebhookDelivery, len(in))
	for i, d := range in {
		out[i] = webhookDelivery(d)
	}
	return out
}

func webhookDelivery(d a55fake.WebhookDelivery) WebhookDelivery {
	atts := make([]WebhookAttempt, len(d.Attempts))
	for i, a := range d.Attempts {
		atts[i] = WebhookAttempt(a) // the same fields: the compiler keeps them in step
	}
	return WebhookDelivery{ID: d.ID, ChargeUUID: d.ChargeUUID, Status: d.Status, URL: d.URL, State: WebhookState(d.State),
		Attempts: atts, NextAttempt: d.NextAttempt, Body: d.Body}
}

// DefaultWebhookSecret signs the fake's webhooks unless WithWebhookSecret
// sets another secret.
const DefaultWebhookSecret = a55fake.DefaultWebhookSecret

// WebhookAdminPath is the admin endpoint of the fake's webhooks: GET lists
// the deliveries, POST .../resend {"charge_uuid":..} sends one again,
// POST .../deliver makes the due attempts now.
const WebhookAdminPath = a55fake.WebhookAdminPrefix

// WithWebhookSecret sets the secret that signs the fake's webhooks
// (default DefaultWebhookSecret).
func WithWebhookSecret(secret string) payoncetest.Option {
	return option(func(c *config) error { c.fake.WebhookSecret = secret; return nil })
}

// WithWebhookTimeout sets how long one delivery attempt may take before it
// counts as a timeout and is retried (default 30 s). A timeout of 0 or
// less is refused.
func WithWebhookTimeout(d time.Duration) payoncetest.Option {
	return option(func(c *config) error {
		c.fake.WebhookTimeout = d
		if d <= 0 {
			return refuse(fmt.Sprintf("WithWebhookTimeout(%v)", d), "want a timeout above 0")
		}
		return nil
	})
}

// MaxWebhooksPerCharge is how many deliveries one charge gets (its status
// changes and resends together); later ones are WebhookDropped.
const MaxWebhooksPerCharge = a55fake.MaxWebhooksPerCharge

// WithWebhookSelfDelivery lets the fake deliver webhooks to its own
// listener, for a test of what the fake answers its own deliveries. Off
// by default: a charge could otherwise drive the fake itself. The admin
// API (/_fakepay/...) is never a target.
func WithWebhookSelfDelivery() payoncetest.Option {
	return option(func(c *config) error { c.fake.WebhookAllowSelf = true; return nil })
}

// WithWebhookAnyHost lets the fake deliver webhooks to non-loopback hosts.
// Off by default: a fake that posts wherever a request tells it to would
// be a server-side request forgery tool.
func WithWebhookAnyHost() payoncetest.Option {
	return option(func(c *config) error { c.fake.WebhookAllowAnyHost = true; return nil })
}

// WebhookSecret returns the secret that signs the fake's webhooks.
func (s *Server) WebhookSecret() string { return s.fake.WebhookSecret() }

// WebhookVerifier returns an a55.WebhookVerifier for the fake's secret that
// reads the time from the fake's clock, so deliveries made after the clock
// was advanced verify too.
func (s *Server) WebhookVerifier() (*a55.WebhookVerifier, error) {
	return a55.NewWebhookVerifier(s.WebhookSecret(), s.Clock().Now)
}

// WebhookDeliveries returns every webhook delivery, oldest first (the last
// 10,000).
func (s *Server) WebhookDeliveries() []WebhookDelivery {
	return webhookDeliveries(s.fake.WebhookDeliveries(""))
}

// WebhookDeliveriesFor returns the webhook deliveries of one charge, oldest
// first.
func (s *Server) WebhookDeliveriesFor(chargeUUID string) []WebhookDelivery {
	return webhookDeliveries(s.fake.WebhookDeliveries(chargeUUID))
}

// DeliverDueWebhooks makes every delivery attempt due on the fake clock
// and returns how many it made; when it returns they are done. The fake
// makes them on its own within milliseconds too; a test calls this to
// know they happened.
func (s *Server) DeliverDueWebhooks() int { return s.fake.DeliverDueWebhooks() }

// ResendWebhook sends the charge's current status to its webhook_url again,
// as a new delivery with its own retries.
func (s *Server) ResendWebhook(chargeUUID string) (WebhookDelivery, error) {
	d, err := s.fake.ResendWebhook(chargeUUID)
	return webhookDelivery(d), err
}
