package a55test_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/internal/corekit"
	"github.com/payonce/payonce/payoncetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	c, err := srv.Client(payonce.WithRetryPolicy(payonce.FastRetryPolicy()))
	require.NoError(t, err)
	return srv, c
}

func hookedCharge(t *testing.T, number, url string, capture bool) *a55.ChargeCreateRequest {
	t.Helper()
	amount, err := payonce.ParseAmount("100.00")
	require.NoError(t, err)
	r := &a55.ChargeCreateRequest{Amount: amount, Currency: payonce.BRL, TypeCharge: a55.TypeCreditCard, WebhookURL: url,
		Card: &payonce.Card{Number: payonce.CardNumber(number), HolderName: "TEST", ExpirationMonth: "12", ExpirationYear: "2099", CVV: "123"}}
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
	_, err = c.Charges.Refund(ctx, &a55.RefundRequest{ChargeUUID: ch.UUID, Amount: half}) // no status change
	require.NoError(t, err)
	_, err = c.Charges.Refund(ctx, &a55.RefundRequest{ChargeUUID: ch.UUID})
	require.NoError(t, err)
	// A declined charge exists too, with status error.
	_, err = c.Charges.Create(ctx, hookedCharge(t, a55test.TestCard(2), rc.URL, true))
	require.ErrorIs(t, err, payonce.ErrCardDeclined)

	srv.DeliverDueWebhooks()
	assert.Equal(t, []a55.Status{a55.StatusPending, a55.StatusConfirmed, a55.StatusRefunded, a55.StatusError}, rc.statuses())
	assert.Zero(t, rc.bad, "every delivery verifies with a55.WebhookVerifier")
	assert.Equal(t, "whsec-test-1", srv.WebhookSecret())
	for _, d := range srv.WebhookDeliveries() {
		assert.Equal(t, a55test.WebhookDelivered, d.State)
		require.Len(t, d.Attempts, 1)
		assert.Equal(t, http.StatusOK, d.Attempts[0].StatusCode)
		assert.True(t, d.NextAttempt.IsZero())
		assert.NotContains(t, string(d.Body), "4111111111111111")
	}
	ev := rc.events[3]
	assert.Contains(t, string(ev.Raw), `"error_code":"05"`)
	assert.Equal(t, ch.UUID, rc.events[0].ChargeUUID)
	assert.Equal(t, ch.WalletUUID, rc.events[0].WalletUUID)
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
		// The client refuses such a webhook_url before sending anything;
		// the fake blocks it too, for a request sent without the client.
		_, err := c.Charges.Create(ctx, hookedCharge(t, a55test.CardConfirms, u, true))
		require.ErrorIs(t, err, payonce.ErrInvalidRequest, u)
		body, err := corekit.MarshalWire(hookedCharge(t, a55test.CardConfirms, u, true))
		require.NoError(t, err)
		req, err := http.NewRequest(http.MethodPost, srv.URL+a55.PathCharges, bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+srv.IssueToken())
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(payonce.HeaderIdempotencyKey, uuid.NewString())
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		var ch struct {
			UUID string `json:"charge_uuid"`
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&ch))
		_ = resp.Body.Close()
		require.Less(t, resp.StatusCode, 300, u)
		require.NotEmpty(t, ch.UUID, u)
		srv.DeliverDueWebhooks()
		d := srv.WebhookDeliveriesFor(ch.UUID)
		require.Len(t, d, 1, u)
		assert.Equal(t, a55test.WebhookBlocked, d[0].State, u)
		assert.Empty(t, d[0].Attempts, u)
	}
	// localhost is loopback.
	rc := newReceiver(t, srv, always(http.StatusOK))
	local := strings.Replace(rc.URL, "127.0.0.1", "localhost", 1)
	ch, err := c.Charges.Create(ctx, hookedCharge(t, a55test.CardConfirms, local, true))
	require.NoError(t, err)
	srv.DeliverDueWebhooks()
	assert.Equal(t, a55test.WebhookDelivered, srv.WebhookDeliveriesFor(ch.UUID)[0].State)
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
	c, err := srv.Client(payonce.WithRetryPolicy(payonce.FastRetryPolicy()))
	require.NoError(t, err)
	ch, err := c.Charges.Create(context.Background(), hookedCharge(t, a55test.CardConfirms, rc.URL, true))
	require.NoError(t, err)
	srv.DeliverDueWebhooks()
	srv.Close()
	c.Core().HTTPClient().CloseIdleConnections()
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
