package a55fake

import (
	"errors"

	"github.com/payonce/payonce/internal/fake/fakeserver"
)

// WebhookAdminPrefix is where the A55 fake's admin calls live, under the
// engine's admin prefix.
const WebhookAdminPrefix = fakeserver.AdminPrefix + "a55/webhooks"

// Errors of ResendWebhook.
var (
	// ErrUnknownCharge: no charge has the UUID.
	ErrUnknownCharge = errors.New("unknown charge")
	// ErrNoWebhookURL: the charge was created without a webhook_url.
	ErrNoWebhookURL = errors.New("charge has no webhook_url")
)

// WebhookSecret returns the secret that signs the fake's webhooks.
func (f *Fake) WebhookSecret() string { return string(f.hooks.secret()) }

// WebhookDeliveries returns copies of the recorded webhook deliveries,
// oldest first; those of chargeUUID only when it is not empty.
func (f *Fake) WebhookDeliveries(chargeUUID string) []WebhookDelivery {
	return f.hooks.deliveries(chargeUUID)
}

// DeliverDueWebhooks ends the charges whose time is up on the fake clock
// (their webhooks included), then makes every delivery attempt due now
// and returns how many it made. The background goroutines do the same
// within milliseconds; a test calls this to know the attempts are done.
func (f *Fake) DeliverDueWebhooks() int {
	f.sweep()
	return f.hooks.deliverDue()
}

// ResendWebhook records a new event for the charge's current status and
// schedules its first attempt at once, as a merchant asking A55 to send a
// webhook again would.
func (f *Fake) ResendWebhook(chargeUUID string) (WebhookDelivery, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.charges[chargeUUID]
	switch {
	case !ok:
		return WebhookDelivery{}, ErrUnknownCharge
	case c.WebhookURL == "":
		return WebhookDelivery{}, ErrNoWebhookURL
	}
	d := f.hooks.enqueue(c, event{})
	f.hooks.mu.Lock()
	defer f.hooks.mu.Unlock()
	return d.clone(), nil
}
