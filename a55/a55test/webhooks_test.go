package a55test_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/payoncetest"
)

// receiver is a merchant's webhook endpoint that verifies every delivery
// with the SDK's verifier and answers what status(n) says for the nth call.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	events []*a55.WebhookEvent
	bad    int // deliveries that failed verification
	calls  int
}

func newReceiver(t *testing.T, srv *a55test.Server, status func(n int) int) *receiver {
	t.Helper()
	v, err := srv.WebhookVerifier()
	require.NoError(t, err)
	rc := &receiver{}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ev, err := v.Parse(r)
		rc.mu.Lock()
		rc.calls++
		n := rc.calls
		if err != nil {
			rc.bad++
		} else {
			rc.events = append(rc.events, ev)
		}
		rc.mu.Unlock()
		w.WriteHeader(status(n))
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) statuses() []a55.Status {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := []a55.Status{}
	for _, e := range rc.events {
		out = append(out, e.Status)
	}
	return out
}

func always(code int) func(int) int { return func(int) int { return code } }

func fixedServer(t *testing.T, opts ...payoncetest.Option) (*a55test.Server, *a55.Client) {
	t.Helper()
	clk := payoncetest.NewFixedClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	srv := a55test.New(t, append([]payoncetest.Option{payoncetest.WithClock(clk)}, opts...)...)
	c, err := srv.Client(payonce.WithRetryPolicy(payoncetest.FastRetryPolicy()))
	require.NoError(t, err)
	return srv, c
}

func hookedCharge(t *testing.T, number, url string, capture bool) *a55.ChargeCreateRequest {
	t.Helper()
	amount, err := payonce.ParseAmount("100.00")
	require.NoError(t, err)
	r := a55test.Complete(&a55.ChargeCreateRequest{InstallmentValue: amount, Currency: payonce.BRL, TypeCharge: a55.TypeCreditCard, WebhookURL: url,
		Card: &payonce.Card{Number: payonce.CardNumber(number), HolderName: "TEST", ExpirationMonth: "12", ExpirationYear: "2099", CVV: "123"}})
	if !capture {
		r.Capture = a55.Bool(false)
	}
	return r
}

// deliveredOnce creates a charge whose receiver always answers status and
// makes the first delivery attempt.
func deliveredOnce(t *testing.T, status int) (*a55test.Server, *receiver, *a55.Charge) {
	t.Helper()
	srv, c := fixedServer(t)
	rc := newReceiver(t, srv, always(status))
	ch, err := c.Charges.Create(context.Background(), hookedCharge(t, a55test.CardConfirms, rc.URL, true))
	require.NoError(t, err)
	srv.DeliverDueWebhooks()
	return srv, rc, ch
}

func TestWebhookOnEveryStatusChangeVerifies(t *testing.T) {
	srv, c := fixedServer(t, a55test.WithWebhookSecret("whsec-test-1"))
	rc := newReceiver(t, srv, always(http.StatusOK))
	ctx := context.Background()

	ch, err := c.Charges.Create(ctx, hookedCharge(t, a55test.CardConfirms, rc.URL, false))
	require.NoError(t, err)
	half, _ := payonce.ParseAmount("40.00")
	_, err = c.Charges.Capture(ctx, &a55.CaptureRequest{ChargeUUID: ch.UUID})
	require.NoError(t, err)
	// A partial refund keeps the status and is told with its refund_amount.
	_, err = c.Charges.Refund(ctx, &a55.RefundRequest{ChargeUUID: ch.UUID, Amount: half})
	require.NoError(t, err)
	_, err = c.Charges.Refund(ctx, &a55.RefundRequest{ChargeUUID: ch.UUID})
	require.NoError(t, err)
	// A declined charge exists too, with status error.
	_, err = c.Charges.Create(ctx, hookedCharge(t, a55test.TestCard(2), rc.URL, true))
	require.ErrorIs(t, err, a55.ErrCardDeclined)

	srv.DeliverDueWebhooks()
	// An authorisation is confirmed with nothing captured, its capture
	// paid (A55's status-lifecycle page).
	assert.Equal(t, []a55.Status{a55.StatusConfirmed, a55.StatusPaid, a55.StatusPaid, a55.StatusRefunded, a55.StatusError}, rc.statuses())
	assert.Zero(t, rc.bad, "every delivery verifies with a55.WebhookVerifier")
	assert.Equal(t, "whsec-test-1", srv.WebhookSecret())
	for _, d := range srv.WebhookDeliveries() {
		assert.Equal(t, a55test.WebhookDelivered, d.State)
		require.Len(t, d.Attempts, 1)
		assert.Equal(t, http.StatusOK, d.Attempts[0].StatusCode)
		assert.True(t, d.NextAttempt.IsZero())
		assert.NotContains(t, string(d.Body), "4111111111111111")
	}
	ev := rc.events[4]
	assert.Contains(t, string(ev.Raw), `"error_code":"05"`)
	assert.Contains(t, string(rc.events[2].Raw), `"refund_amount":"40.00"`)
	assert.Equal(t, ch.UUID, rc.events[0].ChargeUUID)
	assert.Equal(t, "100.00", rc.events[0].Amount.String())

	// Another secret does not verify.
	other, err := a55.NewWebhookVerifier("another-secret", srv.Clock().Now)
	require.NoError(t, err)
	d := srv.WebhookDeliveries()[0]
	h := a55.SignWebhook("whsec-test-1", d.Attempts[0].At, d.Body)
	require.NoError(t, a55.VerifyWebhook("whsec-test-1", h, d.Body, srv.Clock().Now()))
	require.ErrorIs(t, other.Verify(h, d.Body), a55.ErrWebhookSignature)
}

// The whole schedule, on the fake clock only: nothing is retried before
// its time, each retry happens once its time comes, and the seventh
// failure ends the delivery.
func TestWebhookRetryScheduleFollowsTheFakeClock(t *testing.T) {
	srv, rc, ch := deliveredOnce(t, http.StatusServiceUnavailable)

	waits := []time.Duration{time.Minute, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 6 * time.Hour, 24 * time.Hour}
	for i, wait := range waits {
		d := srv.WebhookDeliveriesFor(ch.UUID)[0]
		require.Equal(t, a55test.WebhookPending, d.State)
		require.Len(t, d.Attempts, i+1)
		assert.Equal(t, http.StatusServiceUnavailable, d.Attempts[i].StatusCode)
		require.Equal(t, wait, d.NextAttempt.Sub(d.Attempts[i].At), "wait before attempt %d", i+2)

		srv.Clock().Advance(wait - time.Second)
		assert.Zero(t, srv.DeliverDueWebhooks(), "not due yet")
		require.Len(t, srv.WebhookDeliveriesFor(ch.UUID)[0].Attempts, i+1)
		srv.Clock().Advance(time.Second)
		srv.DeliverDueWebhooks() // the attempt is made (by this call or the background goroutine)
	}
	d := srv.WebhookDeliveriesFor(ch.UUID)[0]
	assert.Equal(t, a55test.WebhookFailed, d.State)
	assert.Len(t, d.Attempts, 7)
	assert.True(t, d.NextAttempt.IsZero())
	srv.Clock().Advance(48 * time.Hour)
	assert.Zero(t, srv.DeliverDueWebhooks())
	assert.Equal(t, 7, len(rc.statuses()))
}

func TestWebhookClientErrorIsNotRetried(t *testing.T) {
	srv, _, ch := deliveredOnce(t, http.StatusBadRequest)
	d := srv.WebhookDeliveriesFor(ch.UUID)[0]
	assert.Equal(t, a55test.WebhookFailed, d.State)
	assert.Len(t, d.Attempts, 1)
	srv.Clock().Advance(time.Hour)
	assert.Zero(t, srv.DeliverDueWebhooks())
}

func TestWebhookTimeoutAndRefusedConnectionAreRetried(t *testing.T) {
	// The slow receiver never answers, so any timeout reads "timeout";
	// 1 s leaves the refused dial ample time to be reported as refused
	// on a loaded machine.
	srv, c := fixedServer(t, a55test.WithWebhookTimeout(time.Second))
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(slow.Close)
	t.Cleanup(func() { close(release) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	refused := "http://" + ln.Addr().String() + "/hook?token=s3cret-query"
	require.NoError(t, ln.Close())

	ctx := context.Background()
	a, err := c.Charges.Create(ctx, hookedCharge(t, a55test.CardConfirms, slow.URL, true))
	require.NoError(t, err)
	b, err := c.Charges.Create(ctx, hookedCharge(t, a55test.CardConfirms, refused, true))
	require.NoError(t, err)
	srv.DeliverDueWebhooks()

	da := srv.WebhookDeliveriesFor(a.UUID)[0]
	assert.Equal(t, a55test.WebhookPending, da.State)
	assert.Equal(t, "timeout", da.Attempts[0].Error)
	db := srv.WebhookDeliveriesFor(b.UUID)[0]
	assert.Equal(t, a55test.WebhookPending, db.State)
	assert.Equal(t, "connection refused", db.Attempts[0].Error)
	assert.NotContains(t, db.URL, "s3cret", "the record never holds the query string")
	raw, err := json.Marshal(srv.WebhookDeliveries())
	require.NoError(t, err)
	assert.NotContains(t, string(raw), "s3cret")
}

// The fake posts only to loopback: another host is never contacted.
func TestWebhookOnlyToLoopbackUnlessAllowed(t *testing.T) {
	srv, c := fixedServer(t)
	ctx := context.Background()
	for _, u := range []string{"http://192.0.2.1/hook", "http://example.com/hook", "http://[::ffff:192.0.2.1]/hook",
		"ftp://127.0.0.1/hook", "not a url\x7f"} {
		// The client refuses such a webhook_url before sending anything.
		_, err := c.Charges.Create(ctx, hookedCharge(t, a55test.CardConfirms, u, true))
		require.ErrorIs(t, err, payonce.ErrInvalidRequest, u)
	}
	// localhost is loopback.
	rc := newReceiver(t, srv, always(http.StatusOK))
	local := strings.Replace(rc.URL, "127.0.0.1", "localhost", 1)
	ch, err := c.Charges.Create(ctx, hookedCharge(t, a55test.CardConfirms, local, true))
	require.NoError(t, err)
	srv.DeliverDueWebhooks()
	assert.Equal(t, a55test.WebhookDelivered, srv.WebhookDeliveriesFor(ch.UUID)[0].State)
}

// A request sent without the client: the fake refuses a webhook_url that
// is not https (or plain http to loopback) with 422 naming it, and
// blocks, never contacting it, an https one to a host that is not
// loopback.
func TestWebhookURLRulesOfTheFake(t *testing.T) {
	srv, _ := fixedServer(t)
	for _, u := range []string{"http://192.0.2.1/hook", "http://example.com/hook", "http://[::ffff:192.0.2.1]/hook",
		"ftp://127.0.0.1/hook", "not a url\x7f", "/hooks/a55"} {
		body, err := json.Marshal(map[string]any{"amount": "1.00", "currency": "BRL", "type_charge": "pix", "webhook_url": u})
		require.NoError(t, err)
		resp, err := srv.HTTPClient().Post(srv.URL+a55test.ChargePath, "application/json", bytes.NewReader(body))
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		assert.Equal(t, http.StatusUnprocessableEntity, resp.StatusCode, u)
		assert.Contains(t, string(b), `"field":"webhook_url"`, u)
	}
	for _, u := range []string{"https://192.0.2.1/hook", "https://example.com/hook", "https://[::ffff:192.0.2.1]/hook"} {
		id := createRawCharge(t, srv, u)
		srv.DeliverDueWebhooks()
		d := srv.WebhookDeliveriesFor(id)
		require.Len(t, d, 1, u)
		assert.Equal(t, a55test.WebhookBlocked, d[0].State, u)
		assert.Empty(t, d[0].Attempts, u)
	}
}

func TestWebhookAdminResend(t *testing.T) {
	srv, c := fixedServer(t)
	rc := newReceiver(t, srv, always(http.StatusOK))
	ctx := context.Background()
	ch, err := c.Charges.Create(ctx, hookedCharge(t, a55test.CardConfirms, rc.URL, true))
	require.NoError(t, err)
	plain, err := c.Charges.Create(ctx, hookedCharge(t, a55test.CardConfirms, "", true))
	require.NoError(t, err)

	post := func(path, body string) (int, map[string]any) {
		resp, err := http.Post(srv.URL+path, "application/json", bytes.NewReader([]byte(body)))
		require.NoError(t, err)
		defer resp.Body.Close()
		var out map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
		return resp.StatusCode, out
	}
	code, out := post(a55test.WebhookAdminPath+"/resend", `{"charge_uuid":"`+ch.UUID+`"}`)
	require.Equal(t, http.StatusAccepted, code, out)
	code, _ = post(a55test.WebhookAdminPath+"/resend", `{"charge_uuid":"no-such-charge"}`)
	assert.Equal(t, http.StatusNotFound, code)
	code, _ = post(a55test.WebhookAdminPath+"/resend", `{"charge_uuid":"`+plain.UUID+`"}`)
	assert.Equal(t, http.StatusConflict, code)
	code, _ = post(a55test.WebhookAdminPath+"/resend", `nope`)
	assert.Equal(t, http.StatusBadRequest, code)
	code, out = post(a55test.WebhookAdminPath+"/deliver", ``)
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, out, "attempted") // the background goroutine may have been first

	resp, err := http.Get(srv.URL + a55test.WebhookAdminPath + "?charge_uuid=" + ch.UUID)
	require.NoError(t, err)
	defer resp.Body.Close()
	var list struct {
		Deliveries []a55test.WebhookDelivery `json:"deliveries"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&list))
	require.Len(t, list.Deliveries, 2)
	assert.Equal(t, a55test.WebhookDelivered, list.Deliveries[1].State)
	assert.Equal(t, []a55.Status{a55.StatusConfirmed, a55.StatusConfirmed}, rc.statuses())
	// The engine's admin API is still served behind the webhook calls.
	resp2, err := http.Get(srv.URL + "/_fakepay/stats")
	require.NoError(t, err)
	resp2.Body.Close()
	assert.Equal(t, http.StatusOK, resp2.StatusCode)
}

// Close stops the delivery goroutine even while deliveries wait for a
// retry, and nothing is attempted afterwards.
func TestWebhookCloseStopsDeliveries(t *testing.T) {
	before := runtime.NumGoroutine()
	clk := payoncetest.NewFixedClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	srv := a55test.NewServer(payoncetest.WithClock(clk))
	rc := newReceiver(t, srv, always(http.StatusInternalServerError))
	c, err := srv.Client(payonce.WithRetryPolicy(payoncetest.FastRetryPolicy()))
	require.NoError(t, err)
	ch, err := c.Charges.Create(context.Background(), hookedCharge(t, a55test.CardConfirms, rc.URL, true))
	require.NoError(t, err)
	srv.DeliverDueWebhooks()
	srv.Close()
	c.Core().Settings().HTTPClient.CloseIdleConnections()
	clk.Advance(time.Hour)
	assert.Zero(t, srv.DeliverDueWebhooks())
	assert.Len(t, srv.WebhookDeliveriesFor(ch.UUID)[0].Attempts, 1)
	rc.Close()
	// Polled by hand: assert.Eventually runs its condition on goroutines
	// of its own.
	deadline := time.Now().Add(30 * time.Second) // bounds a leak; exits take milliseconds
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<16)
		t.Fatalf("goroutines: %d before, %d after:\n%s", before, n, buf[:runtime.Stack(buf, true)])
	}
}

// A webhook delivery prints its values with %+v: never an address, and
// its body as text, not a list of byte values.
func TestWebhookDeliveryPrintsWell(t *testing.T) {
	d := a55test.WebhookDelivery{ID: "wh_1", ChargeUUID: "c1", Status: "confirmed", URL: "https://merchant.example/hook",
		State: a55test.WebhookState("delivered"), Attempts: []a55test.WebhookAttempt{{StatusCode: 200}},
		Body: json.RawMessage(`{"charge_uuid":"c1"}`)}
	for _, v := range []any{d, &d, []a55test.WebhookDelivery{d}} {
		out := fmt.Sprintf("%+v", v)
		assert.NotContains(t, out, "0x", out)
		assert.NotContains(t, out, "[123 34", out)
		assert.Contains(t, out, `{"charge_uuid":"c1"}`)
	}
}

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
	assert.Equal(t, 1, srv.Ledger().Count(key.String()), "the ledger was wiped")
	again, err := c.Charges.Create(context.Background(), req, payonce.WithKey(key))
	require.NoError(t, err)
	assert.Equal(t, ch.UUID, again.UUID, "the idempotency store was wiped: the key charged again")
	assert.Equal(t, 1, srv.Ledger().Count(key.String()))
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
	assert.Equal(t, 1, srv.Ledger().Count(key.String()), "the ledger was wiped")
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
			// https: the fake refuses plain http to a host that is not
			// loopback as a webhook_url (422) before any delivery.
			wh := "https://" + h + ":" + u.Port() + "/hook"
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

// A webhook_url over plain http:// to a host that is not loopback would
// have the provider POST every signed status change of the charge in
// clear text: Create refuses it before anything is sent, tricky hosts that
// only look like loopback included. https:// and loopback http:// pass.
func TestChargeWebhookURLPlainHTTPToNonLoopbackIsRefused(t *testing.T) {
	for _, url := range []string{
		"http://merchant.example/hooks/a55",
		"HTTP://merchant.example/hooks/a55",
		"http://localhost.evil.com/hook",
		"http://127.0.0.1.nip.io/hook",
		"http://0x7f.1/hook",
		"http://2130706433/hook",
		"//merchant.example/hook",
		"/hooks/a55",
		"ftp://merchant.example/hook",
		"https:///hook",
	} {
		srv, c := fixedServer(t)
		_, err := c.Charges.Create(context.Background(), hookedCharge(t, a55test.CardConfirms, url, true))
		require.ErrorIs(t, err, payonce.ErrInvalidRequest, url)
		assert.Contains(t, err.Error(), "webhook_url", url)
		assert.NotEmpty(t, payonce.KeyOf(err).String(), "the refusal carries the key: %s", url)
		assert.NotContains(t, err.Error(), "example", "the URL itself is never in the error: "+url)
		assert.Empty(t, srv.Requests(), "nothing sent: %s", url)
	}
	for _, url := range []string{"", "https://merchant.example/hooks/a55?token=x", "http://127.0.0.1:9/hook", "http://localhost:9/hook", "http://[::1]:9/hook"} {
		_, c := fixedServer(t)
		_, err := c.Charges.Create(context.Background(), hookedCharge(t, a55test.CardConfirms, url, true))
		require.NoError(t, err, url)
	}
}

// A receiver finds the order a webhook is about from the webhook alone:
// the charge's own webhook_url path names the order, so no Charges.Get
// is sent; a delivery replayed inside the 5-minute window (the
// same signed bytes) is told apart from a new one by the replay guard,
// and a redelivery (signed afresh) by the event's key.
func TestWebhookNamesTheOrderAndReplaysAreDeduplicated(t *testing.T) {
	srv, c := fixedServer(t)
	v, err := srv.WebhookVerifier()
	require.NoError(t, err)
	guard := a55.NewWebhookReplayGuard(srv.Clock().Now)
	var mu sync.Mutex
	paid := map[string]int{} // order -> times acted on
	seenEvents := map[string]bool{}
	var captured *http.Request
	var capturedBody string
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		if captured == nil {
			captured, capturedBody = r.Clone(context.Background()), string(body)
		}
		mu.Unlock()
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		ev, err := v.Parse(r)
		if err != nil {
			http.Error(w, "unverified", http.StatusUnauthorized)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if !guard.First(ev) || seenEvents[ev.Key()] {
			w.WriteHeader(http.StatusOK) // a replay or a redelivery: acknowledge, do nothing
			return
		}
		seenEvents[ev.Key()] = true
		order := ev.Description
		if order == "" { // A55's webhook body has no description: the path names the order
			order = strings.TrimPrefix(r.URL.Path, "/hooks/a55/")
		}
		paid[order]++
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rc.Close)

	req := hookedCharge(t, a55test.CardConfirms, rc.URL+"/hooks/a55/order-42", true)
	req.Description = "order-42"
	ch, err := c.Charges.Create(context.Background(), req)
	require.NoError(t, err)
	srv.DeliverDueWebhooks()
	before := len(srv.Requests())

	// The same signed delivery again, two minutes later: a replay.
	srv.Clock().Advance(2 * time.Minute)
	replay, err := http.NewRequest(http.MethodPost, rc.URL+"/hooks/a55/order-42", strings.NewReader(capturedBody))
	require.NoError(t, err)
	replay.Header = captured.Header.Clone()
	resp, err := http.DefaultClient.Do(replay)
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode, "acknowledged, not acted on")

	// A55 delivering the same event again, signed afresh.
	_, err = srv.ResendWebhook(ch.UUID)
	require.NoError(t, err)
	srv.DeliverDueWebhooks()

	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, map[string]int{"order-42": 1}, paid, "the order, found from the webhook, acted on once")
	assert.Equal(t, before, len(srv.Requests()), "no Charges.Get to find the order")
}

// The replay guard remembers a signature for the verifier's tolerance on
// both sides and no longer, and holds at most MaxWebhookReplays of them.
func TestWebhookReplayGuardIsBounded(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	g := a55.NewWebhookReplayGuard(clock)
	v, err := a55.NewWebhookVerifier("whsec-test", clock)
	require.NoError(t, err)
	parse := func(body string, signed time.Time) *a55.WebhookEvent {
		r, err := a55.NewSignedWebhookRequest("http://127.0.0.1/hooks", "whsec-test", signed, []byte(body))
		require.NoError(t, err)
		ev, err := v.Parse(r)
		require.NoError(t, err)
		return ev
	}
	ev := parse(`{"charge_uuid":"c1","status":"confirmed"}`, now)
	assert.True(t, g.First(ev))
	assert.False(t, g.First(ev), "the same signed bytes again")
	assert.True(t, g.First(parse(`{"charge_uuid":"c1","status":"confirmed"}`, now.Add(-time.Second))), "signed afresh: not a replay (Key tells the duplicate)")
	now = now.Add(2*a55.WebhookTolerance + time.Second)
	assert.True(t, g.First(ev), "past the window the verifier refuses it anyway; the guard forgot it")
	for i := range 10 {
		assert.True(t, g.First(parse(`{"charge_uuid":"c`+strconv.Itoa(i)+`","status":"confirmed"}`, now)))
	}
	assert.Equal(t, 10, g.Len(), "the deliveries signed inside the window, those before it forgotten (the bound: TestWebhookReplayGuardForgetsTheOldestPastItsBound)")
	assert.False(t, g.First(&a55.WebhookEvent{}), "an event not from Parse has no signature: never first")
}
