package a55fake_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce/internal/fake/a55fake"
)

// hook is one webhook a receiver got.
type hook struct {
	header http.Header
	body   []byte
}

// receiver is a merchant's webhook endpoint on loopback.
type receiver struct {
	url string
	got chan hook
}

func newReceiver(t *testing.T) *receiver {
	t.Helper()
	rc := &receiver{got: make(chan hook, 64)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rc.got <- hook{header: r.Header.Clone(), body: b}
	}))
	t.Cleanup(srv.Close)
	rc.url = srv.URL + "/hooks/a55"
	return rc
}

// next returns the one webhook delivered by DeliverDueWebhooks, failing
// when there is none or more than one.
func (rc *receiver) next(t *testing.T, h *harness) hook {
	t.Helper()
	h.f.DeliverDueWebhooks() // when it returns, the due attempts were made
	var got hook
	select {
	case got = <-rc.got:
	default:
		t.Fatal("no webhook was delivered")
	}
	select {
	case extra := <-rc.got:
		t.Fatalf("a second webhook: %s", extra.body)
	default:
	}
	return got
}

// verify checks a webhook's signature as the charge-webhook page says:
// hex HMAC-SHA256(secret, timestamp + "." + body), the timestamp the
// fake clock's Unix seconds; and returns its body.
func verify(t *testing.T, h *harness, got hook) map[string]any {
	t.Helper()
	ts := got.header.Get("X-Webhook-Timestamp")
	assert.Equal(t, strconv.FormatInt(h.e.Clock().Now().Unix(), 10), ts)
	m := hmac.New(sha256.New, []byte(a55fake.DefaultWebhookSecret))
	m.Write([]byte(ts + "."))
	m.Write(got.body)
	assert.Equal(t, hex.EncodeToString(m.Sum(nil)), got.header.Get("X-Webhook-Signature"))
	var body map[string]any
	require.NoError(t, json.Unmarshal(got.body, &body))
	return body
}

// alwaysSent are the members every webhook carries.
var alwaysSent = []string{"charge_uuid", "status", "transaction_reference", "subscription_uuid", "payment_link_uuid",
	"amount", "currency", "created_at", "updated_at"}

// Each lifecycle transition, made from the admin API, fires exactly one
// signed webhook whose members are the reference's webhook fields, with
// the ones the event adds.
func TestEachTransitionFiresOneSignedWebhook(t *testing.T) {
	ref := loadReference(t)
	documented := map[string]bool{}
	for _, f := range ref.Webhook.Fields {
		documented[f.Name] = true
	}
	assert.ElementsMatch(t, []string{"X-Webhook-Signature", "X-Webhook-Timestamp"}, ref.Webhook.Headers)
	h := newHarness(t, a55fake.Config{})
	rc := newReceiver(t)
	threeDS := func(number string) map[string]any {
		return h.body("credit_card", with(card(number), map[string]any{"threeds_authentication": true,
			"device_info": map[string]any{"ip_address": "192.0.2.1"}, "webhook_url": rc.url}))
	}
	hooked := func(typ string, extra map[string]any) map[string]any {
		return h.body(typ, with(extra, map[string]any{"webhook_url": rc.url}))
	}
	captured := hooked("credit_card", card("4024007153763191"))
	authorised := hooked("credit_card", with(card("4024007153763191"), map[string]any{"capture": false}))
	for _, tc := range []struct {
		name   string
		body   map[string]any
		before []a55fake.Event
		event  a55fake.Event
		opt    map[string]any
		status string
		extra  map[string]any
	}{
		{"pix paid", hooked("pix", nil), nil, a55fake.EventPixPaid, nil, "paid", nil},
		{"pix expired", hooked("pix", nil), nil, a55fake.EventPixExpired, nil, "expired", nil},
		{"boleto registered", hooked("boleto", nil), nil, a55fake.EventBoletoRegistered, nil, "pending", nil},
		{"boleto paid", hooked("boleto", nil), []a55fake.Event{a55fake.EventBoletoRegistered}, a55fake.EventBoletoPaid, nil, "paid", nil},
		{"boleto expired", hooked("boleto", nil), nil, a55fake.EventBoletoExpired, nil, "canceled", nil},
		{"3ds completed", threeDS("4024007153763191"), nil, a55fake.Event3DSCompleted, nil, "confirmed", nil},
		{"3ds completed, card declined", threeDS("4024007153763192"), nil, a55fake.Event3DSCompleted, nil, "error",
			map[string]any{"error_code": "05", "error_message": "not authorized"}},
		{"3ds failed", threeDS("4024007153763191"), nil, a55fake.Event3DSFailed, nil, "error",
			map[string]any{"error_code": "3DS_FAILED", "error_message": "the cardholder failed the 3DS challenge"}},
		{"3ds abandoned", threeDS("4024007153763191"), nil, a55fake.Event3DSAbandoned, nil, "canceled", nil},
		{"partial refund", captured, nil, a55fake.EventRefund, map[string]any{"amount": "50.00"}, "confirmed",
			map[string]any{"refund_amount": "50.00"}},
		{"full refund", captured, nil, a55fake.EventRefund, nil, "refunded", map[string]any{"refund_amount": "150.00"}},
		{"pix refund", hooked("pix", nil), []a55fake.Event{a55fake.EventPixPaid}, a55fake.EventRefund, nil, "refunded",
			map[string]any{"refund_amount": "150.00"}},
		{"chargeback requested", captured, nil, a55fake.EventChargebackRequested, map[string]any{"reason": "fraud"}, "chargeback_requested",
			map[string]any{"chargeback_reason": "fraud"}},
		{"pre-chargeback resolution", captured, []a55fake.Event{a55fake.EventChargebackRequested}, a55fake.EventChargebackPreResolution,
			nil, "pre_chargeback_resolution", map[string]any{"chargeback_reason": "fraud"}},
		{"chargeback reversed", captured, []a55fake.Event{a55fake.EventChargebackRequested}, a55fake.EventChargebackReversed,
			nil, "chargeback_reversed", map[string]any{"chargeback_reason": "fraud"}},
		{"chargeback refunded", captured, []a55fake.Event{a55fake.EventChargebackRequested, a55fake.EventChargebackPreResolution},
			a55fake.EventChargebackRefunded, nil, "chargeback_refunded", map[string]any{"chargeback_reason": "fraud"}},
		{"chargeback lost", captured, nil, a55fake.EventChargebackLost, map[string]any{"reason": "product_not_received"}, "chargeback",
			map[string]any{"chargeback_reason": "product_not_received"}},
		{"chargeback lost, disputed", captured, []a55fake.Event{a55fake.EventChargebackRequested, a55fake.EventChargebackPreResolution},
			a55fake.EventChargebackLost, nil, "chargeback", map[string]any{"chargeback_reason": "fraud"}},
		{"refund failed", captured, nil, a55fake.EventRefundFailed, map[string]any{"amount": "50.00"}, "refund_error",
			map[string]any{"refund_amount": "50.00"}},
		{"refund after a failed one", captured, []a55fake.Event{a55fake.EventRefundFailed}, a55fake.EventRefund, nil, "refunded",
			map[string]any{"refund_amount": "150.00"}},
		{"capture submitted", authorised, nil, a55fake.EventCaptureSubmitted, nil, "pre_captured", nil},
		{"capture confirmed", authorised, []a55fake.Event{a55fake.EventCaptureSubmitted}, a55fake.EventCaptureConfirmed, nil, "paid", nil},
	} {
		created := h.create(t, chargePath, tc.body)
		id := created["charge_uuid"].(string)
		verify(t, h, rc.next(t, h)) // the creation's own
		for _, ev := range tc.before {
			_, err := h.f.Trigger(id, ev, a55fake.TriggerOptions{})
			require.NoError(t, err, tc.name)
			rc.next(t, h)
		}
		r := h.admin(t, http.MethodPost, "/_fakepay/a55/charges/"+id+"/events", with(tc.opt, map[string]any{"event": tc.event}))
		require.Equal(t, http.StatusOK, r.status, "%s: %s", tc.name, r.body)
		state := r.obj(t)
		assert.Equal(t, tc.status, state["status"], tc.name)
		assert.NotNil(t, state["delivery"], tc.name)
		body := verify(t, h, rc.next(t, h))
		for k := range body {
			assert.True(t, documented[k], "%s: %s is not a documented webhook field", tc.name, k)
		}
		for _, k := range alwaysSent {
			assert.Contains(t, body, k, tc.name)
		}
		assert.Equal(t, id, body["charge_uuid"])
		assert.Equal(t, tc.status, body["status"], tc.name)
		assert.Equal(t, "150.00", body["amount"], "a decimal string")
		assert.Equal(t, created["transaction_reference"], body["transaction_reference"])
		assert.Nil(t, body["payment_link_uuid"])
		for k, v := range tc.extra {
			assert.Equal(t, v, body[k], "%s: %s", tc.name, k)
		}
		for _, k := range []string{"error_code", "refund_amount", "chargeback_reason"} {
			if _, want := tc.extra[k]; !want {
				assert.NotContains(t, body, k, tc.name)
			}
		}
		got := h.do(t, http.MethodGet, chargePath+id+"/", "", nil).obj(t)
		assert.Equal(t, tc.status, got["status"], "%s: Get agrees", tc.name)
	}
}

// An event a charge does not take is refused, naming what it takes.
func TestTriggerRefusals(t *testing.T) {
	h := newHarness(t, a55fake.Config{})
	pix := h.create(t, chargePath, h.body("pix", nil))["charge_uuid"].(string)
	cardID := h.create(t, chargePath, h.body("credit_card", card("4024007153763191")))["charge_uuid"].(string)
	for _, tc := range []struct {
		id    string
		event a55fake.Event
	}{
		{cardID, a55fake.EventPixPaid}, {pix, a55fake.EventBoletoPaid}, {pix, a55fake.Event3DSCompleted},
		{pix, a55fake.EventRefund}, {cardID, a55fake.EventChargebackReversed},
		{pix, a55fake.EventRefundFailed}, {pix, a55fake.EventChargebackLost}, {cardID, a55fake.EventCaptureSubmitted},
		{cardID, a55fake.EventCaptureConfirmed}, {cardID, a55fake.EventAcquirerConfirmed}, {cardID, a55fake.EventAcquirerFailed},
	} {
		_, err := h.f.Trigger(tc.id, tc.event, a55fake.TriggerOptions{})
		var te *a55fake.TransitionError
		require.ErrorAs(t, err, &te, tc.event)
		assert.ErrorIs(t, err, a55fake.ErrEventNotAllowed)
		r := h.admin(t, http.MethodPost, "/_fakepay/a55/charges/"+tc.id+"/events", map[string]any{"event": tc.event})
		assert.Equal(t, http.StatusConflict, r.status, "%s", r.body)
		assert.Equal(t, "event_not_allowed", r.code(t))
	}
	_, err := h.f.Trigger(pix, "pix.teleported", a55fake.TriggerOptions{})
	assert.ErrorIs(t, err, a55fake.ErrUnknownEvent)
	_, err = h.f.Trigger("nope", a55fake.EventPixPaid, a55fake.TriggerOptions{})
	assert.ErrorIs(t, err, a55fake.ErrUnknownCharge)
	_, err = h.f.Trigger(pix, a55fake.EventPixPaid, a55fake.TriggerOptions{})
	require.NoError(t, err)
	_, err = h.f.Trigger(pix, a55fake.EventChargebackRequested, a55fake.TriggerOptions{})
	assert.ErrorIs(t, err, a55fake.ErrEventNotAllowed, "PIX has no chargebacks")
	_, err = h.f.Trigger(pix, a55fake.EventRefund, a55fake.TriggerOptions{Amount: "1.001"})
	assert.ErrorIs(t, err, a55fake.ErrInvalidAmount)
	r := h.admin(t, http.MethodPost, "/_fakepay/a55/charges/nope/events", map[string]any{"event": "pix.paid"})
	assert.Equal(t, http.StatusNotFound, r.status)
	r = h.admin(t, http.MethodPost, "/_fakepay/a55/charges/"+pix+"/events", map[string]any{"event": "pix.paid", "when": "now"})
	assert.Equal(t, http.StatusBadRequest, r.status, "an unknown member")

	r = h.admin(t, http.MethodGet, "/_fakepay/a55/charges/"+cardID, nil)
	require.Equal(t, http.StatusOK, r.status)
	st := r.obj(t)
	assert.Equal(t, "confirmed", st["status"])
	assert.Equal(t, []any{"refund", "refund.failed", "chargeback.requested", "chargeback.lost"}, st["events"])
	assert.Equal(t, cardID, st["charge"].(map[string]any)["charge_uuid"])

	// A lost chargeback is the end: nothing remains, nothing more happens.
	_, err = h.f.Trigger(cardID, a55fake.EventChargebackLost, a55fake.TriggerOptions{})
	require.NoError(t, err)
	got := h.admin(t, http.MethodGet, "/_fakepay/a55/charges/"+cardID, nil).obj(t)
	assert.Equal(t, "chargeback", got["status"])
	assert.Empty(t, got["events"])
	assert.Equal(t, json.Number("0.00"), got["charge"].(map[string]any)["amount_remaining"])
}

// The fake clock ends what waits: a PIX expires at its due date's end
// (24 hours after it was made when none was given), a boleto is canceled
// at its due date, a 3DS challenge is abandoned after ThreeDSTimeout;
// each with its webhook, on the clock's time.
func TestClockExpiries(t *testing.T) {
	h := newHarness(t, a55fake.Config{})
	rc := newReceiver(t)
	today := start.Format(time.DateOnly)
	pix := h.create(t, chargePath, h.body("pix", map[string]any{"due_date": today, "webhook_url": rc.url}))["charge_uuid"].(string)
	rc.next(t, h)
	boleto := h.create(t, chargePath, h.body("boleto", map[string]any{"due_date": "2030-03-15", "webhook_url": rc.url}))["charge_uuid"].(string)
	rc.next(t, h)
	guidePix := h.create(t, chargePath, `{"amount":"10.00","currency":"BRL","type_charge":"pix","webhook_url":"`+rc.url+`"}`)["charge_uuid"].(string)
	rc.next(t, h)
	threeDS := h.create(t, chargePath, h.body("credit_card", with(card("4024007153763191"), map[string]any{"threeds_authentication": true,
		"device_info": map[string]any{"ip_address": "192.0.2.1"}, "webhook_url": rc.url})))["charge_uuid"].(string)
	rc.next(t, h)

	status := func(id string) string {
		return h.do(t, http.MethodGet, chargePath+id+"/", "", nil).obj(t)["status"].(string)
	}
	steps := []struct {
		advance time.Duration
		id      string
		want    string
	}{
		{a55fake.ThreeDSTimeout - time.Second, "", ""},
		{time.Second, threeDS, "canceled"},
		{12*time.Hour - a55fake.ThreeDSTimeout - 2*time.Second, "", ""}, // 23:59:58
		{time.Second, pix, "expired"},                                   // the due date's last second
		{12*time.Hour + time.Second, guidePix, "expired"},               // 24 h after it was made
		{12*time.Hour - time.Second, boleto, "canceled"},                // 2030-03-15T23:59:59Z
	}
	for _, s := range steps {
		h.e.Clock().Advance(s.advance)
		h.f.DeliverDueWebhooks()
		if s.id == "" {
			select {
			case got := <-rc.got:
				t.Fatalf("at %s: an early webhook %s", h.e.Clock().Now(), got.body)
			default:
			}
			continue
		}
		body := verify(t, h, rc.next(t, h))
		assert.Equal(t, s.id, body["charge_uuid"])
		assert.Equal(t, s.want, body["status"])
		assert.Equal(t, s.want, status(s.id))
	}
	assert.Equal(t, "expired", status(pix))
	assert.Equal(t, "canceled", status(threeDS))
}

// Without any call, the fake notices the clock move on its own.
func TestClockExpiryInTheBackground(t *testing.T) {
	h := newHarness(t, a55fake.Config{})
	rc := newReceiver(t)
	h.create(t, chargePath, h.body("pix", map[string]any{"due_date": start.Format(time.DateOnly), "webhook_url": rc.url}))
	select {
	case <-rc.got: // the creation's own, delivered by the background goroutine
	case <-time.After(30 * time.Second): // only guards a bug
		t.Fatal("the creation's webhook never came")
	}
	h.e.Clock().Advance(13 * time.Hour)
	select {
	case got := <-rc.got:
		var body map[string]any
		require.NoError(t, json.Unmarshal(got.body, &body))
		assert.Equal(t, "expired", body["status"])
	case <-time.After(30 * time.Second): // only guards a bug
		t.Fatal("the expiry's webhook never came")
	}
}

// A canceled or evicted charge does not expire later; a reset forgets
// every timer.
func TestExpiryOnlyOfWhatStillWaits(t *testing.T) {
	h := newHarness(t, a55fake.Config{})
	rc := newReceiver(t)
	id := h.create(t, chargePath, h.body("pix", map[string]any{"webhook_url": rc.url}))["charge_uuid"].(string)
	rc.next(t, h)
	r := h.do(t, http.MethodPost, cancelPath(id, h.acct.WalletUUID), "", nil)
	require.Equal(t, http.StatusOK, r.status)
	rc.next(t, h)
	h.create(t, chargePath, h.body("pix", map[string]any{"webhook_url": rc.url}))
	rc.next(t, h)
	h.e.Reset()
	h.e.Clock().Set(start.AddDate(2, 0, 0))
	h.f.DeliverDueWebhooks()
	select {
	case got := <-rc.got:
		t.Fatalf("a webhook after cancel and reset: %s", got.body)
	default:
	}
	_, err := h.f.ChargeState(id)
	assert.True(t, errors.Is(err, a55fake.ErrUnknownCharge))
}
