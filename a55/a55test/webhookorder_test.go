package a55test_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A receiver finds the order a webhook is about from the webhook alone:
// the charge's description (the order reference) is in the event, so no
// Charges.Get is sent; a delivery replayed inside the 5-minute window (the
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
		paid[ev.Description]++
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rc.Close)

	req := hookedCharge(t, a55test.CardConfirms, rc.URL+"/hooks/a55", true)
	req.Description = "order-42"
	ch, err := c.Charges.Create(context.Background(), req)
	require.NoError(t, err)
	srv.DeliverDueWebhooks()
	before := len(srv.Requests())

	// The same signed delivery again, two minutes later: a replay.
	srv.Clock().Advance(2 * time.Minute)
	replay, err := http.NewRequest(http.MethodPost, rc.URL+"/hooks/a55", strings.NewReader(capturedBody))
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
	for i := range a55.MaxWebhookReplays + 10 {
		g.First(parse(`{"charge_uuid":"c`+strconv.Itoa(i)+`","status":"confirmed"}`, now))
	}
	assert.LessOrEqual(t, g.Len(), a55.MaxWebhookReplays)
	assert.False(t, g.First(&a55.WebhookEvent{}), "an event not from Parse has no signature: never first")
}
