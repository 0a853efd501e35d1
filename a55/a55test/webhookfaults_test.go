package a55test_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/journal"
)

// A handler that panics leaves the event unhandled and its claim
// released, and the receiver answers 500, as for a handler's error, so
// that A55 delivers it again (an answer cut off by the panic is no 5xx);
// the panic's value is not in the error's text. The next delivery runs
// the handler again.
func TestWebhookReceiverHandlerPanicAnswers500(t *testing.T) {
	srv, c := fixedServer(t)
	in := journal.NewMemory().WithClock(srv.Clock().Now)
	var panicking atomic.Bool
	panicking.Store(true)
	var runs atomic.Int32
	rc := newReceiverOf(t, srv, in, func(ctx context.Context, n *a55.WebhookNotice) error {
		runs.Add(1)
		if panicking.Load() {
			panic("order 42: card 4111111111111111 secret-panic-value")
		}
		return nil
	})
	hs := httptest.NewServer(rc)
	t.Cleanup(hs.Close)

	ch, err := c.Charges.Create(t.Context(), hookedCharge(t, a55test.CardConfirms, "http://127.0.0.1:9/unused", true))
	require.NoError(t, err)
	ds := srv.WebhookDeliveriesFor(ch.UUID)
	require.Len(t, ds, 1)
	req, err := a55.NewSignedWebhookRequest(hs.URL+"/hooks/a55", srv.WebhookSecret(), srv.Clock().Now(), []byte(ds[0].Body))
	require.NoError(t, err)
	var res payonce.InboxResult
	require.NotPanics(t, func() { res, err = rc.Receive(req) })
	require.ErrorIs(t, err, payonce.ErrEventHandlerFailed)
	assert.Equal(t, http.StatusInternalServerError, a55.WebhookStatus(res, err))
	assert.NotContains(t, err.Error(), "4111111111111111")
	assert.NotContains(t, err.Error(), "secret-panic-value")
	var pe *a55.WebhookHandlerPanic
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "order 42: card 4111111111111111 secret-panic-value", pe.Value, "the value is there for the merchant's code")
	assert.NotEmpty(t, pe.Stack)
	stored, err := in.GetEvent(t.Context(), "a55:test", ch.UUID+"/confirmed")
	require.NoError(t, err)
	assert.False(t, stored.Handled())
	assert.Empty(t, stored.LeaseOwner, "released: the next delivery claims it at once")
	assert.NotContains(t, stored.LastError, "secret-panic-value")

	// Over HTTP, as A55 delivers: the panic is a 500, retried; the
	// retry handles the event.
	ch, err = c.Charges.Create(t.Context(), hookedCharge(t, a55test.CardConfirms, hs.URL+"/hooks/a55", true))
	require.NoError(t, err)
	srv.DeliverDueWebhooks()
	panicking.Store(false)
	srv.Clock().Advance(time.Minute)
	srv.DeliverDueWebhooks()
	ds = srv.WebhookDeliveriesFor(ch.UUID)
	require.Len(t, ds, 1)
	assert.Equal(t, []int{http.StatusInternalServerError, http.StatusNoContent}, attemptCodes(ds[0]), "the panic answered 500, not a cut connection")
	stored, err = in.GetEvent(t.Context(), "a55:test", ch.UUID+"/confirmed")
	require.NoError(t, err)
	assert.True(t, stored.Handled())
	assert.EqualValues(t, 3, runs.Load())
}

// A handler that outlives its lease (a slow database) loses the event to
// another receiver, which handles it; the first one's late success is not
// recorded (its fence is stale) and is answered 503, not 204, on every
// backend that is an inbox.
func TestWebhookReceiverLeaseExpiresMidHandler(t *testing.T) {
	for _, backend := range []string{"memory", "sqlite"} {
		t.Run(backend, func(t *testing.T) {
			srv, c := fixedServer(t)
			j := webhookJournals(t, srv.Clock().Now)[backend]
			started, finish := make(chan struct{}), make(chan struct{})
			var aRuns, bRuns atomic.Int32
			a := newReceiverOf(t, srv, j, func(ctx context.Context, n *a55.WebhookNotice) error {
				aRuns.Add(1)
				close(started)
				<-finish
				return nil
			}, a55.WithWebhookOwner("a"), a55.WithWebhookLease(time.Minute))
			b := newReceiverOf(t, srv, j, func(ctx context.Context, n *a55.WebhookNotice) error {
				bRuns.Add(1)
				assert.EqualValues(t, 2, n.Inbox.Fence)
				return nil
			}, a55.WithWebhookOwner("b"), a55.WithWebhookLease(time.Minute))

			ch, err := c.Charges.Create(t.Context(), hookedCharge(t, a55test.CardConfirms, "http://127.0.0.1:9/unused", true))
			require.NoError(t, err)
			body := []byte(srv.WebhookDeliveriesFor(ch.UUID)[0].Body)
			deliver := func(rc *a55.WebhookReceiver) (payonce.InboxResult, error) {
				req, err := a55.NewSignedWebhookRequest("http://receiver/hooks/a55", srv.WebhookSecret(), srv.Clock().Now(), body)
				require.NoError(t, err)
				return rc.Receive(req)
			}
			type answer struct {
				res payonce.InboxResult
				err error
			}
			first := make(chan answer, 1)
			go func() {
				res, err := deliver(a)
				first <- answer{res, err}
			}()
			<-started
			srv.Clock().Advance(2 * time.Minute) // a's lease passes on the journal's clock
			res, err := deliver(b)
			require.NoError(t, err)
			assert.Equal(t, payonce.InboxHandled, res.Outcome)
			close(finish)
			late := <-first
			require.Error(t, late.err)
			assert.ErrorIs(t, late.err, payonce.ErrJournalFenced)
			assert.Equal(t, http.StatusServiceUnavailable, a55.WebhookStatus(late.res, late.err))
			stored, err := j.GetEvent(t.Context(), "a55:test", ch.UUID+"/confirmed")
			require.NoError(t, err)
			assert.True(t, stored.Handled())
			assert.EqualValues(t, 2, stored.Fence, "b's claim recorded it")
			assert.EqualValues(t, 1, aRuns.Load())
			assert.EqualValues(t, 1, bRuns.Load())
		})
	}
}

// A handler's error leaves the event unhandled (500); the next delivery
// runs it again and its success is recorded once.
func TestWebhookReceiverHandlerErrorIsRetried(t *testing.T) {
	srv, c := fixedServer(t)
	in := journal.NewMemory().WithClock(srv.Clock().Now)
	var runs atomic.Int32
	rc := newReceiverOf(t, srv, in, func(ctx context.Context, n *a55.WebhookNotice) error {
		if runs.Add(1) == 1 {
			return errors.New("the orders database was away")
		}
		return nil
	})
	hs := httptest.NewServer(rc)
	t.Cleanup(hs.Close)
	ch, err := c.Charges.Create(t.Context(), hookedCharge(t, a55test.CardConfirms, hs.URL+"/hooks/a55", true))
	require.NoError(t, err)
	srv.DeliverDueWebhooks()
	srv.Clock().Advance(time.Minute)
	srv.DeliverDueWebhooks()
	ds := srv.WebhookDeliveriesFor(ch.UUID)
	require.Len(t, ds, 1)
	assert.Equal(t, []int{http.StatusInternalServerError, http.StatusNoContent}, attemptCodes(ds[0]))
	assert.EqualValues(t, 2, runs.Load())
	stored, err := in.GetEvent(t.Context(), "a55:test", ch.UUID+"/confirmed")
	require.NoError(t, err)
	assert.True(t, stored.Handled())
	assert.Equal(t, 2, stored.Attempts)
}

// A notice prints and logs with its texts redacted and without the
// delivery's headers, under every verb: they carry the delivery's
// signature (a replay within the tolerance) and whatever a proxy in
// front adds (its credentials).
func TestWebhookNoticePrintsNoHeadersOrCardData(t *testing.T) {
	srv, _ := fixedServer(t)
	in := journal.NewMemory().WithClock(srv.Clock().Now)
	var got *a55.WebhookNotice
	rc := newReceiverOf(t, srv, in, func(ctx context.Context, n *a55.WebhookNotice) error {
		got = n
		return nil
	})
	body := []byte(`{"charge_uuid":"c-print","status":"confirmed","card_number":"4111111111111111","description":"order 7"}`)
	req, err := a55.NewSignedWebhookRequest("http://receiver/hooks/a55/order-7?token=query-secret", srv.WebhookSecret(), srv.Clock().Now(), body)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer proxy-token-secret")
	_, err = rc.Receive(req)
	require.NoError(t, err)
	require.NotNil(t, got)
	sig := req.Header.Get(a55.HeaderWebhookSignature)
	var outs []string
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%d", "%x", "%q"} {
		outs = append(outs, fmt.Sprintf(verb, got), fmt.Sprintf(verb, *got))
	}
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("webhook", "notice", got)
	slog.New(slog.NewTextHandler(&buf, nil)).Info("webhook", "notice", got)
	outs = append(outs, buf.String())
	assert.Contains(t, buf.String(), "/hooks/a55/order-7", "the path names the order")
	assert.NotContains(t, buf.String(), "!ERROR")
	for _, s := range outs {
		for _, secret := range []string{sig, "proxy-token-secret", "query-secret", "4111111111111111"} {
			assert.NotContains(t, s, secret)
		}
	}
}
