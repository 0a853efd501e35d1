package a55test_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/payoncetest"
)

// A charge whose webhook_url is the fake's own resend endpoint starts no
// loop: the delivery is blocked without a connection, and a second pass
// finds nothing more to deliver.
func TestWebhookToOwnResendDoesNotLoop(t *testing.T) {
	srv, c := fixedServer(t)
	ch, err := c.Charges.Create(context.Background(), hookedCharge(t, a55test.CardConfirms, srv.URL+a55test.WebhookAdminPath+"/resend", true))
	require.NoError(t, err)
	srv.DeliverDueWebhooks()
	srv.DeliverDueWebhooks()
	d := srv.WebhookDeliveriesFor(ch.UUID)
	require.Equal(t, 1, len(d), "one charge, one event: no delivery resends another")
	assert.Equal(t, a55test.WebhookBlocked, d[0].State)
	assert.Empty(t, d[0].Attempts, "never contacted")
}

// A charge whose webhook_url is the fake's reset endpoint wipes nothing:
// the ledger and the idempotency store survive the delivery.
func TestWebhookToOwnResetWipesNothing(t *testing.T) {
	srv, c := fixedServer(t)
	key, err := payonce.NewKey(srv.Clock().Now(), "order", "reset-1", "payment")
	require.NoError(t, err)
	req := hookedCharge(t, a55test.CardConfirms, srv.URL+"/_fakepay/reset", true)
	ch, err := c.Charges.Create(context.Background(), req, payonce.WithKey(key))
	require.NoError(t, err)
	srv.DeliverDueWebhooks()
	assert.Equal(t, 1, srv.Ledger().Count(key.ID()), "the ledger was wiped")
	again, err := c.Charges.Create(context.Background(), req, payonce.WithKey(key))
	require.NoError(t, err)
	assert.Equal(t, ch.UUID, again.UUID, "the idempotency store was wiped: the key charged again")
	assert.Equal(t, 1, srv.Ledger().Count(key.ID()))
	d := srv.WebhookDeliveriesFor(ch.UUID)
	require.NotEmpty(t, d)
	assert.Equal(t, a55test.WebhookBlocked, d[0].State)
}

// The fake's own API is no webhook receiver either, under any loopback
// name, unless WithWebhookSelfDelivery asks for it; even then its admin
// API is never a target. A merchant's receiver on another loopback port
// is delivered to as ever.
func TestWebhookToOwnListenerOnlyWhenAllowed(t *testing.T) {
	srv, c := fixedServer(t)
	rc := newReceiver(t, srv, always(http.StatusOK))
	ctx := context.Background()
	for _, u := range []string{srv.URL + "/hook", strings.Replace(srv.URL, "127.0.0.1", "localhost", 1) + "/hook"} {
		ch, err := c.Charges.Create(ctx, hookedCharge(t, a55test.CardConfirms, u, true))
		require.NoError(t, err)
		srv.DeliverDueWebhooks()
		d := srv.WebhookDeliveriesFor(ch.UUID)
		require.Len(t, d, 1)
		assert.Equal(t, a55test.WebhookBlocked, d[0].State, u)
	}
	ch, err := c.Charges.Create(ctx, hookedCharge(t, a55test.CardConfirms, rc.URL+"/hook", true))
	require.NoError(t, err)
	srv.DeliverDueWebhooks()
	assert.Equal(t, a55test.WebhookDelivered, srv.WebhookDeliveriesFor(ch.UUID)[0].State)

	self, sc := fixedServer(t, a55test.WithWebhookSelfDelivery())
	ch, err = sc.Charges.Create(ctx, hookedCharge(t, a55test.CardConfirms, self.URL+"/hook", true))
	require.NoError(t, err)
	self.DeliverDueWebhooks()
	d := self.WebhookDeliveriesFor(ch.UUID)
	require.Len(t, d, 1)
	require.Len(t, d[0].Attempts, 1, "delivered to its own listener when asked")
	assert.Equal(t, http.StatusNotFound, d[0].Attempts[0].StatusCode)
	for _, p := range []string{a55test.WebhookAdminPath + "/resend", "/_fakepay/reset", "/_FAKEPAY/reset", "/%5Ffakepay/reset", "/x/../_fakepay/reset"} {
		ch, err = sc.Charges.Create(ctx, hookedCharge(t, a55test.CardConfirms, self.URL+p, true))
		require.NoError(t, err)
		self.DeliverDueWebhooks()
		d = self.WebhookDeliveriesFor(ch.UUID)
		require.Len(t, d, 1, p)
		assert.Equal(t, a55test.WebhookBlocked, d[0].State, p)
	}
}

// No charge gets more than MaxWebhooksPerCharge deliveries, however often
// it is resent: the rest are dropped, never attempted.
func TestWebhookDeliveriesPerChargeAreCapped(t *testing.T) {
	srv, c := fixedServer(t)
	rc := newReceiver(t, srv, always(http.StatusOK))
	ch, err := c.Charges.Create(context.Background(), hookedCharge(t, a55test.CardConfirms, rc.URL, true))
	require.NoError(t, err)
	for range a55test.MaxWebhooksPerCharge + 20 {
		_, err := srv.ResendWebhook(ch.UUID)
		require.NoError(t, err)
	}
	srv.DeliverDueWebhooks()
	states := map[a55test.WebhookState]int{}
	for _, d := range srv.WebhookDeliveriesFor(ch.UUID) {
		states[d.State]++
	}
	assert.Equal(t, map[a55test.WebhookState]int{a55test.WebhookDelivered: a55test.MaxWebhooksPerCharge, a55test.WebhookDropped: 21}, states)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	assert.Equal(t, a55test.MaxWebhooksPerCharge, rc.calls)
}

// A delivery that comes back to the fake by a way it cannot see (a proxy
// on another port that forwards to its admin API) is refused by the fake
// itself: the ledger survives.
func TestWebhookBackThroughAProxyIsRefused(t *testing.T) {
	srv, c := fixedServer(t)
	target, err := url.Parse(srv.URL)
	require.NoError(t, err)
	proxy := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		r.Out.URL.Path = "/_fakepay/reset" // whatever the delivery's path
	}})
	defer proxy.Close()
	key, err := payonce.NewKey(srv.Clock().Now(), "order", "proxy-1", "payment")
	require.NoError(t, err)
	ch, err := c.Charges.Create(context.Background(), hookedCharge(t, a55test.CardConfirms, proxy.URL+"/hook", true), payonce.WithKey(key))
	require.NoError(t, err)
	srv.DeliverDueWebhooks()
	assert.Equal(t, 1, srv.Ledger().Count(key.ID()), "the ledger was wiped")
	d := srv.WebhookDeliveriesFor(ch.UUID)
	require.Equal(t, 1, len(d))
	require.Len(t, d[0].Attempts, 1)
	assert.Equal(t, http.StatusForbidden, d[0].Attempts[0].StatusCode)
	assert.Equal(t, a55test.WebhookFailed, d[0].State)
}

// createRawCharge creates a charge through the fake's HTTP API, as a
// client in another language would, so that no SDK check stands between
// the webhook_url and the fake; it returns the charge's UUID.
func createRawCharge(t *testing.T, srv *a55test.Server, webhookURL string) string {
	t.Helper()
	body, err := json.Marshal(map[string]any{"amount": "1.00", "currency": "BRL", "type_charge": "credit_card", "webhook_url": webhookURL,
		"card": map[string]string{"number": a55test.CardConfirms, "holder_name": "T", "expiration_month": "12", "expiration_year": "2099", "cvv": "123"}})
	require.NoError(t, err)
	resp, err := srv.HTTPClient().Post(srv.URL+a55test.ChargePath, "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var out struct {
		UUID string `json:"charge_uuid"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	require.NotEmpty(t, out.UUID)
	return out.UUID
}

// Every other spelling of the fake's own listener (short, hex, decimal
// and octal IPv4, IPv4-mapped IPv6, localhost with a dot or in capitals,
// the unspecified addresses, an IPv6 zone) and of its admin API (escaped,
// doubled slashes, a dot segment, capitals) reaches neither: whether the
// fake refuses the URL or the address dialed, no attempt ever gets an
// answer from it. With other hosts allowed only IP literals and
// localhost are tried, which resolve without a name server.
func TestWebhookNeverReachesTheFakeUnderOtherSpellings(t *testing.T) {
	literals := []string{"[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "LOCALHOST", "0.0.0.0", "[::]", "[::1%25lo]"}
	names := []string{"127.1", "0x7f000001", "2130706433", "0177.0.0.1", "localhost.", "LocalHost."}
	for _, run := range []struct {
		opt   payoncetest.Option
		hosts []string
	}{{nil, append(literals, names...)}, {a55test.WithWebhookAnyHost(), literals}} {
		srv, _ := fixedServer(t, run.opt)
		u, err := url.Parse(srv.URL)
		require.NoError(t, err)
		for _, h := range run.hosts {
			wh := "http://" + h + ":" + u.Port() + "/hook"
			id := createRawCharge(t, srv, wh)
			srv.DeliverDueWebhooks()
			for _, d := range srv.WebhookDeliveriesFor(id) {
				assert.NotEqual(t, a55test.WebhookDelivered, d.State, wh)
				for _, a := range d.Attempts {
					assert.Zero(t, a.StatusCode, "%s reached the fake", wh)
				}
			}
		}
	}
	self, _ := fixedServer(t, a55test.WithWebhookSelfDelivery())
	for _, p := range []string{"/%5f%46akepay/reset", "/_fakepay%2freset", "//_fakepay/reset", "/./_fakepay/a55/webhooks/resend", "/_Fakepay/reset"} {
		id := createRawCharge(t, self, self.URL+p)
		self.DeliverDueWebhooks()
		d := self.WebhookDeliveriesFor(id)
		require.Len(t, d, 1, p)
		assert.Equal(t, a55test.WebhookBlocked, d[0].State, p)
		assert.Empty(t, d[0].Attempts, p)
	}
}
