package a55

import (
	"container/list"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// MaxWebhookReplays is how many signed deliveries a WebhookReplayGuard
// remembers; past it the oldest is forgotten first.
const MaxWebhookReplays = 65536

// webhookDelivery is one signed delivery: the signing time and the
// signature, which a replay of the same bytes repeats.
type webhookDelivery struct {
	signedAt  time.Time
	signature string
}

func deliveryOf(h http.Header) webhookDelivery {
	sec, err := strconv.ParseInt(strings.TrimSpace(h.Get(HeaderWebhookTimestamp)), 10, 64)
	if err != nil {
		return webhookDelivery{}
	}
	return webhookDelivery{signedAt: time.Unix(sec, 0), signature: strings.ToLower(strings.TrimSpace(h.Get(HeaderWebhookSignature)))}
}

// WebhookReplayGuard tells the first arrival of a signed delivery from a
// replay of it: a signed request captured and sent again verifies until
// its timestamp leaves WebhookTolerance, so for that long the guard
// remembers the signature of every event First saw. It is one process's
// memory (at most MaxWebhookReplays deliveries, the oldest forgotten
// first): a WebhookReceiver's inbox, keyed by WebhookEvent.Key, is what
// tells a redelivery (signed afresh, a new signature) across a fleet.
// Safe for concurrent use.
type WebhookReplayGuard struct {
	now func() time.Time

	mu    sync.Mutex
	seen  map[string]*list.Element // signature -> element of order
	order *list.List               // of webhookDelivery, in arrival order
}

// NewWebhookReplayGuard returns a guard reading the time from now
// (time.Now when nil): use the verifier's clock.
func NewWebhookReplayGuard(now func() time.Time) *WebhookReplayGuard {
	if now == nil {
		now = time.Now
	}
	return &WebhookReplayGuard{now: now, seen: map[string]*list.Element{}, order: list.New()}
}

// First reports whether ev, an event WebhookVerifier.Parse returned, is
// the first arrival of its signed delivery in the window; false for a
// replay, and for an event that did not come from Parse (it carries no
// signature to tell).
func (g *WebhookReplayGuard) First(ev *WebhookEvent) bool {
	if ev == nil || ev.delivery.signature == "" {
		return false
	}
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	g.expire(now)
	if _, ok := g.seen[ev.delivery.signature]; ok {
		return false
	}
	for g.order.Len() >= MaxWebhookReplays {
		g.forget(g.order.Front())
	}
	g.seen[ev.delivery.signature] = g.order.PushBack(ev.delivery)
	return true
}

// Len is how many deliveries the guard remembers.
func (g *WebhookReplayGuard) Len() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.order.Len()
}

// expire forgets, from the oldest arrival on, the deliveries signed more
// than twice the tolerance ago (the verifier refuses them); it stops at
// the first younger one, since the verifier lets deliveries arrive in
// signing order give or take the tolerance. The caller holds mu.
func (g *WebhookReplayGuard) expire(now time.Time) {
	for e := g.order.Front(); e != nil && now.Sub(e.Value.(webhookDelivery).signedAt) > 2*WebhookTolerance; e = g.order.Front() {
		g.forget(e)
	}
}

func (g *WebhookReplayGuard) forget(e *list.Element) {
	delete(g.seen, e.Value.(webhookDelivery).signature)
	g.order.Remove(e)
}
