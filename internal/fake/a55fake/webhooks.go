package a55fake

import (
	"bytes"
	"context"
	"crypto/hmac"
	crand "crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/payonce/payonce/internal/fake/fakeserver"
)

// Webhook defaults.
const (
	// DefaultWebhookSecret signs deliveries when Config.WebhookSecret is empty.
	DefaultWebhookSecret = "demo-webhook-secret"
	// DefaultWebhookTimeout is how long one delivery attempt may take (A55: 30 s).
	DefaultWebhookTimeout = 30 * time.Second
	// DefaultWebhookQueue is how many deliveries may wait for an attempt at once.
	DefaultWebhookQueue = 1024
	// maxWebhookRecords is how many deliveries the fake remembers; the
	// oldest finished ones go first.
	maxWebhookRecords = 10000
	// webhookPoll is how often, in real time, the delivery goroutine looks
	// at the fake clock while deliveries wait.
	webhookPoll = 10 * time.Millisecond
	// MaxWebhooksPerCharge is how many deliveries one charge gets, its
	// status changes and resends together; later events are recorded as
	// dropped and never attempted, so no charge feeds a delivery storm.
	MaxWebhooksPerCharge = 100
	// OriginHeader carries, on every delivery, a random value of the fake
	// that sent it: the fake refuses a request carrying its own (a
	// delivery that came back to it through a name, a proxy or an address
	// it does not know as its own).
	OriginHeader = "X-Fakepay-Webhook-Origin"
)

// States of a webhook delivery.
const (
	WebhookPending   = "pending"   // waiting for its next attempt
	WebhookDelivered = "delivered" // the receiver answered 2xx
	WebhookFailed    = "failed"    // a 4xx (or 3xx) answer, or every attempt failed
	WebhookBlocked   = "blocked"   // the URL is not loopback (or not http/https) and other hosts are not allowed, or it is the fake itself
	WebhookDropped   = "dropped"   // the queue was full, or the charge had had MaxWebhooksPerCharge deliveries
)

// WebhookSchedule returns when each attempt of a delivery is made, as the
// wait after the attempt before it: at once, then 1 min, 5 min, 30 min,
// 2 h, 6 h and 24 h later, on the fake clock. Only 5xx answers, timeouts
// and connection failures are retried.
func WebhookSchedule() []time.Duration {
	return []time.Duration{0, time.Minute, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 6 * time.Hour, 24 * time.Hour}
}

// WebhookAttempt is one attempt of a delivery.
type WebhookAttempt struct {
	At         time.Time `json:"at"`                    // on the fake clock
	StatusCode int       `json:"status_code,omitempty"` // the receiver's answer, 0 when none
	Error      string    `json:"error,omitempty"`       // timeout, connection refused, connection failed, blocked
}

// WebhookDelivery is one charge event and its delivery to the charge's
// webhook_url.
type WebhookDelivery struct {
	ID          string           `json:"id"`
	ChargeUUID  string           `json:"charge_uuid"`
	Status      string           `json:"status"` // the charge status the event reports
	URL         string           `json:"url"`    // scheme, host and path: never the query or user info
	State       string           `json:"state"`
	Attempts    []WebhookAttempt `json:"attempts"`
	NextAttempt time.Time        `json:"next_attempt,omitzero"` // when pending
	Body        json.RawMessage  `json:"body"`                  // the signed JSON body, the same on every attempt

	target *url.URL
}

func (d *WebhookDelivery) clone() WebhookDelivery {
	c := *d
	c.Attempts = append([]WebhookAttempt{}, d.Attempts...) // [] in JSON, never null
	c.Body = append(json.RawMessage(nil), d.Body...)
	c.target = nil
	return c
}

// webhookEvent is the body of a charge webhook: the union of the two
// payloads the charge-webhook page documents. subscription_uuid and
// payment_link_uuid are null unless the charge has one; amount and
// refund_amount are decimal strings ("199.90"); error_code and
// error_message come with a failed charge, refund_amount with a refund,
// chargeback_reason with a chargeback.
type webhookEvent struct {
	ChargeUUID       string  `json:"charge_uuid"`
	Status           string  `json:"status"`
	TransactionRef   string  `json:"transaction_reference"`
	SubscriptionUUID *string `json:"subscription_uuid"`
	PaymentLinkUUID  *string `json:"payment_link_uuid"`
	Amount           string  `json:"amount"`
	Currency         string  `json:"currency"`
	CreatedAt        string  `json:"created_at"`
	UpdatedAt        string  `json:"updated_at"`
	ErrorCode        string  `json:"error_code,omitempty"`
	ErrorMessage     string  `json:"error_message,omitempty"`
	RefundAmount     string  `json:"refund_amount,omitempty"`
	ChargebackReason string  `json:"chargeback_reason,omitempty"`
}

// newWebhookEvent is the body of c's webhook now.
func newWebhookEvent(c *charge, ev event) webhookEvent {
	p := c.places()
	out := webhookEvent{ChargeUUID: c.UUID, Status: c.Status, TransactionRef: c.TransactionRef, Amount: c.Amount.text(p),
		Currency: c.Currency, CreatedAt: c.CreatedAt.Format(time.RFC3339Nano), UpdatedAt: c.UpdatedAt.Format(time.RFC3339Nano)}
	if c.sub != nil {
		id := c.sub.UUID
		out.SubscriptionUUID = &id
	}
	if (c.Status == StatusError || c.Status == StatusDeclined) && len(c.Message) > 0 {
		out.ErrorCode, out.ErrorMessage = c.Message[0].Code, c.Message[0].Description
	}
	if ev.refund != nil {
		out.RefundAmount = ev.refund.text(p)
	}
	if strings.HasPrefix(c.Status, "chargeback") || c.Status == StatusPreChargebackResolution {
		out.ChargebackReason = c.ChargebackReason
	}
	return out
}

// webhooks delivers charge events. A goroutine runs only while deliveries
// wait; Close stops it and any attempt in flight.
type webhooks struct {
	clock     *fakeserver.Clock
	secret    func() []byte // a closure, so that no fmt verb prints it
	anyHost   bool
	allowSelf bool              // deliveries may go to the fake's own listener (never its admin API)
	self      func() []net.Addr // the fake's own listeners
	origin    string            // OriginHeader's value on this fake's deliveries
	queueMax  int
	newID     func() string
	client    *http.Client

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	pass sync.Mutex // one delivery pass at a time: a pass returns once its attempts are done

	mu      sync.Mutex
	records []*WebhookDelivery // oldest first, at most maxWebhookRecords
	pending []*WebhookDelivery
	running bool
	closed  bool
	wake    chan struct{}
}

func newWebhooks(cfg Config, clock *fakeserver.Clock, newID func() string, self func() []net.Addr) *webhooks {
	secret := []byte(cfg.WebhookSecret)
	if len(secret) == 0 {
		secret = []byte(DefaultWebhookSecret)
	}
	timeout := cfg.WebhookTimeout
	if timeout <= 0 {
		timeout = DefaultWebhookTimeout
	}
	queue := cfg.WebhookQueue
	if queue <= 0 {
		queue = DefaultWebhookQueue
	}
	var origin [16]byte
	_, _ = crand.Read(origin[:]) // never fails (crypto/rand)
	w := &webhooks{clock: clock, secret: func() []byte { return secret }, anyHost: cfg.WebhookAllowAnyHost,
		allowSelf: cfg.WebhookAllowSelf, self: self, origin: hex.EncodeToString(origin[:]),
		queueMax: queue, newID: newID, wake: make(chan struct{}, 1)}
	w.ctx, w.cancel = context.WithCancel(context.Background())
	dialer := &net.Dialer{Timeout: timeout}
	// The address dialed, after name resolution: a name that resolves
	// elsewhere cannot turn the fake into a proxy to other hosts, nor
	// into a client of itself.
	dialer.Control = func(_, address string, _ syscall.RawConn) error {
		host, port, err := net.SplitHostPort(address)
		ip := net.ParseIP(host)
		n, perr := strconv.Atoi(port)
		switch {
		case err != nil || ip == nil || perr != nil:
			return errNotLoopback
		case !w.anyHost && !ip.IsLoopback():
			return errNotLoopback
		case !w.allowSelf && w.isSelf(ip, n):
			return errSelfTarget
		}
		return nil
	}
	w.client = &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			DialContext:       dialer.DialContext,
			DisableKeepAlives: true, // no idle connection outlives a delivery
			Proxy:             nil,
		},
		// A redirect is an answer (3xx: not delivered), never followed.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return w
}

var (
	errNotLoopback = errors.New("not a loopback address")
	errSelfTarget  = errors.New("the fake's own listener")
)

// isSelf reports whether ip:port reaches one of the fake's own
// listeners: the address itself, any loopback address (or 0.0.0.0 and
// ::, which a dial takes for this host) on the port of a loopback or
// wildcard listener, or any address of this host on the port of a
// wildcard listener.
func (w *webhooks) isSelf(ip net.IP, port int) bool {
	if w.self == nil {
		return false
	}
	var local []net.Addr // this host's addresses, read once if needed
	for _, a := range w.self() {
		tcp, ok := a.(*net.TCPAddr)
		if !ok || tcp.Port != port {
			continue
		}
		switch {
		case tcp.IP.Equal(ip), (ip.IsLoopback() || ip.IsUnspecified()) && (tcp.IP.IsLoopback() || tcp.IP.IsUnspecified()):
			// 0.0.0.0 and :: dialed reach this host's own listeners.
			return true
		case tcp.IP.IsUnspecified():
			if local == nil {
				local, _ = net.InterfaceAddrs()
			}
			for _, l := range local {
				if n, ok := l.(*net.IPNet); ok && n.IP.Equal(ip) {
					return true
				}
			}
		}
	}
	return false
}

// selfTarget reports whether u names the fake itself: its admin API
// (under any host: no fake's admin API is a webhook receiver) or, unless
// self delivery is allowed, its own listener by address or as localhost.
// A host name other than localhost is checked when it is dialed.
func (w *webhooks) selfTarget(u *url.URL) bool {
	p := strings.ToLower(path.Clean("/" + u.Path))
	if admin := strings.TrimSuffix(fakeserver.AdminPrefix, "/"); p == admin || strings.HasPrefix(p, admin+"/") {
		return true
	}
	if w.allowSelf {
		return false
	}
	port, err := strconv.Atoi(u.Port())
	if u.Port() == "" {
		port, err = 80, nil
		if u.Scheme == "https" {
			port = 443
		}
	}
	if err != nil {
		return false
	}
	h := u.Hostname()
	if strings.EqualFold(h, "localhost") {
		return w.isSelf(net.IPv4(127, 0, 0, 1), port) || w.isSelf(net.IPv6loopback, port)
	}
	ip := net.ParseIP(h)
	return ip != nil && w.isSelf(ip, port)
}

// fromSelf reports whether r is one of this fake's own deliveries.
func (w *webhooks) fromSelf(r *http.Request) bool {
	v := r.Header.Get(OriginHeader)
	return v != "" && subtle.ConstantTimeCompare([]byte(v), []byte(w.origin)) == 1
}

// allowed reports whether deliveries to u may be attempted.
func (w *webhooks) allowed(u *url.URL) bool {
	if u == nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return false
	}
	if w.anyHost {
		return true
	}
	h := u.Hostname()
	ip := net.ParseIP(h)
	return strings.EqualFold(h, "localhost") || (ip != nil && ip.IsLoopback())
}

// enqueue records an event for c (its status now, with ev's extras) and
// schedules its first attempt. The
// caller holds the Fake's lock; webhooks never takes it.
func (w *webhooks) enqueue(c *charge, ev event) *WebhookDelivery {
	if c.WebhookURL == "" {
		return nil
	}
	c.webhooks++
	body := fakeserver.JSON(http.StatusOK, newWebhookEvent(c, ev)).Body
	u, err := url.Parse(c.WebhookURL)
	d := &WebhookDelivery{ID: w.newID(), ChargeUUID: c.UUID, Status: c.Status, Body: body, Attempts: []WebhookAttempt{}}
	if err == nil {
		d.target = u
		d.URL = (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
	}
	now := w.clock.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case !w.allowed(d.target), w.selfTarget(d.target):
		d.State = WebhookBlocked
	case c.webhooks > MaxWebhooksPerCharge, len(w.pending) >= w.queueMax:
		d.State = WebhookDropped
	default:
		d.State, d.NextAttempt = WebhookPending, now
		w.pending = append(w.pending, d)
		w.startLocked()
	}
	w.recordLocked(d)
	return d
}

func (w *webhooks) recordLocked(d *WebhookDelivery) {
	w.records = append(w.records, d)
	if len(w.records) <= maxWebhookRecords {
		return
	}
	for i, r := range w.records {
		if r.State != WebhookPending {
			w.records = append(w.records[:i], w.records[i+1:]...)
			return
		}
	}
}

// startLocked wakes the delivery goroutine, starting it when needed.
func (w *webhooks) startLocked() {
	if w.closed {
		return
	}
	select {
	case w.wake <- struct{}{}:
	default:
	}
	if w.running {
		return
	}
	w.running = true
	w.wg.Add(1)
	go w.loop()
}

// loop delivers what is due, then waits for the clock (polled), a new
// event or Close; it ends when nothing waits.
func (w *webhooks) loop() {
	defer w.wg.Done()
	t := time.NewTicker(webhookPoll)
	defer t.Stop()
	for {
		w.deliverDue()
		w.mu.Lock()
		if len(w.pending) == 0 || w.closed {
			w.running = false
			w.mu.Unlock()
			return
		}
		w.mu.Unlock()
		select {
		case <-w.ctx.Done():
			w.mu.Lock()
			w.running = false
			w.mu.Unlock()
			return
		case <-w.wake:
		case <-t.C:
		}
	}
}

// deliverDue makes every attempt due on the fake clock and returns how
// many it made. It waits for a pass already running, so that when it
// returns every attempt due at its call has been made.
func (w *webhooks) deliverDue() int {
	w.pass.Lock()
	defer w.pass.Unlock()
	now := w.clock.Now()
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return 0
	}
	var due []*WebhookDelivery
	for _, d := range w.pending {
		if !d.NextAttempt.After(now) {
			due = append(due, d)
		}
	}
	w.mu.Unlock()
	for _, d := range due {
		w.attempt(d)
	}
	return len(due)
}

// attempt sends d once, signed at the fake clock's time, and schedules
// the next attempt or ends the delivery.
func (w *webhooks) attempt(d *WebhookDelivery) {
	at := w.clock.Now()
	ts := strconv.FormatInt(at.Unix(), 10)
	m := hmac.New(sha256.New, w.secret())
	m.Write([]byte(ts + "."))
	m.Write(d.Body)
	rec := WebhookAttempt{At: at}
	retry := false
	req, err := http.NewRequestWithContext(w.ctx, http.MethodPost, d.target.String(), bytes.NewReader(d.Body))
	if err == nil {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("User-Agent", "payonce-fakepay-a55-webhooks")
		req.Header.Set("X-Webhook-Timestamp", ts)
		req.Header.Set("X-Webhook-Signature", hex.EncodeToString(m.Sum(nil)))
		req.Header.Set(OriginHeader, w.origin)
		var resp *http.Response
		resp, err = w.client.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			_ = resp.Body.Close()
			rec.StatusCode = resp.StatusCode
			retry = resp.StatusCode >= 500
		}
	}
	if err != nil {
		// Never err.Error(): it names the URL, query string included.
		rec.Error, retry = classifyDeliveryError(err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	d.Attempts = append(d.Attempts, rec)
	schedule := WebhookSchedule()
	switch {
	case rec.StatusCode >= 200 && rec.StatusCode < 300:
		d.State = WebhookDelivered
	case rec.Error == "blocked":
		d.State = WebhookBlocked
	case retry && len(d.Attempts) < len(schedule) && !w.closed:
		d.NextAttempt = w.clock.Now().Add(schedule[len(d.Attempts)])
		return
	default:
		d.State = WebhookFailed
	}
	d.NextAttempt = time.Time{}
	for i, p := range w.pending {
		if p == d {
			w.pending = append(w.pending[:i], w.pending[i+1:]...)
			break
		}
	}
}

// classifyDeliveryError names a failed attempt and says whether it is
// retried: timeouts and connection failures are, a blocked address not.
func classifyDeliveryError(err error) (string, bool) {
	var ne net.Error
	switch {
	case errors.Is(err, errNotLoopback), errors.Is(err, errSelfTarget):
		return "blocked", false
	case errors.Is(err, context.Canceled):
		return "canceled", false
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "timeout", true
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused", true
	}
	return "connection failed", true
}

// deliveries returns copies of the recorded deliveries, oldest first,
// those of chargeUUID only when it is not empty.
func (w *webhooks) deliveries(chargeUUID string) []WebhookDelivery {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]WebhookDelivery, 0, len(w.records))
	for _, d := range w.records {
		if chargeUUID == "" || d.ChargeUUID == chargeUUID {
			out = append(out, d.clone())
		}
	}
	return out
}

func (w *webhooks) reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.records, w.pending = nil, nil
}

// close stops the goroutine and any attempt in flight; later events are
// recorded but never attempted.
func (w *webhooks) close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	w.cancel()
	w.wg.Wait()
	w.client.CloseIdleConnections()
}
