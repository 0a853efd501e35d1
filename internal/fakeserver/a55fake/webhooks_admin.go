package a55fake

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/payonce/payonce/internal/fakeserver"
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

// DeliverDueWebhooks makes every delivery attempt due on the fake clock now
// and returns how many it made. The background goroutine does the same
// within milliseconds; a test calls this to know the attempts are done.
func (f *Fake) DeliverDueWebhooks() int { return f.hooks.deliverDue() }

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
	d := f.hooks.enqueue(c)
	f.hooks.mu.Lock()
	defer f.hooks.mu.Unlock()
	return d.clone(), nil
}

// AdminHandler serves the A55 fake's admin calls and passes every other
// request to next (the engine's admin API):
//
//	GET  /_fakepay/a55/webhooks[?charge_uuid=..]  {"deliveries":[...]}
//	POST /_fakepay/a55/webhooks/resend            {"charge_uuid":".."} -> {"delivery":{...}}
//	POST /_fakepay/a55/webhooks/deliver           make the due attempts now -> {"attempted":n}
//
// A request carrying the fake's own OriginHeader (one of its webhook
// deliveries) is refused with 403, whatever Config says: neither these
// calls nor next are ever driven by the fake's own deliveries.
func (f *Fake) AdminHandler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f.hooks.fromSelf(r) {
			f.refuseSelf(w)
			return
		}
		rest, ok := strings.CutPrefix(strings.TrimSuffix(r.URL.Path, "/"), WebhookAdminPrefix)
		if !ok || (rest != "" && rest[0] != '/') {
			next.ServeHTTP(w, r)
			return
		}
		resp := f.serveAdmin(r, rest)
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("Date", f.e.Clock().Now().UTC().Format(http.TimeFormat))
		w.WriteHeader(resp.Status)
		_, _ = w.Write(resp.Body)
	})
}

func adminError(status int, code, msg string) fakeserver.Response {
	return fakeserver.JSON(status, map[string]any{"error": map[string]string{"code": code, "message": msg}})
}

func (f *Fake) serveAdmin(r *http.Request, rest string) fakeserver.Response {
	method := func(m string) *fakeserver.Response {
		if r.Method != m {
			resp := adminError(http.StatusMethodNotAllowed, "method_not_allowed", "method not allowed")
			return &resp
		}
		return nil
	}
	switch rest {
	case "":
		if bad := method(http.MethodGet); bad != nil {
			return *bad
		}
		return fakeserver.JSON(http.StatusOK, map[string]any{"deliveries": f.WebhookDeliveries(r.URL.Query().Get("charge_uuid"))})
	case "/deliver":
		if bad := method(http.MethodPost); bad != nil {
			return *bad
		}
		return fakeserver.JSON(http.StatusOK, map[string]any{"attempted": f.DeliverDueWebhooks()})
	case "/resend":
		if bad := method(http.MethodPost); bad != nil {
			return *bad
		}
		var in struct {
			ChargeUUID string `json:"charge_uuid"`
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
		if err != nil || json.Unmarshal(body, &in) != nil || in.ChargeUUID == "" {
			return adminError(http.StatusBadRequest, "invalid_request", `want {"charge_uuid":".."}`)
		}
		d, err := f.ResendWebhook(in.ChargeUUID)
		switch {
		case errors.Is(err, ErrUnknownCharge):
			return adminError(http.StatusNotFound, "not_found", err.Error())
		case err != nil:
			return adminError(http.StatusConflict, "no_webhook_url", err.Error())
		}
		return fakeserver.JSON(http.StatusAccepted, map[string]any{"delivery": d})
	}
	return adminError(http.StatusNotFound, "not_found", "unknown admin path")
}
